// Running a lowered program (lower.hpp) on host memory, multi-threaded: CpuProgram prepares it once (its
// schedule, one CpuPermuter per distinct permutation) and runs it any number of times; execute_cpu is one call.
//
// Three strategies, in place on `data` (2^n elements of the given DType); the passes each makes are
// schedule.hpp's: permutation passes run a CpuPermuter into a scratch buffer and back by pointer swap, leaf
// passes run leaf_pass_cpu through their layout (LeafGeometry). Fused is the default: its passes hold a tile of
// 2^14 keys in cache and apply each column with AVX2 (src/combinators/pair_simd.hpp).
// A scratch array of the same size is allocated when needed (the result always ends in `data`; a
// permutation whose result lands in scratch costs one more copy, which ExecStats counts as a pass).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bmmc/combinators/dtype.hpp"
#include "bmmc/combinators/lower.hpp"
#include "bmmc/combinators/schedule.hpp"
#include "bmmc/cpu/executor.hpp"

namespace bmmc {

struct ExecStats {
  std::size_t passes = 0;       ///< passes over the whole array actually made (permutations, leaves, copies)
  std::size_t permutations = 0; ///< of which BMMC permutations
  std::size_t leaf_passes = 0;  ///< of which leaf passes
  double ms = 0;                ///< wall time of the whole run
};

/// One leaf pass in place through `layout` (logical y = layout·x ⊕ c). threads 0: every core (capped by the
/// work); negative: std::invalid_argument, as is a leaf or type outside its enumeration.
void leaf_pass_cpu(const Bmmc& layout, const Leaf& leaf, void* data, DType t, int threads = 0);

/// One fused pass (several leaves, one tile per coset of its V') in place on 2^n elements.
void fused_leaf_pass_cpu(const FusedLeafPass& pass, int n, void* data, DType t, int threads = 0);
/// The CPU's fused cut: tiles of 2^14 keys (64 KiB of int32, L2-resident) in runs of 2^4 (64-byte lines of
/// int32), cut greedily (schedule.hpp); the same for every key type and n.
FusionOptions cpu_fusion_options() noexcept;

/// A lowered program prepared for the CPU: its schedule (schedule.hpp) and one CpuPermuter per distinct
/// permutation, made once; then run any number of times in place on 2^n elements of its DType. The GPU's
/// counterpart is cuda/program_gpu.hpp's GpuProgram; the front door over both is bmmc/program_runner.hpp.
class CpuProgram {
 public:
  /// Throws std::invalid_argument for a DType or thread count out of range, or a cut schedule() refuses.
  CpuProgram(const LoweredProgram& lp, DType t, ExecStrategy s = ExecStrategy::Fused, const CpuPolicy& options = {},
             const FusionOptions& fusion = cpu_fusion_options());

  /// Runs every pass in place on `data` (host memory, 2^n elements). A permutation ping-pongs with `scratch`
  /// (temp_bytes(), disjoint from data; allocated when null); the result always ends in `data`, with one more
  /// pass (a copy back) when an odd number of permutations left it in the scratch. `between(i)` is called
  /// before pass i and once more, with passes(), after the last one (for timing each pass). Throws
  /// std::invalid_argument for a null `data`.
  ExecStats operator()(void* data, void* scratch = nullptr,
                       const std::function<void(std::size_t)>& between = {}) const;

  int n() const noexcept { return n_; }
  DType dtype() const noexcept { return type_; }
  const std::vector<ScheduledPass>& schedule() const noexcept { return passes_; }
  const FusionOptions& fusion() const noexcept { return fusion_; }
  /// Passes over memory one run makes: the schedule's, plus a copy back after an odd number of permutations.
  std::size_t passes() const noexcept;
  std::size_t permutation_passes() const noexcept { return permutations_; }
  std::size_t leaf_passes() const noexcept { return passes_.size() - permutations_; }
  std::size_t fused_passes() const noexcept;
  /// Bytes of the scratch array a run needs (0 when the schedule has no permutation).
  std::size_t temp_bytes() const noexcept;
  /// What each pass of a run is: "permute", "fused", "leaf" or "copy back" (the vocabulary of GpuProgram).
  std::vector<std::string> pass_names() const;

 private:
  int n_;
  DType type_;
  int threads_;
  FusionOptions fusion_;
  std::vector<ScheduledPass> passes_;
  std::size_t permutations_ = 0;
  std::unordered_map<Bmmc, CpuPermuter> permuters_;  ///< one per distinct stage permutation (levels reuse them)
};

/// Runs every stage on `data`: CpuProgram(lp, t, s, options, fusion)(data). Throws std::invalid_argument for a
/// null pointer.
ExecStats execute_cpu(const LoweredProgram& lp, void* data, DType t, ExecStrategy s = ExecStrategy::Fused,
                      const CpuPolicy& options = {}, const FusionOptions& fusion = cpu_fusion_options());

}  // namespace bmmc
