// The schedule of a lowered program (lower.hpp): the passes over memory an executor makes, in order, for
// one of the two strategies. Both executors (the CPU's execute_cpu.hpp and the GPU's cuda/program_gpu.hpp)
// run exactly this list, so what "folded" and "permute-then-leaf" mean is written once, here:
//  - PermuteThenLeaf: per stage, a permutation pass by its BMMC (none when it is the identity), then a leaf
//    pass on consecutive chunks (layout = identity) — the paper's literal compilation;
//  - Folded: per leaf, a leaf pass through the accumulated layout M (the composition of every stage
//    permutation so far; the data itself is never moved between leaves, LeafGeometry finds the chunks), then
//    one permutation pass by the final M when it is not the identity;
//  - Fused: the folded schedule with runs of consecutive leaf passes that fit one tile as one FusedLeafPass,
//    optionally after a relayout of the array that brings the most used pair directions to low memory bits.
// A pure function of its inputs: no memory, no threads. The pass counts equal LoweredProgram's
// passes_permute_then_leaf() and passes_folded() (tests check it).
#pragma once

#include <variant>
#include <cstdint>
#include <vector>

#include "bmmc/combinators/lower.hpp"

namespace bmmc {

enum class ExecStrategy { Folded, PermuteThenLeaf, Fused };

const char* to_string(ExecStrategy s) noexcept;
/// "folded" or "permute-then-leaf"; throws std::invalid_argument otherwise.
ExecStrategy parse_exec_strategy(const char* name);

/// Move the whole array: out[A·x ⊕ c] = in[x].
struct PermutePass {
  Bmmc perm;
  friend bool operator==(const PermutePass&, const PermutePass&) = default;
};
/// Apply `leaf` in place to every chunk of the array seen through `layout` (logical y = layout·x ⊕ c).
struct LeafPass {
  Bmmc layout;
  Leaf leaf;
  friend bool operator==(const LeafPass&, const LeafPass&) = default;
};
/// Several consecutive leaf passes of the folded schedule in ONE pass over memory (docs/DESIGN.md §10): the
/// array splits into the cosets of the tile space V' (`tile`, a reduced echelon basis whose first line_bits
/// vectors are e_0, e_1, ...: every coset is made of whole aligned runs of 2^line_bits elements), and every
/// leaf of `leaves` acts within one coset — its chunk directions lie in V' — so a block loads a coset, applies
/// the leaves in order and writes it back. Pair leaves only (leaf_bits = 1).
struct FusedLeafPass {
  std::vector<BitVec> tile;    ///< basis of V', lowest-bit pivots (Subspace order)
  std::vector<LeafPass> leaves;
  friend bool operator==(const FusedLeafPass&, const FusedLeafPass&) = default;
};

using ScheduledPass = std::variant<PermutePass, LeafPass, FusedLeafPass>;

/// How the fused strategy cuts the leaf passes: a tile holds 2^tile_bits elements and every coset is made of
/// aligned runs of 2^line_bits (5 = 128-byte lines of 4-byte keys on a GPU, 4 = 64-byte cache lines on a CPU).
struct FusionOptions {
  int tile_bits = 13;
  int line_bits = 5;
  /// Also try the schedule with the array first moved by a relayout R that makes the most used pair directions
  /// low memory bits (schedule()), and take it when it has fewer passes counting R's own pass and the last one.
  bool relayout = true;
  /// The program's result does not depend on the order of its input (a sorting network on keys of a total
  /// order): the relayout's first pass is left out, the input read as if R had already moved it.
  bool input_order_free = false;
  /// Among the cuts with the fewest passes, take the one of least cost (fused_pass_cost) for the GPU kernel:
  /// tiles whose runs of consecutive keys are longer and whose columns need fewer register windows. Off (the
  /// default, and the CPU's): the greedy longest runs (the same count; the later passes get what is left).
  bool cost_aware_cut = false;
  int key_bytes = 4;    ///< the cost model's key size (runs are charged by their bytes)
  int window_bits = 5;  ///< the kernel's register windows span this many dimensions (0: no windows, the shared kernel)
  friend bool operator==(const FusionOptions&, const FusionOptions&) = default;
};

/// What a caller chooses about running a program on any backend (the front door's ProgramOptions and the GPU
/// executor's GpuProgramOptions both hold it): the strategy, and for Fused the cut, where 0 (tile_bits) and −1
/// (line_bits) take the running backend's own (cpu_fusion_options of execute_cpu.hpp, gpu_fusion_options below).
struct ExecOptions {
  ExecStrategy strategy = ExecStrategy::Fused;
  int tile_bits = 0, line_bits = -1;
  bool relayout = true;           ///< FusionOptions::relayout
  bool input_order_free = false;  ///< FusionOptions::input_order_free
  friend bool operator==(const ExecOptions&, const ExecOptions&) = default;
};

/// `backend_cut` with the fields `o` sets: tile_bits when not 0, line_bits when not −1, relayout and
/// input_order_free always.
FusionOptions with_exec_options(FusionOptions backend_cut, const ExecOptions& o) noexcept;

/// The GPU executor's cut (cuda/program_gpu.hpp; cost-aware, key_bytes set) for arrays of 2^n keys, made of
/// 32-byte runs (line_bits 3 or 2: whole DRAM sectors): 8-byte keys in tiles of 2^13 (64 KiB); 4-byte keys in
/// tiles of 2^13 up to n = 24 (two blocks a SM) and of 2^14 above (one block a SM, fewer passes; docs/DESIGN.md
/// §10). src/combinators/tuning.hpp holds these values and the measurements behind them.
FusionOptions gpu_fusion_options(int key_bytes, int n) noexcept;

/// The relative cost the cost-aware cut gives a fused pass: 7 per register window (each costs a shared-memory
/// round trip) plus 10, 6 or 3 when the tile's runs of consecutive keys are only 32, 64 or 128 bytes
/// (src/combinators/tuning.hpp: the units and the measurements). `run_bytes` = 2^c key bytes, c the largest
/// with e_0 … e_(c−1) in the kernel's tile (the pass's tile widened to tile_bits dimensions with the lowest unit
/// vectors).
int fused_pass_cost(int windows, std::uint64_t run_bytes) noexcept;

/// The register windows the cost model counts for pair directions `dirs` (in order) on n bits: greedy runs whose
/// directions span at most `bits` dimensions (0 when bits is 0: the shared kernel has none) — the count
/// codegen/fused_source.hpp's plan_fused_kernel makes with R = bits (a test checks that they agree).
int register_windows(const std::vector<BitVec>& dirs, int n, int bits);

/// The passes, in execution order, that run `lp` with strategy `s`. Fused: the folded schedule with its runs of
/// consecutive leaf passes cut into the fewest FusedLeafPasses whose chunk directions, with e_0 … e_(line_bits−1),
/// span at most tile_bits dimensions each (greedy longest runs: feasibility is monotone in the run, so taking
/// the longest run each time gives the fewest passes; with cost_aware_cut, a dynamic programme over the run's
/// cut points keeps that fewest count and minimises the summed fused_pass_cost). With fusion.relayout it also cuts the schedule of the
/// array first moved by R — R⁻¹ sends e_0, e_1, … to the pair directions in order of use, so the most used
/// directions become low memory bits that every tile holds anyway — with a PermutePass{R} first (none when
/// input_order_free) and the last permutation M·R⁻¹, and returns whichever has fewer passes. Throws
/// std::invalid_argument for line_bits outside 0..tile_bits − 1 or tile_bits above 24 (a run of one leaf must
/// always fit: tile_bits > line_bits).
std::vector<ScheduledPass> schedule(const LoweredProgram& lp, ExecStrategy s, const FusionOptions& fusion = {});

}  // namespace bmmc
