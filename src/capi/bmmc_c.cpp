// The C API (include/bmmc/bmmc.h) over the C++ front door: handles wrap a Bmmc and a Permuter, and every
// entry point runs its body inside guarded(), which turns each exception into a status and the calling
// thread's last-error text, so that no exception crosses into C. Arguments the C++ API cannot see (null
// handles and out-pointers, enum values, the size of a caller's text buffer) are checked here, before
// the C++ call; everything else the front door checks itself before it writes.
#include "bmmc/bmmc.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/core/spec.hpp"
#include "bmmc/permute.hpp"
#if BMMC_HAS_CUDA
#include "bmmc/cuda/error.hpp"
#endif

namespace {

constexpr std::uint32_t kMapMagic = 0x626d6d61;       // "bmma"
constexpr std::uint32_t kPermuterMagic = 0x626d7065;  // "bmpe"

}  // namespace

struct bmmcMap_st {
  std::uint32_t magic = kMapMagic;  // catches a permuter (or a destroyed map) passed as a map
  bmmc::Bmmc bmmc;
};

struct bmmcPermuter_st {
  std::uint32_t magic = kPermuterMagic;
  bmmc::Permuter permuter;
  std::string kernel_name;  // kept so that bmmcPermuterGetKernelName can hand out a pointer
};

namespace {

/// A failure with the status it maps to, for the checks made here rather than by the C++ API.
struct StatusError : std::runtime_error {
  StatusError(bmmcStatus_t status, const std::string& message) : std::runtime_error(message), status(status) {}
  bmmcStatus_t status;
};

[[noreturn]] void fail(bmmcStatus_t status, const std::string& message) { throw StatusError(status, message); }

thread_local std::string last_message;
thread_local int last_column = 0;

void set_error(const char* prefix, const char* what) noexcept {
  try {
    last_message = prefix;
    last_message += what;
  } catch (...) {
    last_message.clear();  // no memory even for the text: the status alone must do
  }
}

bmmcStatus_t status_of_current_exception() noexcept {
  try {
    throw;
  } catch (const StatusError& e) {
    set_error("", e.what());
    return e.status;
  } catch (const bmmc::SpecError& e) {
    set_error("", e.what());
    last_column = e.column();
    return BMMC_STATUS_INVALID_SPEC;
  } catch (const std::invalid_argument& e) {
    set_error("", e.what());
    return BMMC_STATUS_INVALID_ARGUMENT;
  } catch (const std::bad_alloc& e) {
    set_error("out of host memory: ", e.what());
    return BMMC_STATUS_OUT_OF_MEMORY;
#if BMMC_HAS_CUDA
  } catch (const bmmc::CudaError& e) {
    set_error("", e.what());
    return e.code() == cudaErrorMemoryAllocation ? BMMC_STATUS_OUT_OF_MEMORY : BMMC_STATUS_CUDA_ERROR;
  } catch (const bmmc::NvrtcError& e) {
    set_error("", e.what());
    return BMMC_STATUS_NVRTC_ERROR;
#endif
  } catch (const std::exception& e) {
    set_error("internal error: ", e.what());
    return BMMC_STATUS_INTERNAL_ERROR;
  } catch (...) {
    set_error("internal error: ", "an exception of unknown type");
    return BMMC_STATUS_INTERNAL_ERROR;
  }
}

/// Runs `body` with the thread's last error cleared; any exception becomes a status.
template <class Body>
bmmcStatus_t guarded(Body&& body) noexcept {
  last_message.clear();
  last_column = 0;
  try {
    body();
    return BMMC_STATUS_SUCCESS;
  } catch (...) {
    return status_of_current_exception();
  }
}

template <class T>
void check_out(T* p, const char* name) {
  if (p == nullptr) fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("{} is NULL; expected a pointer to write the result to", name));
}

