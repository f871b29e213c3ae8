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
// GpuProgram does all planning (and, with jit, NVRTC compiles) in its constructor; operator() only enqueues
// kernels on the stream, so it can be timed with events. Permutation kernels use the precompiled generic
// kernels by default because a sorting network has hundreds of distinct stage permutations (one NVRTC
// compile each); set jit to use specialised kernels (cached on disk after the first run).
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

namespace bmmc {

struct GpuProgramOptions {
  ExecStrategy strategy = ExecStrategy::Fused;
  bool jit = false;  ///< JIT-compiled permutation kernels instead of the generic ones
  /// Fused: the cut into tiles (unset, 0 and −1: gpu_fusion_options(key bytes, n) of schedule.hpp) and the kernel.
  int tile_bits = 0, line_bits = -1;
  bool relayout = true, input_order_free = false, cost_aware_cut = true;  ///< FusionOptions' (schedule.hpp)
  FusedKernelKind fused_kernel = FusedKernelKind::Pipelined;
  int reg_bits = 5;  ///< Registers: 2^reg_bits keys per thread
  /// FusedCodegenOptions::run_bits: kernel tiles grown to runs of 2^run_bits keys (0: never); −1: runs of 64 bytes
  /// (2^4 int32 keys: the n = 24 sort's passes of 32-byte runs took 67–84 µs, with 2^14 tiles 59–70).
  int run_bits = -1;
  /// FusedCodegenOptions::fixed_orientation; unset: on, except for 8-byte integer keys, whose compare folds a
  /// runtime orientation in for free (ISETP.XOR.EX: 6 SASS instructions a pair either way, while ptxas makes a
  /// known orientation a 64-bit min and max of 8) and whose kernels would only pay the swizzled addresses.
  std::optional<bool> fixed_orientation;
  friend bool operator==(const GpuProgramOptions&, const GpuProgramOptions&) = default;
};

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
/// permutation (52 µs on an H100) folds in with runs of 2^5 keys.
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
  /// program's time goes (`bmmc sort --stats`); the events cost ~1 µs a pass.
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
