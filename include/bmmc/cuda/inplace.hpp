// The CUDA backend of in-place plans (plan/inplace_plan.hpp): one JIT-compiled kernel per involution pass,
// launched in order on one stream over a single device buffer, with no scratch memory.
//
// CUB style like CudaPermuter: plan and compile once, run many times on any stream. The pointer is validated
// (null, unaligned, host memory) before the first launch; once the first pass is enqueued nothing on the host
// side can fail, so a multi-pass run never stops between passes for a reason bmmc could have checked (a CUDA
// launch error there is reported as such and leaves the data between two involutions). With JIT off every
// pass runs as the precompiled naive in-place kernel (one thread per index).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/core/bmmc.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/plan/device_caps.hpp"
#include "bmmc/plan/inplace_plan.hpp"

namespace bmmc {

class CudaInPlacePermuter {
 public:
  /// Plans (make_inplace_plan with gpu_plan_options for the current device: the two tiles of a block share
  /// the budget one out-of-place tile gets; JIT off: naive passes) and compiles every pass.
  CudaInPlacePermuter(const Bmmc& bmmc, int elem_bytes, const GpuOptions& options = {});
  /// Runs `plan` as given (e.g. make_swap_plan's masked swaps).
  explicit CudaInPlacePermuter(InPlacePlan plan, const GpuOptions& options = {});

  /// Permutes the 2^n elements at `data` (device memory of the current device) in place on `stream`.
  void operator()(void* data, cudaStream_t stream = nullptr) const;
  /// The same for a pointer already known to be device memory (skips cudaPointerGetAttributes).
  void run_on_device_pointer(void* data, cudaStream_t stream = nullptr) const;

  /// Loads every JIT kernel into the current device's context now (prepare_launch, launch.hpp), so that no call
  /// loads one lazily between collectives.
  void prepare() const;

  const InPlacePlan& plan() const noexcept { return plan_; }
  /// The alignment in bytes `data` needs: the widest lane access of any pass.
  std::size_t alignment() const noexcept;
  bool jit() const noexcept { return !kernels_.empty(); }
  const std::vector<KernelSource>& sources() const noexcept { return sources_; }

 private:
  void compile(const GpuOptions& options);
  InPlacePlan plan_;
  std::vector<KernelSource> sources_;
  std::vector<Kernel> kernels_;
};

}  // namespace bmmc
