#include "bmmc/cuda/permute.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/spec.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/generic_kernel.hpp"
#include "bmmc/cuda/launch.hpp"

namespace bmmc {

namespace {

std::size_t pass_alignment(const Pass& p) {
  if (const auto* t = std::get_if<TilePass>(&p)) return static_cast<std::size_t>(t->vector_bytes());
  return static_cast<std::size_t>(std::get<NaivePass>(p).elem_bytes);
}

void check_device_pointer(const void* p, const char* what) {
  cudaPointerAttributes attr{};
  const cudaError_t st = cudaPointerGetAttributes(&attr, p);
  if (st != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error state
    throw std::invalid_argument(fmt::format("{} pointer {} is not a CUDA allocation ({})", what, p, cudaGetErrorString(st)));
  }
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    throw std::invalid_argument(fmt::format(
        "{} pointer {} is {} memory; bmmc::permute needs device (or managed) memory — use the CPU backend "
        "for host arrays",
        what, p, attr.type == cudaMemoryTypeHost ? "pinned host" : "unregistered host"));
}

}  // namespace

void check_device_buffers(const void* in, const void* out, int n, int elem_bytes, std::size_t alignment) {
  check_buffers(in, out, n, elem_bytes);
  for (auto [p, what] : {std::pair{in, "input"}, std::pair{static_cast<const void*>(out), "output"}}) {
    if (reinterpret_cast<std::uintptr_t>(p) % alignment)
      throw std::invalid_argument(fmt::format(
          "{} pointer {} is not aligned to {} bytes, which this plan's vector accesses need (cudaMalloc "
          "pointers always are; plan with smaller --vector-bits for offset pointers)",
          what, p, alignment));
    check_device_pointer(p, what);
  }
}

Permuter::Permuter(const Bmmc& bmmc, int elem_bytes, const PermuteOptions& options) {
  PlanOptions o = options.plan;
  if (!options.jit) o.vector_bits = 0;  // the generic kernels move one element per lane access
  const DeviceCaps caps = device_caps();
  plan_ = make_plan(bmmc, elem_bytes, caps, o);
  if (!options.jit) return;
  KernelCache& cache = options.cache ? *options.cache : default_kernel_cache();
  sources_ = generate_cuda(plan_, options.codegen);
  for (const KernelSource& ks : sources_) kernels_.push_back(cache.get(ks.source, ks.kernel_name, caps.arch));
}

std::size_t Permuter::temp_bytes() const noexcept {
  return plan_.needs_temp() ? (std::size_t{1} << plan_.n()) * static_cast<std::size_t>(plan_.elem_bytes) : 0;
}

void Permuter::operator()(const void* in, void* out, cudaStream_t stream, void* temp) const {
  std::size_t align = 1;
  for (const Pass& p : plan_.passes) align = std::max(align, pass_alignment(p));
  check_device_buffers(in, out, plan_.n(), plan_.elem_bytes, align);
  void* scratch = temp;
  bool owned = false;
  if (plan_.needs_temp()) {
    if (!scratch) {
      check(cudaMallocAsync(&scratch, temp_bytes(), stream), "cudaMallocAsync(temp)",
            fmt::format("{} bytes for the two-pass temporary", temp_bytes()));
      owned = true;
    } else {
      check_buffers(in, scratch, plan_.n(), plan_.elem_bytes);
      check_buffers(scratch, out, plan_.n(), plan_.elem_bytes);
    }
  }
  const std::size_t passes = plan_.passes.size();
  for (std::size_t i = 0; i < passes; ++i) {
    const void* src = i == 0 ? in : scratch;
    void* dst = i + 1 == passes ? out : scratch;
    if (kernels_.empty()) {
      launch_generic(plan_.passes[i], src, dst, stream);
    } else {
      const KernelSource& ks = sources_[i];
      void* args[] = {&src, &dst};
      launch(kernels_[i], dim3(static_cast<unsigned>(ks.grid)), dim3(ks.block), ks.shared_bytes, stream, args);
    }
  }
  if (owned) check(cudaFreeAsync(scratch, stream), "cudaFreeAsync(temp)");
}

namespace {

struct PermuterKey {
  std::vector<BitVec> rows;
  BitVec c;
  int elem_bytes, device, variant, ept, threads, vector_bits, swizzle;
  bool jit, streaming;
  const void* cache;
  auto tie() const {
    return std::tie(rows, c, elem_bytes, device, variant, ept, threads, vector_bits, swizzle, jit, streaming, cache);
  }
  bool operator<(const PermuterKey& o) const { return tie() < o.tie(); }
};

std::mutex g_permuters_mutex;
std::map<PermuterKey, std::shared_ptr<const Permuter>> g_permuters;

}  // namespace

void permute(const Bmmc& bmmc, const void* in, void* out, int elem_bytes, cudaStream_t stream,
             const PermuteOptions& options) {
  const PermuterKey key{bmmc.matrix().row_list(),
                        bmmc.complement(),
                        elem_bytes,
                        current_device(),
                        static_cast<int>(options.plan.variant),
                        options.plan.elems_per_thread,
                        options.plan.threads_per_block,
                        options.plan.vector_bits,
                        options.plan.swizzle ? (*options.plan.swizzle ? 1 : 0) : -1,
                        options.jit,
                        options.codegen.streaming_hints,
                        options.cache};
  std::shared_ptr<const Permuter> p;
  {
    std::lock_guard lock(g_permuters_mutex);
    auto it = g_permuters.find(key);
    if (it != g_permuters.end()) p = it->second;
  }
  if (!p) {
    // Built outside the lock: the kernel cache already makes concurrent compiles of one kernel happen once.
    auto made = std::make_shared<const Permuter>(bmmc, elem_bytes, options);
    std::lock_guard lock(g_permuters_mutex);
    p = g_permuters.emplace(key, std::move(made)).first->second;
  }
  (*p)(in, out, stream);
}

void permute(std::string_view spec, const void* in, void* out, int n, int elem_bytes, cudaStream_t stream,
             const PermuteOptions& options) {
  permute(parse_spec(spec, n), in, out, elem_bytes, stream, options);
}

}  // namespace bmmc
