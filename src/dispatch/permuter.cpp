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
#include "bmmc/core/spec.hpp"
#include "bmmc/dispatch/permuter_cache.hpp"
#if BMMC_HAS_CUDA
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/permute.hpp"
#endif

namespace bmmc {

namespace {

#if BMMC_HAS_CUDA
using CudaState = CudaPermuter;
#else
struct CudaState {};  // never constructed: resolve_backend refuses Cuda in a build without it
#endif

}  // namespace

struct Permuter::Impl {
  Backend backend = Backend::Cpu;
  int device = -1;
  std::variant<std::monostate, CpuPermuter, CudaState> state;  // monostate only while being built

  const Plan& plan() const {
#if BMMC_HAS_CUDA
    if (const auto* c = std::get_if<CudaState>(&state)) return c->plan();
#endif
    return std::get<CpuPermuter>(state).plan();
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
  if (impl->backend == Backend::Cpu) {
    impl->state.template emplace<CpuPermuter>(make(options.cpu));
  } else {
#if BMMC_HAS_CUDA
    impl->device = options.gpu.device >= 0 ? options.gpu.device : current_device();
    const ScopedDevice on(impl->device);
    impl->state.template emplace<CudaState>(make(options.gpu));
#endif
  }
  return impl;
}

Permuter::Permuter(const Bmmc& bmmc, int elem_bytes, const PermuterOptions& options)
    : impl_(make_impl(options, [&](const auto& policy) {
        if constexpr (std::is_same_v<std::decay_t<decltype(policy)>, CpuPolicy>)
          return CpuPermuter(bmmc, elem_bytes, policy);
        else
          return CudaState(bmmc, elem_bytes, policy);
      })) {}

Permuter::Permuter(Plan plan, const PermuterOptions& options)
    : impl_(make_impl(options, [&](const auto& policy) {
        if constexpr (std::is_same_v<std::decay_t<decltype(policy)>, CpuPolicy>)
          return CpuPermuter(std::move(plan), policy);
        else
          return CudaState(std::move(plan), policy);
      })) {}

Backend Permuter::backend() const noexcept { return impl_->backend; }
const Plan& Permuter::plan() const noexcept { return impl_->plan(); }

std::size_t Permuter::temp_bytes() const noexcept { return plan().temp_bytes(); }

std::size_t Permuter::alignment() const noexcept {
#if BMMC_HAS_CUDA
  if (const auto* c = std::get_if<CudaState>(&impl_->state)) return c->alignment();
#endif
  return static_cast<std::size_t>(plan().elem_bytes);
}

std::string Permuter::kernel_name() const {
#if BMMC_HAS_CUDA
  if (const auto* c = std::get_if<CudaState>(&impl_->state)) return c->jit() ? "cuda-jit" : "cuda-generic";
#endif
  return std::get<CpuPermuter>(impl_->state).kernel_name();
}

void Permuter::operator()(const void* in, void* out, StreamHandle stream, void* temp) const {
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

namespace {

// Where permute()'s pointers live: asked of the CUDA runtime once per call (cudaPointerGetAttributes costs
// about a microsecond), then used both to choose the backend and to check the pointers for it.
struct PointerDevices {
  int in = -1, out = -1;  // the owning device, or -1 for host memory
};

PermuterOptions resolve_for_pointers(const PermuterOptions& options, const void* in, const void* out, int elem_bytes,
                                     PointerDevices& where) {
  PermuterOptions o = options;
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
  // Lane width from alignment: the default accesses are 8 bytes wide (plan/planner.cpp); an offset view may
  // only allow narrower ones. JIT plans only — the generic kernels move one element per access anyway.
  if (o.gpu.policy.vector_bits < 0 && o.gpu.jit) {
    const auto addr = reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(out);
    const std::size_t align = addr == 0 ? 16 : std::min<std::size_t>(std::size_t{1} << std::countr_zero(addr), 16);
    if (align < 8 && align >= static_cast<std::size_t>(elem_bytes))
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

}  // namespace bmmc
