// Lowering: a combinator program → a flat list of stages "permute the whole array by a BMMC, then apply a
// leaf to every chunk", the form the CPU and GPU executors run.
//
// How (rewrite.hpp's rules, applied in one walk): every parm m f at any depth becomes bmmc(P) ; two f ;
// bmmc(P⁻¹); "two" distributes over sequencing, and two^k of a bmmc on n-k bits is that bmmc on the low bits
// of the top-level index (embed_low), while two^k of a leaf is the same leaf (it already acts on every chunk).
// So a program on n bits flattens to atoms — n-bit BMMCs and leaves — in execution order. Fusing every run of
// adjacent BMMCs into one (cancelling to nothing when they compose to the identity) leaves at most one
// permutation before each leaf, plus possibly a trailing one: the stages.
//
// Passes over memory (each reads and writes the whole array once):
//  - unfused:               one per atom (what running the expanded program step by step costs);
//  - permute-then-leaf:     one per non-identity stage permutation plus one per leaf (the paper's scheme with
//                           a separate leaf kernel);
//  - folded:                one per leaf plus one final permutation if the product of all permutations is not
//                           the identity. The data is never permuted between leaves: a leaf after permutation M
//                           acts on the chunks {M⁻¹(y) : y in one aligned chunk}, so it is run in place through M
//                           (LeafGeometry); M only decides which physical elements form a chunk and in what order.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "bmmc/combinators/program.hpp"

namespace bmmc {

using Atom = std::variant<Bmmc, Leaf>;

/// The program's atoms on p.n() bits, in execution order, nothing fused.
std::vector<Atom> flatten(const Program& p);

struct Stage {
  Bmmc perm;                ///< applied first (the identity when nothing needs moving)
  std::optional<Leaf> leaf; ///< then this leaf on every chunk; absent only for a trailing permutation
};

struct LoweredProgram {
  int n = 0;
  std::vector<Stage> stages;
  std::size_t bmmc_atoms = 0;  ///< before fusion
  std::size_t leaf_atoms = 0;

  std::size_t passes_unfused() const { return bmmc_atoms + leaf_atoms; }
  std::size_t passes_permute_then_leaf() const;
  std::size_t passes_folded() const;
  /// The composition of every stage permutation (the layout the folded executor ends in).
  Bmmc total_permutation() const;
  /// Non-identity permutations among the stages.
  std::size_t permutations() const;
};

/// flatten + fusion + cancellation.
LoweredProgram lower(const Program& p);

/// One line per stage: "stage i: permute <class> (identity) ; cswap", then a totals line.
std::string to_string(const LoweredProgram& lp, std::size_t max_stages = 64);

/// Where a leaf's chunks lie when it acts through the layout M (logical index y = M·x ⊕ c of the element at
/// physical x): chunk members differ by the vectors dirs (dirs[i] = M⁻¹ e_i, linear part), and each chunk has
/// exactly one member with zeros at the `pivots` bit positions (its representative). Representative number t
/// is t with zeros inserted at the pivots. The member at representative x ⊕ Σ k_i·dirs[i] has logical chunk
/// position k ⊕ low, low = the low `bits` bits of M·x ⊕ c (rows[i] = row i of M).
/// Pivots are the leading (highest) bits of an echelon basis of span(dirs), so a warp's 32 consecutive
/// representatives are 32 consecutive indices whenever no pivot is below bit 5 (coalesced on the GPU).
struct LeafGeometry {
  int n = 0;
  int bits = 0;
  int pivots[8] = {};   ///< ascending
  BitVec dirs[8] = {};
  BitVec rows[8] = {};
  BitVec low_c = 0;
};
/// Throws std::invalid_argument when the leaf's chunk has more than 2^8 elements or more than 2^n.
LeafGeometry leaf_geometry(const Bmmc& layout, int bits);

}  // namespace bmmc
