// In-place plans (docs/DESIGN.md §8): permuting an array with no output buffer and no scratch.
//
// A pass that reads and writes the same array can only run an involution f (f∘f = id ⟺ A² = I and A·c = c):
// then the cosets of an A-invariant tile space V' pair up, f(C) = C' and f(C') = C, and one block reads both
// cosets into shared memory before it writes either, so no element is overwritten before it is read. Any
// other BMMC runs as a product of involutions (core/involution.hpp), one in-place pass each.
//
// InvolutionPass is a TilePass (plan.hpp) whose V' satisfies A·V' = V', plus the partner map: the coset
// of block b lands on the coset of block partner(b) = partner_base ⊕ Σ b_i·partner_cols[i] (affine in b, an
// involution on block indices). Block b
//   - returns at once when partner(b) < b (the partner moves both cosets),
//   - returns when its coset is fixed pointwise (partner(b) = b, A·v = v on V' and z = x0): a swap of two high
//     bits therefore touches only the half of the array that moves,
//   - returns when the mask does not match (x0 & mask_bits ≠ mask_value; swap_index_bits' controls),
//   - otherwise reads its coset (and the partner's when partner(b) ≠ b) in phase 1, synchronises, and writes
//     each tile to the image coset in phase 2, exactly as the out-of-place tile kernel does.
// NaiveInvolutionPass: thread x swaps x and f(x) when f(x) > x, with no tile. With vector_bits = 0 it serves
// arrays of fewer than 32 elements, masks on tile bits and runs without JIT. With vector_bits = k > 0 it is the
// direct pass for involutions that carry the low k + 5 index bits (carried_low_bits: swaps among high bits,
// controlled swaps): each thread swaps a vector of 2^k elements with its image, so a warp reads and writes
// runs of 32 vectors on both sides, with no shared memory and no barrier (measured faster than a tile that A
// fixes pointwise: BENCHMARKS.md "In place"). Example: `bmmc plan swap:0,29 --n 30 --in-place` prints one involution pass whose
// tile holds bits 0..5 and 29, so every block moves its own coset onto itself.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/plan/plan.hpp"
#include "bmmc/plan/plan_check.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {

struct NaiveInvolutionPass {
  Bmmc bmmc;                    ///< the involution
  int elem_bytes = 4;
  int threads_per_block = 256;
  BitVec mask_bits = 0;         ///< only indices x with (x & mask_bits) == mask_value move
  BitVec mask_value = 0;
  int vector_bits = 0;          ///< each thread moves 2^vector_bits consecutive elements (f carries these bits;
                                ///< the mask names none of them)

  int n() const { return bmmc.n(); }
  /// Threads' worth of blocks: one thread per vector of 2^vector_bits elements.
  std::uint64_t blocks() const;
  friend bool operator==(const NaiveInvolutionPass&, const NaiveInvolutionPass&) = default;
};

struct InvolutionPass {
  TilePass tile;                        ///< tile.bmmc is the involution; A·V' = V'
  std::vector<BitVec> partner_cols;     ///< partner(b) = partner_base ⊕ Σ b_i·partner_cols[i]
  BitVec partner_base = 0;
  bool tile_fixed = false;              ///< A·v = v for every v in V'
  BitVec mask_bits = 0;                 ///< block bits only (never inside V'); 0 = no mask
  BitVec mask_value = 0;

  int n() const { return tile.n(); }
  const Bmmc& bmmc() const { return tile.bmmc; }
  std::uint64_t partner(std::uint64_t b) const noexcept { return partner_base ^ xor_of_columns(partner_cols, b); }
  /// Two tiles: the block's coset and its partner's.
  std::uint64_t shared_bytes() const { return 2 * tile.shared_bytes(); }
  friend bool operator==(const InvolutionPass&, const InvolutionPass&) = default;
};

using InPlacePass = std::variant<NaiveInvolutionPass, InvolutionPass>;

struct InPlacePlan {
  Bmmc bmmc;                         ///< the whole permutation (the passes compose to it)
  int elem_bytes = 4;
  std::string route;                 ///< how it was factored: "identity", "involution", "bpc", "unipotent", ...
  std::vector<InPlacePass> passes;   ///< involutions, applied in order, each in place
  BitVec mask_bits = 0;              ///< swap_index_bits' mask (a single pass), 0 = none
  BitVec mask_value = 0;

  int n() const { return bmmc.n(); }
  /// Every pass is one involution; a plan of one pass is itself an involution.
  bool involution() const { return passes.size() <= 1; }
  friend bool operator==(const InPlacePlan&, const InPlacePlan&) = default;
};

const Bmmc& pass_bmmc(const InPlacePass& p);

/// The in-place pass of one involution. Throws std::invalid_argument naming the map when f is not an
/// involution ("the involution-only path"), or when the mask is not a set of bits that f leaves alone.
InPlacePass make_involution_pass(const Bmmc& f, int elem_bytes, const PlanOptions& options = {},
                                 BitVec mask_bits = 0, BitVec mask_value = 0);

/// Any BMMC in place: factor_involutions, then one pass per factor (identity: no pass). Options as for
/// make_plan; max_tile_bytes bounds the two tiles a block holds together.
InPlacePlan make_inplace_plan(const Bmmc& f, int elem_bytes, const PlanOptions& options = {});

/// Checks a swap_index_bits-style mask for f: bits within n, the value within the bits, and only bits f leaves in
/// place (row i of A is e_i and c_i = 0). Throws std::invalid_argument naming the first fault.
void check_inplace_mask(const Bmmc& f, BitVec mask_bits, BitVec mask_value);

/// cuStateVec's custatevecSwapIndexBits: swap index bits pairs[i].first ↔ pairs[i].second (disjoint pairs)
/// for the indices whose bits under mask_bits equal mask_value (mask bits may not be swapped). One pass.
InPlacePlan make_swap_plan(int n, const std::vector<std::pair<int, int>>& pairs, int elem_bytes,
                           const PlanOptions& options = {}, BitVec mask_bits = 0, BitVec mask_value = 0);

/// Text description: route, passes, each pass's tile and partner map.
std::string describe(const InPlacePlan& plan);

/// Proves an in-place plan (keep n ≲ 24): each pass's tile is correct, coalesced and conflict-free
/// (check_pass), and its schedule is race-free — the blocks that run own disjoint sets of elements, each
/// writes only elements it has read before its barrier, the blocks that return early cover only elements
/// the pass leaves in place, and every element that moves is owned by some block. The passes compose to
/// the plan's permutation.
CheckReport check_inplace_plan(const InPlacePlan& plan);

}  // namespace bmmc
