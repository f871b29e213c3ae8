// CudaDigitPermuter: runs a DigitPlan (bmmc/plan/digit_plan.hpp) on the current device — the JIT kernel of
// codegen/digit_source.hpp, or with JIT off the precompiled generic kernel (digit_generic.cu), which executes
// the same formulas from a parameter block (maps of up to kDigitGenericMaxAxes canonical axes).
//
// In place (in == out) runs for involutions only: one thread per element swaps it with its image when the
// image is larger. Errors: std::invalid_argument for bad pointers (null, not device memory, overlapping,
// misaligned for the plan's element) before anything is enqueued; CudaError / NvrtcError otherwise.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/plan/digit_plan.hpp"

namespace bmmc {

/// The most canonical axes the generic kernel takes (JIT kernels take any number).
inline constexpr int kDigitGenericMaxAxes = 48;

class CudaDigitPermuter {
 public:
  CudaDigitPermuter(const DigitMap& map, int elem_bytes, const GpuOptions& options = {});
  explicit CudaDigitPermuter(DigitPlan plan, const GpuOptions& options = {});

  /// Enqueues out = map(in) on `stream` (in == out: in place, involutions only).
  void operator()(const void* in, void* out, cudaStream_t stream = nullptr) const;
  /// The same without asking the runtime whether the pointers are device memory (the caller knows).
  void run_on_device_pointers(const void* in, void* out, cudaStream_t stream = nullptr) const;

  const DigitPlan& plan() const noexcept { return plan_; }
  bool jit() const noexcept { return static_cast<bool>(kernel_); }
  const KernelSource& source() const noexcept { return source_; }
  /// The alignment in and out need: the widest access of either side (a vector of elements).
  std::size_t alignment() const noexcept {
    return static_cast<std::size_t>(plan_.elem_bytes) *
           static_cast<std::size_t>(std::max(plan_.read_vector, plan_.write_vector));
  }

 private:
  DigitPlan plan_;
  bool involution_ = false;
  KernelSource source_;
  Kernel kernel_;
};

/// The precompiled kernels (src/cuda/digit_generic.cu): the tile pass, and the in-place swap of an involution.
void launch_digit_generic(const DigitPlan& plan, const void* in, void* out, cudaStream_t stream);
void launch_digit_inplace(const DigitPlan& plan, void* data, cudaStream_t stream);

}  // namespace bmmc
