// The front door (see bmmc/permute.hpp): one Permuter over the CPU and CUDA backends, the cached one-call
// permute(), and host buffers on any backend. The only file that chooses between backends.
#include "bmmc/permute.hpp"

#include <fmt/format.h>

#include <bit>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/core/spec.hpp"
#include "bmmc/cpu/digit_executor.hpp"
#include "bmmc/cpu/inplace.hpp"
#include "bmmc/dispatch/permuter_cache.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#if BMMC_HAS_CUDA
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/digit_permute.hpp"
#include "bmmc/cuda/inplace.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/permute.hpp"
#endif

namespace bmmc {

namespace {

#if BMMC_HAS_CUDA
using CudaState = CudaPermuter;
using CudaInPlaceState = CudaInPlacePermuter;
using CudaDigitState = CudaDigitPermuter;
#else
struct CudaState {};  // never constructed: resolve_backend refuses Cuda in a build without it
struct CudaInPlaceState {};
struct CudaDigitState {};
#endif

const Plan kNoPlan{};
const InPlacePlan kNoInPlacePlan{};
const DigitPlan kNoDigitPlan{};

}  // namespace

struct Permuter::Impl {
  Backend backend = Backend::Cpu;
  int device = -1;
  // monostate only while being built
  std::variant<std::monostate, CpuPermuter, CudaState, CpuInPlacePermuter, CudaInPlaceState, CpuDigitPermuter,
               CudaDigitState>
      state;
  bool digit_in_place = false;  // a digit state built with options.in_place