const bmmc::Bmmc& map_of(bmmcMap_t map, const char* name = "map") {
  if (map == nullptr) fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("{} is NULL; expected a bmmcMap_t from bmmcMapCreate*", name));
  if (map->magic != kMapMagic)
    fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("{} {} is not a live bmmcMap_t (destroyed, or another kind of handle)",
                                                   name, static_cast<const void*>(map)));
  return map->bmmc;
}

const bmmcPermuter_st& permuter_of(bmmcPermuter_t permuter) {
  if (permuter == nullptr) fail(BMMC_STATUS_INVALID_ARGUMENT, "permuter is NULL; expected a bmmcPermuter_t from bmmcPermuterCreate");
  if (permuter->magic != kPermuterMagic)
    fail(BMMC_STATUS_INVALID_ARGUMENT,
         fmt::format("permuter {} is not a live bmmcPermuter_t (destroyed, or another kind of handle)",
                     static_cast<const void*>(permuter)));
  return *permuter;
}

void check_c_elem_bytes(int elem_bytes) {
  if (elem_bytes <= 0)
    fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("element size {} is not positive; expected 1, 2, 4, 8 or 16 bytes", elem_bytes));
  if (!bmmc::supported_elem_bytes(elem_bytes))
    fail(BMMC_STATUS_NOT_SUPPORTED, fmt::format("element size {} bytes is not supported; expected 1, 2, 4, 8 or 16", elem_bytes));
}

/// The integer a C caller stored in an enum object. C lets any int through where C++ may assume the enum's
/// own range (loading 7 from a bmmcBackend_t is undefined behaviour in C++), so the bytes are read as the
/// underlying integer.
template <class E>
long long enum_value(const E& e) noexcept {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &e, sizeof v);
  return static_cast<long long>(v);
}

bmmc::Backend backend_of(const bmmcBackend_t& backend) {
  const long long b = enum_value(backend);
  switch (b) {
    case BMMC_BACKEND_AUTO: return bmmc::Backend::Auto;
    case BMMC_BACKEND_CPU: return bmmc::Backend::Cpu;
    case BMMC_BACKEND_CUDA: return bmmc::Backend::Cuda;
  }
  fail(BMMC_STATUS_INVALID_ARGUMENT,
       fmt::format("backend {} is not a bmmcBackend_t; expected BMMC_BACKEND_AUTO (0), _CPU (1) or _CUDA (2)", b));
}

bmmcBackend_t c_backend(bmmc::Backend b) {
  switch (b) {
    case bmmc::Backend::Cpu: return BMMC_BACKEND_CPU;
    case bmmc::Backend::Cuda: return BMMC_BACKEND_CUDA;
    case bmmc::Backend::Auto: break;
  }
  return BMMC_BACKEND_AUTO;
}

constexpr bmmcPermuterOptions_t kDefaultOptions = BMMC_PERMUTER_OPTIONS_INIT;

/// The struct sizes of bmmcPermuterOptions_t this library reads: only the current one so far. A later field is
/// appended, the size it grew to added here, and the fields past a caller's size read as their defaults.
void check_options_size(std::size_t struct_size, const char* where) {
  if (struct_size == sizeof(bmmcPermuterOptions_t)) return;
  fail(BMMC_STATUS_INVALID_ARGUMENT,
       fmt::format("{}struct_size = {}: this library (version {}) knows bmmcPermuterOptions_t of {} bytes; fill "
                   "the options with bmmcPermuterOptionsInit or BMMC_PERMUTER_OPTIONS_INIT from the header it was "
                   "built with",
                   where, struct_size, BMMC_VERSION, sizeof(bmmcPermuterOptions_t)));
}

