#include "bmmc/cuda/permute.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/generic_kernel.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "bmmc/plan/plan_consistency.hpp"

namespace bmmc {

namespace {

std::size_t pass_alignment(const Pass& p) {
  if (const auto* t = std::get_if<TilePass>(&p)) return static_cast<std::size_t>(t->vector_bytes());
  return static_cast<std::size_t>(std::get<NaivePass>(p).elem_bytes);
}


void check_alignment(const void* in, const void* out, std::size_t alignment) {
  for (auto [p, what] : {std::pair{in, "input"}, std::pair{out, "output"}})
    if (reinterpret_cast<std::uintptr_t>(p) % alignment)
      throw std::invalid_argument(fmt::format(
          "{} pointer {} is not aligned to {} bytes, which this plan's vector accesses need (cudaMalloc "
          "pointers always are; bmmc::permute picks narrower accesses for offset pointers, or plan with smaller "
          "vector bits)",
          what, p, alignment));
}

}  // namespace

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

void check_device_buffers(const void* in, const void* out, int n, int elem_bytes, std::size_t alignment) {
  check_buffers(in, out, n, elem_bytes);
  check_alignment(in, out, alignment);
  check_device_pointer(in, "input");
  check_device_pointer(out, "output");
}

CudaPermuter::CudaPermuter(const Bmmc& bmmc, int elem_bytes, const GpuOptions& options) {
  GpuPolicy policy = options.policy;
  if (!options.jit) policy.vector_bits = 0;  // the generic kernels move one element per lane access
  plan_ = make_plan(bmmc, elem_bytes, device_caps(), policy);
  compile(options);
}

CudaPermuter::CudaPermuter(Plan plan, const GpuOptions& options) : plan_(std::move(plan)) {
  require_consistent_plan(plan_, "CudaPermuter");
  if (!options.jit)
    for (const Pass& p : plan_.passes)
      if (const auto* t = std::get_if<TilePass>(&p); t && t->vector_bits != 0)
        throw std::invalid_argument(
            "CudaPermuter: the precompiled generic kernels move one element per lane access; this plan has "
            "vector_bits > 0 (plan with vector_bits 0 or use JIT)");
  compile(options);
}

void CudaPermuter::compile(const GpuOptions& options) {
  if (!options.jit) return;
  KernelCache& cache = options.cache ? *options.cache : default_kernel_cache();
  const int arch = device_arch();
  sources_ = generate_cuda(plan_, options.codegen);
  for (const KernelSource& ks : sources_) kernels_.push_back(cache.get(ks.source, ks.kernel_name, arch));
}

std::size_t CudaPermuter::temp_bytes() const noexcept { return plan_.temp_bytes(); }

void CudaPermuter::prepare() const {
  for (std::size_t i = 0; i < kernels_.size(); ++i) prepare_launch(kernels_[i], sources_[i].shared_bytes);
}

std::size_t CudaPermuter::alignment() const noexcept {
  std::size_t align = 1;
  for (const Pass& p : plan_.passes) align = std::max(align, pass_alignment(p));
  return align;
}

void CudaPermuter::operator()(const void* in, void* out, cudaStream_t stream, void* temp) const {
  check_device_buffers(in, out, plan_.n(), plan_.elem_bytes, alignment());
  run_on_device_pointers(in, out, stream, temp);
}

void CudaPermuter::run_on_device_pointers(const void* in, void* out, cudaStream_t stream, void* temp) const {
  check_buffers(in, out, plan_.n(), plan_.elem_bytes);
  check_alignment(in, out, alignment());
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

}  // namespace bmmc
