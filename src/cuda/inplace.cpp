// The CUDA backend of in-place plans (see inplace.hpp).
#include "bmmc/cuda/inplace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "bmmc/codegen/inplace_source.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/generic_kernel.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "bmmc/plan/plan_consistency.hpp"

namespace bmmc {

namespace {

PlanOptions inplace_options(const GpuOptions& options, int n) {
  PlanOptions o = gpu_plan_options(options.policy, n, device_caps());
  if (!options.jit) o.variant = Variant::Naive;  // the precompiled in-place kernel is the naive one
  return o;
}

}  // namespace

CudaInPlacePermuter::CudaInPlacePermuter(const Bmmc& bmmc, int elem_bytes, const GpuOptions& options)
    : plan_(make_inplace_plan(bmmc, elem_bytes, inplace_options(options, bmmc.n()))) {
  compile(options);
}

CudaInPlacePermuter::CudaInPlacePermuter(InPlacePlan plan, const GpuOptions& options) : plan_(std::move(plan)) {
  check_elem_bytes(plan_.elem_bytes);
  require_consistent_plan(plan_, "CudaInPlacePermuter");
  if (!options.jit)
    for (InPlacePass& p : plan_.passes)
      if (const auto* t = std::get_if<InvolutionPass>(&p))
        p = NaiveInvolutionPass{t->bmmc(), plan_.elem_bytes, 256, t->mask_bits, t->mask_value};
  compile(options);
}

void CudaInPlacePermuter::prepare() const {
  for (std::size_t i = 0; i < kernels_.size(); ++i) prepare_launch(kernels_[i], sources_[i].shared_bytes);
}

void CudaInPlacePermuter::compile(const GpuOptions& options) {
  if (!options.jit) return;
  KernelCache& cache = options.cache ? *options.cache : default_kernel_cache();
  const int arch = device_arch();
  sources_ = generate_cuda(plan_, options.codegen);
  for (const KernelSource& ks : sources_) kernels_.push_back(cache.get(ks.source, ks.kernel_name, arch));
}

std::size_t CudaInPlacePermuter::alignment() const noexcept {
  std::size_t align = static_cast<std::size_t>(plan_.elem_bytes);
  for (const InPlacePass& p : plan_.passes)
    if (const auto* t = std::get_if<InvolutionPass>(&p))
      align = std::max(align, static_cast<std::size_t>(t->tile.vector_bytes()));
  return align;
}

void CudaInPlacePermuter::operator()(void* data, cudaStream_t stream) const {
  check_inplace_buffer(data, plan_.n(), plan_.elem_bytes);
  check_device_pointer(data, "data");
  run_on_device_pointer(data, stream);
}

void CudaInPlacePermuter::run_on_device_pointer(void* data, cudaStream_t stream) const {
  check_inplace_buffer(data, plan_.n(), plan_.elem_bytes);
  if (reinterpret_cast<std::uintptr_t>(data) % alignment())
    throw std::invalid_argument(fmt::format(
        "data pointer {} is not aligned to {} bytes, which this plan's vector accesses need (cudaMalloc pointers "
        "always are; plan with smaller vector bits for offset pointers)",
        data, alignment()));
  for (std::size_t i = 0; i < plan_.passes.size(); ++i) {
    if (kernels_.empty()) {
      launch_generic_inplace(std::get<NaiveInvolutionPass>(plan_.passes[i]), data, stream);
    } else {
      const KernelSource& ks = sources_[i];
      void* args[] = {&data};
      launch(kernels_[i], dim3(static_cast<unsigned>(ks.grid)), dim3(ks.block), ks.shared_bytes, stream, args);
    }
  }
}

}  // namespace bmmc