/// The front door's options for `options` (NULL: the defaults). A backend this build or machine cannot run
/// is BMMC_STATUS_NOT_SUPPORTED, with the front door's reason.
bmmc::PermuterOptions options_of(const bmmcPermuterOptions_t* options) {
  if (options) check_options_size(options->struct_size, "options->");  // before any other field is read
  const bmmcPermuterOptions_t& o = options ? *options : kDefaultOptions;
  bmmc::PermuterOptions r;
  r.backend = backend_of(o.backend);
  if (r.backend != bmmc::Backend::Auto) {
    try {
      (void)bmmc::resolve_backend(r.backend);
    } catch (const std::invalid_argument& e) {
      fail(BMMC_STATUS_NOT_SUPPORTED, e.what());
    }
  }
  if (o.device < -1)
    fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("device {} is negative; expected -1 (the current device) or an ordinal", o.device));
  if (o.cpu_threads < 0)
    fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("cpu_threads {} is negative; expected 0 (choose) or a thread count", o.cpu_threads));
  r.in_place = o.in_place != 0;
  r.cpu.threads = o.cpu_threads;
  r.gpu.device = o.device;
  r.gpu.jit = o.jit != 0;
  return r;
}

}  // namespace

extern "C" {

int bmmcGetVersion(void) { return BMMC_VERSION; }

const char* bmmcGetStatusString(bmmcStatus_t status) {
  switch (enum_value(status)) {
    case BMMC_STATUS_SUCCESS: return "BMMC_STATUS_SUCCESS";
    case BMMC_STATUS_INVALID_ARGUMENT: return "BMMC_STATUS_INVALID_ARGUMENT";
    case BMMC_STATUS_INVALID_SPEC: return "BMMC_STATUS_INVALID_SPEC";
    case BMMC_STATUS_NOT_SUPPORTED: return "BMMC_STATUS_NOT_SUPPORTED";
    case BMMC_STATUS_OUT_OF_MEMORY: return "BMMC_STATUS_OUT_OF_MEMORY";
    case BMMC_STATUS_CUDA_ERROR: return "BMMC_STATUS_CUDA_ERROR";
    case BMMC_STATUS_NVRTC_ERROR: return "BMMC_STATUS_NVRTC_ERROR";
    case BMMC_STATUS_INSUFFICIENT_BUFFER: return "BMMC_STATUS_INSUFFICIENT_BUFFER";
    case BMMC_STATUS_INTERNAL_ERROR: return "BMMC_STATUS_INTERNAL_ERROR";
  }
  return "BMMC_STATUS_UNKNOWN";
}

const char* bmmcGetLastErrorMessage(void) { return last_message.c_str(); }

int bmmcGetLastErrorColumn(void) { return last_column; }

bmmcStatus_t bmmcBackendIsAvailable(bmmcBackend_t backend, int* available) {
  return guarded([&] {
    check_out(available, "available");
    *available = bmmc::backend_available(backend_of(backend)) ? 1 : 0;
  });
}

bmmcStatus_t bmmcPermuterOptionsInitSized(bmmcPermuterOptions_t* options, size_t struct_size) {
  return guarded([&] {
    check_out(options, "options");
    check_options_size(struct_size, "");
    *options = kDefaultOptions;
  });
}

// ---- Maps ----------------------------------------------------------------------------------------------

bmmcStatus_t bmmcMapCreateFromSpec(bmmcMap_t* map, const char* spec, int n) {
  return guarded([&] {
    check_out(map, "map");
    if (spec == nullptr) fail(BMMC_STATUS_INVALID_ARGUMENT, "spec is NULL; expected NUL-terminated spec text");
    if (n < -1) fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("n = {}; expected -1 (the spec defines n) or 0..64", n));
    auto m = new bmmcMap_st{kMapMagic, bmmc::parse_spec(spec, n < 0 ? std::nullopt : std::optional<int>(n))};
    *map = m;
  });
}

bmmcStatus_t bmmcMapCreateFromRows(bmmcMap_t* map, int n, const uint64_t* rows, uint64_t c) {
  return guarded([&] {
    check_out(map, "map");
    if (n < 0 || n > bmmc::BitMatrix::kMaxDim)
      fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("n = {}; expected 0..{} index bits", n, bmmc::BitMatrix::kMaxDim));
    if (rows == nullptr && n > 0) fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("rows is NULL; expected {} rows", n));
    const std::vector<bmmc::BitVec> r(rows, rows + n);
    auto m = new bmmcMap_st{kMapMagic, bmmc::Bmmc(bmmc::BitMatrix::from_rows(n, r), c)};
    *map = m;
  });
}

