// Running a lowered combinator program (lower.hpp) on device memory, with the same two strategies as the
// CPU executor (execute_cpu.hpp) and the same passes: those of schedule.hpp. A permutation pass is a
// CudaPermuter pass (ping-ponging with a temporary buffer, plus a copy back when the count is odd), a leaf
// pass an in-place leaf kernel through its layout (leaf_kernels.hpp). Folded is the default;
// PermuteThenLeaf is the paper's literal compilation with a separate leaf kernel.
// GpuProgram does all planning (and, with jit, NVRTC compiles) in its constructor; operator() only enqueues
// kernels on the stream, so it can be timed with events. Permutation kernels use the precompiled generic
// kernels by default because a sorting network has hundreds of distinct stage permutations (one NVRTC
// compile each); set jit to use specialised kernels (cached on disk after the first run).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "bmmc/combinators/execute_cpu.hpp"
#include "bmmc/cuda/permute.hpp"

namespace bmmc {

struct GpuProgramOptions {
  ExecStrategy strategy = ExecStrategy::Folded;
  bool jit = false;  ///< JIT-compiled permutation kernels instead of the generic ones
};

class GpuProgram {
 public:
  GpuProgram(const LoweredProgram& lp, DType t, const GpuProgramOptions& options = {});

  /// Runs the program in place on `data` (2^n elements of the DType, device memory). `temp` (same size) is
  /// needed when temp_bytes() > 0; when null it is allocated stream-ordered. Asynchronous on `stream`.
  void operator()(void* data, cudaStream_t stream = nullptr, void* temp = nullptr) const;

  std::size_t temp_bytes() const noexcept;
  /// Passes over memory one run makes (permutation passes, leaf passes and a copy back when one is needed).
  std::size_t passes() const noexcept { return passes_; }
  std::size_t permutation_passes() const noexcept { return permutation_passes_; }
  std::size_t leaf_passes() const noexcept { return leaf_passes_; }

 private:
  struct Op {
    std::shared_ptr<const CudaPermuter> permute;  ///< set for a permutation pass
    LeafGeometry geometry;                     ///< else a leaf pass
    Leaf leaf;
  };
  int n_;
  DType type_;
  std::vector<Op> ops_;
  std::size_t passes_ = 0, permutation_passes_ = 0, leaf_passes_ = 0;
};

}  // namespace bmmc
