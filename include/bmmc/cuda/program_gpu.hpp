// Running a lowered combinator program (lower.hpp) on device memory, with the same strategies as the
// CPU executor (execute_cpu.hpp) and the same passes: those of schedule.hpp. A permutation pass is a
// CudaPermuter pass (ping-ponging with a temporary buffer), a leaf pass an in-place leaf kernel through its
// layout (leaf_kernels.hpp), a fused pass one JIT kernel of codegen/fused_source.hpp (a block loads a tile, runs
// every column of the pass on it, writes it back at the same positions; compiled in the constructor through the
// kernel cache, so on disk after the first run). Fused passes run in place, except that with an odd number of
// permutation passes the first one reads from the current buffer and writes into the other, so that the result
// ends in the caller's array; only a program with an odd number of permutations and no fused pass copies back. Fused is the
// default (docs/DESIGN.md §10); Folded makes one pass per column; PermuteThenLeaf is the paper's literal
// compilation with a separate leaf kernel.
// GpuProgram does all planning (and, with options.gpu.jit, NVRTC compiles) in its constructor, on the current
// device; operator() only enqueues kernels on the stream, so it can be timed with events. Permutation passes are
// CudaPermuters of options.gpu (GpuProgramOptions, cuda/program_options.hpp): JIT-specialised kernels by default,
// one NVRTC compile per distinct stage permutation (the fused schedule has one or two; permute-then-leaf one per
// level of a sorting network, cached on disk after the first run); gpu.jit = false takes the precompiled generic
// kernels instead.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bmmc/codegen/fused_source.hpp"
#include "bmmc/combinators/execute_cpu.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/cuda/program_options.hpp"

namespace bmmc {

/// The C type the generated kernels use for a DType ("int", "float", "unsigned long long", ...).
const char* cuda_key_type(DType t);
/// A fused pass in the code generator's terms (no GPU needed): the tile and, per leaf, its pair direction
/// M⁻¹·e_0, row 0 and c bit 0 of its layout M, its order, and which member the CPU executor calls the first one
/// (the one clear at the pivot of the highest tile coordinate of the direction). Throws std::invalid_argument
/// for a leaf that is not a pair, a tile basis not in Subspace's reduced form, or a pair outside the tile.
FusedTileSpec fused_tile_spec(const FusedLeafPass& pass, int n);
/// The fused pass `pass` with the permutation `then` that follows it folded into its store (FusedTileSpec::out_cols),
/// when its kernel writes whole output runs of at least 2^line_bits keys (the runs its own tiles are made of):
/// one pass over memory instead of two. Nothing otherwise (or for the shared kernel). Worked example: the sorting
/// network at n = 24 ends with a fused pass whose tile holds the preimages of output bits 0 … 7, so its final
/// permutation folds in with runs of 2^5 keys.
std::optional<FusedTileSpec> fused_then_permute(const FusedLeafPass& pass, const Bmmc& then, int n,
                                                const FusedCodegenOptions& codegen, int line_bits);
/// The FusionOptions and FusedCodegenOptions that `options` selects for keys of type t.
FusionOptions fusion_options(const GpuProgramOptions& options, DType t, int n);
FusedCodegenOptions fused_codegen_options(const GpuProgramOptions& options, DType t, int n);

class GpuProgram {
 public:
  GpuProgram(const LoweredProgram& lp, DType t, const GpuProgramOptions& options = {});

  /// Runs the program in place on `data` (2^n elements of the DType, device memory). `temp` (same size) is
  /// needed when temp_bytes() > 0; when null it is allocated stream-ordered. Asynchronous on `stream`.
  void operator()(void* data, cudaStream_t stream = nullptr, void* temp = nullptr) const;
  /// One run like operator(), with an event between every two passes, waited for: the milliseconds of each pass
  /// over memory in order (a final copy back is a pass of its own), named by pass_names(). For measuring where a
  /// program's time goes (`bmmc sort --stats`); the events add a little to each pass.
  std::vector<double> pass_ms(void* data, cudaStream_t stream = nullptr, void* temp = nullptr) const;
  /// What each pass of pass_ms() is: "permute", "fused", "fused (out of place)", "fused + permute" (a folded
  /// permutation), "leaf" or "copy back".
  std::vector<std::string> pass_names() const;

  std::size_t temp_bytes() const noexcept;
  /// Passes over memory one run makes (permutation passes, leaf passes and a copy back when one is needed).
  std::size_t passes() const noexcept { return passes_; }
  std::size_t permutation_passes() const noexcept { return permutation_passes_; }
  /// Permutations folded into the store of the fused pass before them (fused_then_permute): no pass of their own.
  std::size_t folded_permutations() const noexcept { return folded_permutations_; }
  std::size_t leaf_passes() const noexcept { return leaf_passes_; }
  /// Of the leaf passes, those that run several columns in one tile (Fused).
  std::size_t fused_passes() const noexcept { return fused_passes_; }
  /// The generated source of every fused pass, in order.
  std::vector<KernelSource> fused_sources() const;

 private:
  struct Op {
    std::shared_ptr<const CudaPermuter> permute;  ///< set for a permutation pass
    std::shared_ptr<const KernelSource> fused;    ///< set for a fused pass (with `kernel` and `grid`)
    Kernel kernel;
    std::uint64_t grid = 0;                       ///< blocks launched (Pipelined: persistent, at most the SMs can hold)
    bool out_of_place = false;                    ///< a fused pass from the current buffer into the other one
    bool folded = false;                          ///< with a permutation folded into its store (fused_then_permute)
    LeafGeometry geometry;                     ///< else a leaf pass
    Leaf leaf;
  };
  /// Enqueues the run; calls between(i) before pass i and between(passes) after the last one.
  void enqueue(void* data, cudaStream_t stream, void* temp, const std::function<void(std::size_t)>& between) const;

  int n_;
  DType type_;
  std::vector<Op> ops_;
  std::size_t passes_ = 0, permutation_passes_ = 0, leaf_passes_ = 0, fused_passes_ = 0, folded_permutations_ = 0;
};

}  // namespace bmmc