bmmcStatus_t bmmcMapCompose(bmmcMap_t* result, bmmcMap_t f, bmmcMap_t g) {
  return guarded([&] {
    check_out(result, "result");
    auto m = new bmmcMap_st{kMapMagic, bmmc::compose(map_of(f, "f"), map_of(g, "g"))};
    *result = m;
  });
}

bmmcStatus_t bmmcMapInverse(bmmcMap_t* result, bmmcMap_t f) {
  return guarded([&] {
    check_out(result, "result");
    auto m = new bmmcMap_st{kMapMagic, map_of(f, "f").inverse()};
    *result = m;
  });
}

bmmcStatus_t bmmcMapDestroy(bmmcMap_t map) {
  return guarded([&] {
    if (map == nullptr) return;
    (void)map_of(map);
    map->magic = 0;
    delete map;
  });
}

bmmcStatus_t bmmcMapGetN(bmmcMap_t map, int* n) {
  return guarded([&] {
    const bmmc::Bmmc& f = map_of(map);
    check_out(n, "n");
    *n = f.n();
  });
}

bmmcStatus_t bmmcMapGetRows(bmmcMap_t map, uint64_t* rows, uint64_t* c) {
  return guarded([&] {
    const bmmc::Bmmc& f = map_of(map);
    if (rows != nullptr)
      for (int i = 0; i < f.n(); ++i) rows[i] = f.matrix().row(i);
    if (c != nullptr) *c = f.complement();
  });
}

bmmcStatus_t bmmcMapApply(bmmcMap_t map, uint64_t x, uint64_t* y) {
  return guarded([&] {
    const bmmc::Bmmc& f = map_of(map);
    check_out(y, "y");
    if ((x & ~bmmc::low_mask(f.n())) != 0)
      fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("index {:#x} has bits at or above n = {}", x, f.n()));
    *y = f.apply(x);
  });
}

bmmcStatus_t bmmcMapPrint(bmmcMap_t map, char* buffer, size_t size, size_t* length) {
  return guarded([&] {
    const std::string text = map_of(map).to_string();
    if (buffer == nullptr && size != 0)
      fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("buffer is NULL but size is {}; expected a buffer, or size 0", size));
    if (length != nullptr) *length = text.size();
    if (buffer == nullptr) return;  // a length query
    if (size < text.size() + 1)
      fail(BMMC_STATUS_INSUFFICIENT_BUFFER,
           fmt::format("the text needs {} bytes with its NUL but the buffer has {}", text.size() + 1, size));
    text.copy(buffer, text.size());
    buffer[text.size()] = '\0';
  });
}

// ---- Permuters -----------------------------------------------------------------------------------------

bmmcStatus_t bmmcPermuterCreate(bmmcPermuter_t* permuter, bmmcMap_t map, int elem_bytes,
                                const bmmcPermuterOptions_t* options) {
  return guarded([&] {
    check_out(permuter, "permuter");
    const bmmc::Bmmc& f = map_of(map);
    check_c_elem_bytes(elem_bytes);
    bmmc::Permuter p(f, elem_bytes, options_of(options));
    std::string name = p.kernel_name();
    *permuter = new bmmcPermuter_st{kPermuterMagic, std::move(p), std::move(name)};
  });
}

bmmcStatus_t bmmcPermuterDestroy(bmmcPermuter_t permuter) {
  return guarded([&] {
    if (permuter == nullptr) return;
    (void)permuter_of(permuter);
    permuter->magic = 0;
    delete permuter;
  });
}

bmmcStatus_t bmmcPermuterExecute(bmmcPermuter_t permuter, const void* in, void* out, bmmcStream_t stream) {
  return guarded([&] { permuter_of(permuter).permuter(in, out, stream); });
}

