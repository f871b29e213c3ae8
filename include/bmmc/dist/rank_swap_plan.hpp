// In place across ranks (docs/DESIGN.md §9.6): an involution f of an array split over G = 2^g ranks, run with
// no output buffer and no scratch — cuStateVec's multi-device index-bit swap, for any involutive BMMC that the
// plan below accepts. Plain data from a pure function; simulate.hpp runs it on the CPU.
//
// A pair {x, f(x)} can swap directly, one 16-byte vector with another, when f carries the low s = k + 5 index
// bits (carried_low_bits: the vector and the warp's run stay together), as the one-GPU direct pass does; the
// vectors may then lie on two ranks, and one thread, the pair's OWNER, loads both before storing either. The owner
// is chosen so that the ranks share the work: with lo = min(x, f(x)), the thread of lo swaps the pair when bit
// `owner_bit` of lo is 0, the thread of the other index when it is 1 (exactly one of the two is the owner, so each
// pair is swapped once whatever the bit). The planner takes the highest local bit j ≥ k + 5 that f fixes (column
// j = e_j): flipping bit j then maps pairs to pairs, so the pairs between two ranks split evenly between them — a
// rank-bit swap no longer leaves one rank idle while the other drives every pair — and j is the same in all the
// lanes of a warp, so no warp splits. Worked example: f swaps rank bit 32 with local bit 31 (m = 32, g = 1): the
// pairs are (rank 0, bit 31 set) ↔ (rank 1, bit 31 clear), lo always on rank 0; owner_bit 30, so rank 0 swaps
// the pairs whose bit 30 is clear and rank 1 the others. A
// BPC involution that moves some of the low s bits (a rank bit swapped with local bit 0, cuStateVec's hardest
// case) is conjugated first: f = Q·f'·Q with Q a local swap of each moved low bit with a high local bit that f
// fixes, so f' carries the low bits. Each rank then runs Q in place on its own data, the direct pass of f'
// across ranks, and Q again. Worked example (m = 10, g = 1, f swaps the rank bit 10 with local bit 0, 4-byte
// elements so s = 7): Q swaps bits 0 and 7 (the lowest local bit ≥ 7 that f fixes), f' swaps the rank bit with
// bit 7, and pairs of 16-byte vectors cross between the ranks.
#pragma once

#include <string>

#include "bmmc/core/bmmc.hpp"

namespace bmmc {

struct RankSwapPlan {
  Bmmc bmmc;            ///< the involution f on N = local_bits + rank_bits bits
  int rank_bits = 0;
  int local_bits = 0;
  int elem_bytes = 4;
  int vector_bits = 0;  ///< k: pairs of 2^k-element vectors swap (f' carries the low k + 5 bits, or k = 0)
  int owner_bit = -1;   ///< the pair {lo, hi} is swapped by the thread of lo if bit owner_bit of lo is 0, else of hi
  Bmmc conjugate;       ///< Q on m bits, a local involution; identity when f carries the low bits itself
  Bmmc direct;          ///< f' = diag(Q, I)·f·diag(Q, I): the pass across ranks

  int n() const { return bmmc.n(); }
  std::uint64_t ranks() const { return std::uint64_t{1} << rank_bits; }
  std::uint64_t local_elems() const { return std::uint64_t{1} << local_bits; }
  bool conjugated() const { return !conjugate.is_identity(); }

  friend bool operator==(const RankSwapPlan&, const RankSwapPlan&) = default;
};

/// The plan of involution `f` over 2^rank_bits ranks, with vectors of at most 16 bytes. An involution that moves
/// low bits and is not a BPC swaps single elements (vector_bits = 0: right, but not coalesced). Throws
/// std::invalid_argument when f is not an involution (saying to permute out of place instead), besides the
/// geometry checks of every distributed planner.
RankSwapPlan make_rank_swap_plan(const Bmmc& f, int rank_bits, int elem_bytes);

/// The ownership rule of the pass across ranks (the kernel emits the same test): whether the thread of index x
/// swaps the pair {x, y = f'(x)}. False for fixed points; for every pair exactly one of owns(x, y) and owns(y, x).
/// owner_bit −1: always the thread of the smaller index.
inline bool rank_swap_owns(int owner_bit, BitVec x, BitVec y) {
  if (x == y) return false;
  const BitVec lo = x < y ? x : y;
  const bool hi_owns = owner_bit >= 0 && ((lo >> owner_bit) & 1);
  return (x == lo) != hi_owns;
}

/// The owner bit for direct map f' over ranks of 2^local_bits elements moving vectors of 2^vector_bits elements:
/// the highest local bit ≥ vector_bits + 5 that f' fixes, else the highest fixed one ≥ vector_bits, else the top
/// local bit (still the same in every lane of a warp when it is ≥ vector_bits + 5), else −1.
int rank_swap_owner_bit(const Bmmc& direct, int local_bits, int vector_bits);

std::string describe(const RankSwapPlan& plan);

}  // namespace bmmc
