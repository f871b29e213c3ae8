// Internal to the combinators: the compare-swaps of one pair leaf over a fused pass's buffer, a 32-byte AVX2
// vector of keys (eight 4-byte or four 8-byte ones) per instruction.
//
// The CPU's fused pass (execute_cpu.cpp) holds a tile of 2^t keys in a buffer and applies each leaf column to
// it: the pairs (i, i ⊕ δ) for every i whose bit h (δ's highest) is clear, member i taking the min exactly when
// parity(orient & i) = s (orient: the leaf's logical row seen on buffer indices, linear in i; s folds in the
// chunk's constant and the descending flag). A scalar loop spends ~1.6 ns a pair on this (index arithmetic, a
// parity and a select per pair) and made the fused CPU sort compute-bound. Here a block of L consecutive
// buffer indices i = Lu … Lu+L−1 (L = 8 keys of 4 bytes, 4 of 8) shares everything but its low bits, so
//  - δ ≥ L pairs the block with the block at Lu ⊕ (δ & ~(L−1)), lane j with lane j ⊕ (δ & (L−1)) (a vpermd when
//    that is not 0): min and max, then two blends with the lane pattern parity(orient & j) ⊕ parity(orient & Lu) ⊕ s;
//  - δ < L pairs lanes of one vector: the vector against itself permuted, one blend picks each lane's side.
// Worked example (int32): δ = 0b1001, orient = 0b0110, s = 0: block 0 pairs with block 8 (lanes j and j ⊕ 1),
// lane j of block 0 takes the min where parity(0b0110 & j) = 0, i.e. j ∈ {0, 1, 6, 7}.
// Results are bitwise those of the scalar compare_swap, floats included: min and max come from "b < a" asked
// lane by lane with the pair's members in order (an ordered less-than, false for NaN, as the scalar `<`).
#pragma once

#include <cstdint>

#include "bmmc/combinators/dtype.hpp"

namespace bmmc {

/// Applies the pairs of (δ = delta, orient, s) to the `size` keys of type t at `keys` with AVX2 and returns true;
/// returns false, touching nothing, where the CPU has no AVX2 or the keys fill less than one vector (the caller's
/// scalar loop runs instead). size is a power of two, δ non-zero and below size.
bool compare_swap_pairs_avx2(void* keys, DType t, std::uint64_t size, std::uint64_t delta, std::uint64_t orient, int s);

}  // namespace bmmc