bmmcStatus_t bmmcPermuterExecuteInPlace(bmmcPermuter_t permuter, void* data, bmmcStream_t stream) {
  return guarded([&] {
    const bmmc::Permuter& p = permuter_of(permuter).permuter;
    if (!p.in_place())
      fail(BMMC_STATUS_INVALID_ARGUMENT,
           fmt::format("permuter {} runs out of place but was called with one buffer ({}); call "
                       "bmmcPermuterExecute with an input and an output buffer, or create it with options.in_place = 1",
                       static_cast<const void*>(permuter), data));
    p(data, stream);
  });
}

bmmcStatus_t bmmcPermuterGetBackend(bmmcPermuter_t permuter, bmmcBackend_t* backend) {
  return guarded([&] {
    const bmmc::Permuter& p = permuter_of(permuter).permuter;
    check_out(backend, "backend");
    *backend = c_backend(p.backend());
  });
}

bmmcStatus_t bmmcPermuterGetKernelName(bmmcPermuter_t permuter, const char** name) {
  return guarded([&] {
    const bmmcPermuter_st& p = permuter_of(permuter);
    check_out(name, "name");
    *name = p.kernel_name.c_str();
  });
}

bmmcStatus_t bmmcPermuterGetTempBytes(bmmcPermuter_t permuter, size_t* bytes) {
  return guarded([&] {
    const bmmc::Permuter& p = permuter_of(permuter).permuter;
    check_out(bytes, "bytes");
    *bytes = p.temp_bytes();
  });
}

bmmcStatus_t bmmcPermuterGetAlignment(bmmcPermuter_t permuter, size_t* bytes) {
  return guarded([&] {
    const bmmc::Permuter& p = permuter_of(permuter).permuter;
    check_out(bytes, "bytes");
    *bytes = p.alignment();
  });
}

bmmcStatus_t bmmcPermuterGetShape(bmmcPermuter_t permuter, int* n, int* elem_bytes, int* in_place) {
  return guarded([&] {
    const bmmc::Permuter& p = permuter_of(permuter).permuter;
    if (n != nullptr) *n = p.n();
    if (elem_bytes != nullptr) *elem_bytes = p.elem_bytes();
    if (in_place != nullptr) *in_place = p.in_place() ? 1 : 0;
  });
}

// ---- One-shot calls ------------------------------------------------------------------------------------

bmmcStatus_t bmmcPermute(bmmcMap_t map, const void* in, void* out, int elem_bytes,
                         const bmmcPermuterOptions_t* options, bmmcStream_t stream) {
  return guarded([&] {
    const bmmc::Bmmc& f = map_of(map);
    check_c_elem_bytes(elem_bytes);
    bmmc::PermuterOptions o = options_of(options);
    o.in_place = false;  // in == out decides
    bmmc::permute(f, in, out, elem_bytes, o, stream);
  });
}

bmmcStatus_t bmmcSwapIndexBits(void* data, int n, int elem_bytes, const int* bit_pairs, int num_pairs,
                               uint64_t mask_bits, uint64_t mask_value, const bmmcPermuterOptions_t* options,
                               bmmcStream_t stream) {
  return guarded([&] {
    if (num_pairs < 0) fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("num_pairs = {}; expected 0 or more", num_pairs));
    if (bit_pairs == nullptr && num_pairs > 0)
      fail(BMMC_STATUS_INVALID_ARGUMENT, fmt::format("bit_pairs is NULL; expected {} pairs of bit indices", num_pairs));
    check_c_elem_bytes(elem_bytes);
    std::vector<std::pair<int, int>> pairs;
    pairs.reserve(static_cast<std::size_t>(num_pairs));
    for (int i = 0; i < num_pairs; ++i) pairs.emplace_back(bit_pairs[2 * i], bit_pairs[2 * i + 1]);
    bmmc::PermuterOptions o = options_of(options);
    bmmc::swap_index_bits(data, n, elem_bytes, pairs, mask_bits, mask_value, o, stream);
  });
}

}  // extern "C"