  const Plan& plan() const {
    if (const auto* c = std::get_if<CpuPermuter>(&state)) return c->plan();
#if BMMC_HAS_CUDA
    if (const auto* c = std::get_if<CudaState>(&state)) return c->plan();
#endif
    return kNoPlan;
  }
  const InPlacePlan& inplace_plan() const {
    if (const auto* c = std::get_if<CpuInPlacePermuter>(&state)) return c->plan();
#if BMMC_HAS_CUDA
    if (const auto* c = std::get_if<CudaInPlaceState>(&state)) return c->plan();
#endif
    return kNoInPlacePlan;
  }
  const DigitPlan& digit_plan() const {
    if (const auto* c = std::get_if<CpuDigitPermuter>(&state)) return c->plan();
#if BMMC_HAS_CUDA
    if (const auto* c = std::get_if<CudaDigitState>(&state)) return c->plan();
#endif
    return kNoDigitPlan;
  }
  bool digits() const {
    return std::holds_alternative<CpuDigitPermuter>(state) || std::holds_alternative<CudaDigitState>(state);
  }
  bool in_place() const {
    return std::holds_alternative<CpuInPlacePermuter>(state) || std::holds_alternative<CudaInPlaceState>(state) ||
           digit_in_place;
  }
};

namespace {

// The CPU must not be handed device memory: it would fault, or read through a managed mapping at a
// fraction of the speed. Checked only where the runtime can tell.
void check_host_pointers(const void* in, const void* out) {
#if BMMC_HAS_CUDA
  for (auto [p, what] : {std::pair{in, "input"}, std::pair{static_cast<const void*>(out), "output"}})
    if (is_device_pointer(p))
      throw std::invalid_argument(fmt::format(
          "{} pointer {} is CUDA device memory but the permutation runs on the cpu backend; use the cuda (or "
          "auto) backend for device arrays",
          what, p));
#else
  (void)in;
  (void)out;
#endif
}

}  // namespace

template <class Make>
std::shared_ptr<const Permuter::Impl> Permuter::make_impl(const PermuterOptions& options, Make&& make) {
  auto impl = std::make_shared<Permuter::Impl>();
  impl->backend = resolve_backend(options.backend);
  check_cpu_threads(options.cpu.threads);  // refused on every backend, as the Python API does
  if (impl->backend == Backend::Cpu) {
    make(impl->state, options.cpu);
  } else {
#if BMMC_HAS_CUDA
    impl->device = options.gpu.device >= 0 ? options.gpu.device : current_device();
    const ScopedDevice on(impl->device);
    make(impl->state, options.gpu);
#endif
  }
  return impl;
}

Permuter::Permuter(const Bmmc& bmmc, int elem_bytes, const PermuterOptions& options)
    : impl_(make_impl(options, [&](auto& state, const auto& policy) {
        if constexpr (std::is_same_v<std::decay_t<decltype(policy)>, CpuPolicy>) {
          if (options.in_place)
            state.template emplace<CpuInPlacePermuter>(bmmc, elem_bytes, policy);
          else
            state.template emplace<CpuPermuter>(bmmc, elem_bytes, policy);
        } else {
          if (options.in_place)
            state.template emplace<CudaInPlaceState>(bmmc, elem_bytes, policy);
          else
            state.template emplace<CudaState>(bmmc, elem_bytes, policy);
        }
      })) {}

Permuter::Permuter(InPlacePlan plan, const PermuterOptions& options)
    : impl_(make_impl(options, [&](auto& state, const auto& policy) {
        if constexpr (std::is_same_v<std::decay_t<decltype(policy)>, CpuPolicy>)
          state.template emplace<CpuInPlacePermuter>(std::move(plan), policy);
        else
          state.template emplace<CudaInPlaceState>(std::move(plan), policy);
      })) {}

Permuter::Permuter(Plan plan, const PermuterOptions& options)
    : impl_(make_impl(options, [&](auto& state, const auto& policy) {
        if (options.in_place)
          throw std::invalid_argument(
              "Permuter: an out-of-place Plan cannot run in place; build the Permuter from an InPlacePlan "
              "(make_inplace_plan) or from the Bmmc with options.in_place");
        if constexpr (std::is_same_v<std::decay_t<decltype(policy)>, CpuPolicy>)
          state.template emplace<CpuPermuter>(std::move(plan), policy);
        else
          state.template emplace<CudaState>(std::move(plan), policy);
      })) {}

std::optional<Bmmc> bit_face(const DigitMap& map, int elem_bytes) {
  if (!supported_elem_bytes(elem_bytes)) return std::nullopt;
  return map.as_bmmc();
}

Permuter::Permuter(const DigitMap& map, int elem_bytes, const PermuterOptions& options) {
  if (const auto b = bit_face(map, elem_bytes)) {
    *this = Permuter(*b, elem_bytes, options);
    return;
  }
  if (options.in_place && !map.is_involution())
    throw std::invalid_argument(fmt::format(
        "in place needs a map that is its own inverse; {} on shape {} is not: run it out of place",
        map.to_string(), shape_to_string(map.shape())));
  impl_ = make_impl(options, [&](auto& state, const auto& policy) {
    if constexpr (std::is_same_v<std::decay_t<decltype(policy)>, CpuPolicy>)
      state.template emplace<CpuDigitPermuter>(map, elem_bytes, policy);
    else
      state.template emplace<CudaDigitState>(map, elem_bytes, policy);
  });
  std::const_pointer_cast<Impl>(impl_)->digit_in_place = options.in_place;
}

Backend Permuter::backend() const noexcept { return impl_->backend; }
bool Permuter::in_place() const noexcept { return impl_->in_place(); }
const Plan& Permuter::plan() const noexcept { return impl_->plan(); }
const InPlacePlan& Permuter::inplace_plan() const noexcept { return impl_->inplace_plan(); }
const DigitPlan& Permuter::digit_plan() const noexcept { return impl_->digit_plan(); }
int Permuter::n() const noexcept {
  if (impl_->digits()) return -1;
  return in_place() ? inplace_plan().n() : plan().n();
}
int Permuter::elem_bytes() const noexcept {
  if (impl_->digits()) return digit_plan().caller_elem_bytes;
  return in_place() ? inplace_plan().elem_bytes : plan().elem_bytes;
}

std::size_t Permuter::temp_bytes() const noexcept { return plan().temp_bytes(); }

std::size_t Permuter::alignment() const noexcept {
#if BMMC_HAS_CUDA
  if (const auto* c = std::get_if<CudaDigitState>(&impl_->state)) return c->alignment();
#endif
  if (impl_->digits()) return 1;
#if BMMC_HAS_CUDA
  if (const auto* c = std::get_if<CudaState>(&impl_->state)) return c->alignment();
  if (const auto* c = std::get_if<CudaInPlaceState>(&impl_->state)) return c->alignment();
#endif
  return static_cast<std::size_t>(elem_bytes());
}

std::string Permuter::kernel_name() const {
  if (std::holds_alternative<CpuDigitPermuter>(impl_->state)) return in_place() ? "cpu-digit-inplace" : "cpu-digit-tile";
#if BMMC_HAS_CUDA
  if (const auto* c = std::get_if<CudaDigitState>(&impl_->state))
    return in_place() ? "cuda-digit-inplace" : c->jit() ? "cuda-digit-jit" : "cuda-digit-generic";
  if (const auto* c = std::get_if<CudaState>(&impl_->state)) return c->jit() ? "cuda-jit" : "cuda-generic";
  if (const auto* c = std::get_if<CudaInPlaceState>(&impl_->state))
    return c->jit() ? "cuda-inplace-jit" : "cuda-inplace-generic";
#endif
  if (in_place()) return "cpu-inplace";
  return std::get<CpuPermuter>(impl_->state).kernel_name();
}

void Permuter::operator()(void* data, StreamHandle stream) const {
  if (!in_place())  // q(in, nullptr) lands here too: the null is taken as the stream
    throw std::invalid_argument(fmt::format(
        "this Permuter runs out of place but was called with one buffer ({}, stream {}; q(in, nullptr) is such a "
        "call): call it with an input and an output buffer, q(in, out[, stream]), or build it with "
        "PermuterOptions::in_place",
        data, static_cast<const void*>(stream)));
  if (impl_->digits()) return run_digits(data, data, stream, false);
  if (const auto* cpu = std::get_if<CpuInPlacePermuter>(&impl_->state)) {
    check_inplace_buffer(data, n(), elem_bytes());
    check_host_pointers(data, data);
    (*cpu)(data);
    return;
  }
#if BMMC_HAS_CUDA
  const ScopedDevice on(impl_->device);
  std::get<CudaInPlaceState>(impl_->state)(data, stream);
#else
  (void)stream;
#endif
}

void Permuter::operator()(const void* in, void* out, StreamHandle stream, void* temp) const {
  if (in_place()) {
    if (in != out)
      throw std::invalid_argument(fmt::format(
          "this Permuter permutes in place: input {} and output {} must be the same buffer", in, out));
    (*this)(out, stream);
    return;
  }
  if (impl_->digits()) return run_digits(in, out, stream, false);
  if (const auto* cpu = std::get_if<CpuPermuter>(&impl_->state)) {
    check_host_pointers(in, out);
    if (temp == nullptr && cpu->temp_bytes() > 0) {
      check_buffers(in, out, plan().n(), plan().elem_bytes);  // before allocating for a bad call
      std::vector<std::byte> scratch(cpu->temp_bytes() + 16);
      void* aligned = scratch.data() + (16 - reinterpret_cast<std::uintptr_t>(scratch.data()) % 16) % 16;
      (*cpu)(in, out, aligned);
      return;
    }
    (*cpu)(in, out, temp);
    return;
  }
#if BMMC_HAS_CUDA
  const ScopedDevice on(impl_->device);
  std::get<CudaState>(impl_->state)(in, out, stream, temp);
#else
  (void)stream;
#endif
}

void Permuter::run_digits(const void* in, void* out, StreamHandle stream, bool trusted) const {
  if (const auto* cpu = std::get_if<CpuDigitPermuter>(&impl_->state)) {
    check_host_pointers(in, out);
    (*cpu)(in, out);
    return;
  }
#if BMMC_HAS_CUDA
  const ScopedDevice on(impl_->device);
  const auto& c = std::get<CudaDigitState>(impl_->state);
  if (trusted)
    c.run_on_device_pointers(in, out, stream);
  else
    c(in, out, stream);
#else
  (void)stream;
  (void)trusted;
#endif
}

void Permuter::run_trusted(const void* in, void* out, StreamHandle stream) const {
  if (impl_->digits() && !in_place()) return run_digits(in, out, stream, true);
#if BMMC_HAS_CUDA
  if (const auto* c = std::get_if<CudaState>(&impl_->state)) {
    const ScopedDevice on(impl_->device);
    c->run_on_device_pointers(in, out, stream);
    return;
  }
#endif
  (*this)(in, out, stream);
}

namespace {

// Where permute()'s pointers live: asked of the CUDA runtime once per call (cudaPointerGetAttributes costs
// about a microsecond), then used both to choose the backend and to check the pointers for it.
struct PointerDevices {
  int in = -1, out = -1;  // the owning device, or -1 for host memory
};

PermuterOptions resolve_for_pointers(const PermuterOptions& options, const void* in, const void* out, int elem_bytes,
                                     PointerDevices& where) {
  PermuterOptions o = options;
  check_cpu_threads(o.cpu.threads);  // before the CUDA backend drops the CPU options (resolve_backend checks the backend)
#if BMMC_HAS_CUDA
  if (o.backend != Backend::Cpu) where = {pointer_device(in), pointer_device(out)};
  if (o.backend == Backend::Auto) {
    if ((where.in >= 0) != (where.out >= 0))
      throw std::invalid_argument(fmt::format(
          "the input {} is {} memory but the output {} is {} memory; both must be host arrays (cpu backend) or "
          "both device arrays (cuda backend)",
          in, where.in >= 0 ? "CUDA device" : "host", out, where.out >= 0 ? "CUDA device" : "host"));
    o.backend = where.in >= 0 ? Backend::Cuda : Backend::Cpu;
  }
#else
  (void)in;
  (void)out;
  (void)where;
#endif
  o.backend = resolve_backend(o.backend);
  if (o.backend == Backend::Cpu) {
    o.gpu = {};  // not used: keep CPU cache entries from splitting on GPU options
    return o;
  }
  o.cpu = {};
#if BMMC_HAS_CUDA
  if (o.gpu.device < 0) o.gpu.device = where.in >= 0 ? where.in : current_device();
  for (auto [device, p, what] : {std::tuple{where.in, in, "input"}, std::tuple{where.out, out, "output"}})
    if (device != o.gpu.device)
      throw std::invalid_argument(
          device < 0 ? fmt::format("{} pointer {} is host memory; the cuda backend needs device (or managed) memory",
                                   what, p)
                     : fmt::format("{} pointer {} is memory of CUDA device {} but the permutation runs on device {}",
                                   what, p, device, o.gpu.device));
#endif
  // Lane width from alignment: the default accesses are up to 16 bytes wide (plan/gpu_policy.hpp,
  // default_gpu_geometry, and the digit plans' vectors, JIT or generic); an offset view may only allow narrower
  // ones (the generic BMMC kernels move one element per access and ignore it).
  if (o.gpu.policy.vector_bits < 0) {
    const auto addr = reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(out);
    const std::size_t align = addr == 0 ? 16 : std::min<std::size_t>(std::size_t{1} << std::countr_zero(addr), 16);
    if (align < 16 && align >= static_cast<std::size_t>(elem_bytes))
      o.gpu.policy.vector_bits = std::countr_zero(align / static_cast<std::size_t>(elem_bytes));
  }
  return o;
}

}  // namespace

PermuterOptions options_for_pointers(const PermuterOptions& options, const void* in, const void* out,
                                     int elem_bytes) {
  PointerDevices where;
  return resolve_for_pointers(options, in, out, elem_bytes, where);
}

void permute(const Bmmc& bmmc, const void* in, void* out, int elem_bytes, const PermuterOptions& options,
             StreamHandle stream) {
  if (in == out && in != nullptr) {
    permute_inplace(bmmc, out, elem_bytes, options, stream);
    return;
  }
  check_buffers(in, out, bmmc.n(), elem_bytes);
  PointerDevices where;
  const PermuterKey key{bmmc, elem_bytes, resolve_for_pointers(options, in, out, elem_bytes, where)};
  const std::shared_ptr<const Permuter> p = default_permuter_cache().get(key);
#if BMMC_HAS_CUDA
  if (key.options.backend == Backend::Cuda) {
    // Both pointers are device memory of the chosen device (checked above): no second runtime query.
    const ScopedDevice on(p->impl_->device);
    std::get<CudaState>(p->impl_->state).run_on_device_pointers(in, out, stream);
    return;
  }
#endif
  (*p)(in, out, stream);
}

void permute(const DigitMap& map, const void* in, void* out, int elem_bytes, const PermuterOptions& options,
             StreamHandle stream) {
  if (elem_bytes < 1 || elem_bytes > (1 << 20))
    throw std::invalid_argument(
        fmt::format("element size {} bytes is out of range; expected 1 to {} bytes", elem_bytes, 1 << 20));
  if (map.size() > kMaxDigitElements / elem_bytes)
    throw std::invalid_argument(fmt::format("an array of shape {} with {}-byte elements exceeds 2^62 bytes",
                                            shape_to_string(map.shape()), elem_bytes));
  if (options.in_place && in != out)
    throw std::invalid_argument(fmt::format(
        "options.in_place with two buffers ({} and {}): in place takes one buffer (in == out)", in, out));
  if (const auto b = bit_face(map, elem_bytes)) return permute(*b, in, out, elem_bytes, options, stream);
  const auto bytes = static_cast<std::size_t>(map.size()) * static_cast<std::size_t>(elem_bytes);
  check_byte_buffers(in, out, bytes, 1, true);
  PermuterOptions o = options;
  if (in == out) {
    if (!map.is_involution())
      throw std::invalid_argument(fmt::format(
          "in place (input == output) needs a map that is its own inverse; {} on shape {} is not: pass a separate "
          "output buffer",
          map.to_string(), shape_to_string(map.shape())));
    o.in_place = true;
  }
  PointerDevices where;
  PermuterKey key{Bmmc{}, elem_bytes, resolve_for_pointers(o, in, out, elem_bytes, where), map};
  const std::shared_ptr<const Permuter> p = default_permuter_cache().get(key);
  p->run_digits(in, out, stream, key.options.backend == Backend::Cuda);
}

void permute_inplace(const Bmmc& bmmc, void* data, int elem_bytes, const PermuterOptions& options,
                     StreamHandle stream) {
  check_inplace_buffer(data, bmmc.n(), elem_bytes);
  PermuterOptions o = options;
  o.in_place = true;
  PointerDevices where;
  const PermuterKey key{bmmc, elem_bytes, resolve_for_pointers(o, data, data, elem_bytes, where)};
  const std::shared_ptr<const Permuter> p = default_permuter_cache().get(key);
#if BMMC_HAS_CUDA
  if (key.options.backend == Backend::Cuda) {
    const ScopedDevice on(p->impl_->device);
    std::get<CudaInPlaceState>(p->impl_->state).run_on_device_pointer(data, stream);
    return;
  }
#endif
  (*p)(data, stream);
}

void swap_index_bits(void* data, int n, int elem_bytes, const std::vector<std::pair<int, int>>& pairs,
                     BitVec mask_bits, BitVec mask_value, const PermuterOptions& options, StreamHandle stream) {
  const Bmmc f = swap_index_bits(n, pairs);
  if (mask_bits == 0) {
    if (mask_value != 0)
      throw std::invalid_argument(fmt::format("mask value {:#x} given without mask bits", mask_value));
    permute_inplace(f, data, elem_bytes, options, stream);
    return;
  }
  // A masked swap is not a BMMC: it gets its own plan (not cached here; its kernel is, by the kernel cache).
  check_inplace_buffer(data, n, elem_bytes);
  PermuterOptions o = options;
  o.in_place = true;
  PointerDevices where;
  o = resolve_for_pointers(o, data, data, elem_bytes, where);
  PlanOptions plan_options = cpu_inplace_plan_options(o.cpu, elem_bytes);
#if BMMC_HAS_CUDA
  if (o.backend == Backend::Cuda) plan_options = gpu_plan_options(o.gpu.policy, n, device_caps(o.gpu.device));
#endif
  const Permuter p(make_swap_plan(n, pairs, elem_bytes, plan_options, mask_bits, mask_value), o);
  p(data, stream);
}

void permute(std::string_view spec, const void* in, void* out, int n, int elem_bytes, const PermuterOptions& options,
             StreamHandle stream) {
  permute(parse_spec(spec, n), in, out, elem_bytes, options, stream);
}

Backend permute_host(const Bmmc& bmmc, const void* in, void* out, int elem_bytes, const PermuterOptions& options) {
  check_buffers(in, out, bmmc.n(), elem_bytes);
  PermuterOptions o = options;
  o.backend = resolve_backend(options.backend);
  if (o.backend == Backend::Cpu) {
    o.gpu = {};
    (*default_permuter_cache().get({bmmc, elem_bytes, o}))(in, out);
    return Backend::Cpu;
  }
#if BMMC_HAS_CUDA
  const ScopedDevice on(o.gpu.device);
  const std::size_t bytes = array_bytes(bmmc.n(), elem_bytes);
  DeviceBuffer din(bytes), dout(bytes);
  din.upload(in, bytes);
  permute(bmmc, din.get(), dout.get(), elem_bytes, o);
  dout.download(out, bytes);
#endif
  return o.backend;
}

Backend permute_host(const DigitMap& map, const void* in, void* out, int elem_bytes, const PermuterOptions& options) {
  if (options.in_place && in != out)
    throw std::invalid_argument(fmt::format(
        "options.in_place with two buffers ({} and {}): in place takes one buffer (in == out)", in, out));
  if (const auto b = bit_face(map, elem_bytes))
    return in == out ? permute_host_inplace(*b, out, elem_bytes, options) : permute_host(*b, in, out, elem_bytes, options);
  if (elem_bytes < 1 || elem_bytes > (1 << 20) || map.size() > kMaxDigitElements / elem_bytes)
    throw std::invalid_argument(fmt::format("an array of shape {} of {}-byte elements: expected elements of 1 to {} "
                                            "bytes and at most 2^62 bytes in all",
                                            shape_to_string(map.shape()), elem_bytes, 1 << 20));
  const auto bytes = static_cast<std::size_t>(map.size()) * static_cast<std::size_t>(elem_bytes);
  check_byte_buffers(in, out, bytes, 1, true);
  PermuterOptions o = options;
  o.backend = resolve_backend(options.backend);
  o.in_place = in == out;
  if (o.backend == Backend::Cpu) {
    o.gpu = {};
    const Permuter p(map, elem_bytes, o);  // refuses in place for a map that is not an involution
    if (p.in_place())
      p(out);
    else
      p(in, out);
    return Backend::Cpu;
  }
#if BMMC_HAS_CUDA
  const ScopedDevice on(o.gpu.device);
  if (o.in_place && !map.is_involution())
    throw std::invalid_argument(fmt::format("in place needs a map that is its own inverse; {} on shape {} is not",
                                            map.to_string(), shape_to_string(map.shape())));
  DeviceBuffer din(bytes);
  din.upload(in, bytes);
  if (o.in_place) {
    permute(map, din.get(), din.get(), elem_bytes, o);
    din.download(out, bytes);
  } else {
    DeviceBuffer dout(bytes);
    permute(map, din.get(), dout.get(), elem_bytes, o);
    dout.download(out, bytes);
  }
#endif
  return o.backend;
}

Backend permute_host_inplace(const Bmmc& bmmc, void* data, int elem_bytes, const PermuterOptions& options) {
  check_inplace_buffer(data, bmmc.n(), elem_bytes);
  PermuterOptions o = options;
  o.in_place = true;
  o.backend = resolve_backend(options.backend);
  if (o.backend == Backend::Cpu) {
    o.gpu = {};
    (*default_permuter_cache().get({bmmc, elem_bytes, o}))(data);
    return Backend::Cpu;
  }
#if BMMC_HAS_CUDA
  const ScopedDevice on(o.gpu.device);
  const std::size_t bytes = array_bytes(bmmc.n(), elem_bytes);
  DeviceBuffer d(bytes);
  d.upload(data, bytes);
  permute_inplace(bmmc, d.get(), elem_bytes, o);
  d.download(data, bytes);
#endif
  return o.backend;
}

}  // namespace bmmc
