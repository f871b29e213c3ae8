// The bytes an in-place permutation must move: the bound an in-place pass is measured against (docs/DESIGN.md §8).
//
// DRAM is read and written in 32-byte sectors. An element x moves when f(x) ≠ x (and, with a mask, when x's
// bits under mask_bits equal mask_value: swap_index_bits' controls); any in-place kernel must read every sector
// that holds at least one element that moves and write it back, and need touch no other. So the bound is those
// sectors' bytes, read once and written once (traffic() = 2·bytes()), which at cudaMemcpy's rate takes
// memcpy time × bytes() / array_bytes (a copy of the array reads and writes it once). The array is taken to start
// on a sector boundary (every allocator of device memory aligns to at least 256 bytes), so a sector holds the
// elements whose indices agree above the low k = log2(32 / elem_bytes) bits (the whole array when it is smaller).
// Examples (tested verbatim): at n = 30 with 8-byte elements, swap:28,29 moves half the array (the elements with
// bits 28 and 29 unequal, in whole sectors); swap:0,29 touches every sector (each sector of four elements holds
// both values of bit 0); four disjoint swaps of bits 5..29 move 15/16 of it.
// Counted by structure, never by enumerating elements: the sectors left untouched are the solutions of a linear
// system over F2 (moved_bytes), which for a set of disjoint bit swaps has a closed form (swap_moved_bytes).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/plan/inplace_plan.hpp"

namespace bmmc {

/// A DRAM sector: the unit of a GPU's memory transactions.
inline constexpr int kSectorBytes = 32;

struct MovedBytes {
  std::uint64_t sectors = 0;       ///< sectors holding at least one element that moves
  std::uint64_t sector_bytes = 0;  ///< bytes per sector: 32, or the whole array when it is smaller
  std::uint64_t array_bytes = 0;   ///< 2^n · elem_bytes

  /// Bytes of the sectors that must move, each read once (and written once).
  std::uint64_t bytes() const noexcept { return sectors * sector_bytes; }
  /// DRAM traffic of the bound: every such sector read once and written once.
  double traffic() const noexcept { return 2.0 * static_cast<double>(bytes()); }
  /// bytes() / array_bytes: the bound's time as a fraction of a copy of the whole array (0 for the identity).
  double fraction() const noexcept {
    return array_bytes ? static_cast<double>(bytes()) / static_cast<double>(array_bytes) : 0.0;
  }
  friend bool operator==(const MovedBytes&, const MovedBytes&) = default;
};

/// The bound of any affine map f = (A, c) on 2^n elements of elem_bytes (1, 2, 4, 8, 16), optionally masked:
/// x moves when (x & mask_bits) == mask_value and A·x ⊕ c ≠ x. Exact, by rank: a sector's matching elements
/// are an affine subspace, and it is untouched when (A ⊕ I) maps all of them to c. Throws std::invalid_argument
/// for an unsupported element size, an array that does not fit in memory (array_bytes), mask bits beyond n, a
/// mask value outside the mask bits, or a mask bit the map moves (as make_swap_plan does).
MovedBytes moved_bytes(const Bmmc& f, int elem_bytes, BitVec mask_bits = 0, BitVec mask_value = 0);

/// The bound of an in-place plan: its whole permutation, element size and mask.
MovedBytes moved_bytes(const InPlacePlan& plan);

/// The bound of cuStateVec's custatevecSwapIndexBits (pairs as swap_index_bits takes them), by its closed form:
/// with F the sector-index bits outside the mask, 2^|F| sectors hold matching elements; all of them are touched
/// when some pair has a bit inside a sector (below k: a sector then holds both values of that pair's bits), else
/// all but the 2^(|F| − pairs) whose bits agree on every pair. Errors as moved_bytes and swap_index_bits.
MovedBytes swap_moved_bytes(int n, const std::vector<std::pair<int, int>>& pairs, int elem_bytes,
                            BitVec mask_bits = 0, BitVec mask_value = 0);

}  // namespace bmmc
