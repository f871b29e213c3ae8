// The schedule of a lowered program (lower.hpp): the passes over memory an executor makes, in order, for
// one of the two strategies. Both executors (the CPU's execute_cpu.hpp and the GPU's cuda/program_gpu.hpp)
// run exactly this list, so what "folded" and "permute-then-leaf" mean is written once, here:
//  - PermuteThenLeaf: per stage, a permutation pass by its BMMC (none when it is the identity), then a leaf
//    pass on consecutive chunks (layout = identity) — the paper's literal compilation;
//  - Folded: per leaf, a leaf pass through the accumulated layout M (the composition of every stage
//    permutation so far; the data itself is never moved between leaves, LeafGeometry finds the chunks), then
//    one permutation pass by the final M when it is not the identity.
// A pure function of its inputs: no memory, no threads. The pass counts equal LoweredProgram's
// passes_permute_then_leaf() and passes_folded() (tests check it).
#pragma once

#include <variant>
#include <vector>

#include "bmmc/combinators/lower.hpp"

namespace bmmc {

enum class ExecStrategy { Folded, PermuteThenLeaf };

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
using ScheduledPass = std::variant<PermutePass, LeafPass>;

/// The passes, in execution order, that run `lp` with strategy `s`.
std::vector<ScheduledPass> schedule(const LoweredProgram& lp, ExecStrategy s);

}  // namespace bmmc
