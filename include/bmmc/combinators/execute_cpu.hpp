// Running a lowered program (lower.hpp) on host memory, multi-threaded.
//
// Two strategies, chosen per call, both in place on `data` (2^n elements of the given DType); the passes each
// makes are schedule.hpp's: permutation passes run permute_cpu into a scratch buffer and back by pointer
// swap, leaf passes run leaf_pass_cpu through their layout (LeafGeometry). Fused is the default: its passes
// hold a tile of 2^14 keys in cache and apply each column with AVX2 (src/combinators/pair_simd.hpp), about 8x
// faster than the folded strategy's 300 passes over memory for the network at n = 24 (BENCHMARKS.md "The network
// on the CPU").
// A scratch array of the same size is allocated when needed (the result always ends in `data`; a
// permutation whose result lands in scratch costs one more copy, which ExecStats counts as a pass).
#pragma once

#include <cstddef>

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
/// Runs every stage on `data`. Throws std::invalid_argument for a null pointer. `fusion` cuts the fused strategy's
/// tiles; the CPU's default is 2^14 elements (64 KiB of int32, L2-resident) in 64-byte lines.
ExecStats execute_cpu(const LoweredProgram& lp, void* data, DType t, ExecStrategy s = ExecStrategy::Fused,
                      const CpuPolicy& options = {}, const FusionOptions& fusion = {14, 4});

}  // namespace bmmc
