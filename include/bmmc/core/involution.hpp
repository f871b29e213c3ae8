// Involutions: factoring any BMMC into BMMCs g with g∘g = id, for in-place permutation.
//
// What it is for. A pass that permutes an array in place, with no second buffer, can only run an
// involution: it swaps elements in pairs (out[g(x)] = in[x] and out[x] = in[g(x)] together), which is a
// permutation exactly when g∘g = id. So any BMMC f is run in place as a product of involutions
// f = g_k ∘ … ∘ g_1, one in-place pass each (g_1 first); factor_involutions finds a short such product, and
// swap_index_bits builds the commonest involution, a set of disjoint index-bit swaps (cuStateVec's
// custatevecSwapIndexBits). Conventions as in bmmc.hpp: f = (A, c) maps x to A·x ⊕ c, compose(f, g) = f∘g
// applies g first, row i of A is output bit i, matrices print row 0 first, column 0 first.
//
// Worked example (tested verbatim): the Gray code on n = 3 bits, y = x ⊕ (x >> 1), is not an involution
// (4 ↦ 6 ↦ 5) but is the product of two (route "unipotent"):
//
//        A           g_2         g_1
//       11.         11.         1.1
//       .11    =    .1.    ·    .11          f = g_2 ∘ g_1, all complements 0
//       ..1         ..1         ..1
//
//   g_1 = I ⊕ (bit 2 into bits 0 and 1) swaps 4 with 7 and 5 with 6; g_2 = I ⊕ (bit 1 into bit 0) swaps 2
//   with 3 and 6 with 7. So 4 ↦ 7 ↦ 6 = 4 ⊕ (4 >> 1), as the Gray code says, in two in-place passes.
//
// Routes and bounds (the number of factors; `bound` in InvolutionFactorization), tried in this order:
//   "identity"     0   A = I, c = 0.
//   "involution"   1   A² = I and A·c = c.
//   "bpc"          ≤ 2 A a permutation matrix: each cycle of the bit permutation is the product of two
//                      reflections of the cycle, and c is moved into them by conjugating with a translation.
//   "unipotent"    ≤ 2 A ⊕ I nilpotent (the Gray code, unitriangular maps): A = S·(S·A) with S the involution
//                      t ↦ t/(1+t) on every Jordan chain of A ⊕ I; the complement always fits (proof in
//                      involution.cpp), and when A² = I but A·c ≠ c the two factors are (A, c') then (I, c'').
//   general        ≤ 4 always, ≤ 3 for about 99% of random matrices with n ≥ 6 (tests/core/involution_test.cpp
//                      records the histogram). Tried: "involution-unipotent", A = B·J with J = I ⊕ U·Vᵀ an
//                      involution of rank 1 or 2 and B unipotent, found by pole placement (3 factors);
//                      "permutation-unipotent", an LUP/ULP of A or Aᵀ with one triangular factor I and an
//                      involution left over (3); "general", Q⁻¹·A·Q = L·U with L, U unitriangular, so
//                      A = (Q·L·Q⁻¹)·(Q·U·Q⁻¹), 2 + 2 (fewer when L or U is an involution). Q = I when A's
//                      leading principal minors are all 1, otherwise Q is built from at most n transvections,
//                      which always succeeds (so no LUP fallback, with its ≤ 6, is ever needed); for n ≤ 8
//                      random Q are also tried in search of 2 or 3.
// Why these bounds: Gustafson, Halmos and Radjavi (1976) proved every invertible matrix is a product of at
// most four involutions; Wonenburger (1966) and Djoković (1967) that the products of two involutions are
// exactly the matrices similar to their inverse (unipotent ones are: the map above conjugates A to A⁻¹), so
// 2 is optimal for the unipotent and BPC classes and no general method does better than 3 for a matrix not
// similar to its inverse (most are not); Sourour (1986) that a non-scalar matrix is similar to L·U with
// unitriangular L, U, which the "general" route constructs. The bounds above include the complement c: in
// every route the last two linear factors are a unipotent's pair (S·B, S), whose fixed vectors absorb any
// complement (no translation (I, c') is ever appended after such a pair), or a BPC's, whose complement is
// handled directly; only where a route's last linear factor is an involution standing alone may c cost one
// translation more, and the route's count includes it.
// Optimality: on every affine map of up to 3 bits the count is the fewest possible (the tests compare with a
// breadth-first search). Products of two involutions that are neither BPC nor unipotent (matrices similar to
// their inverse, in general) are found only by luck of the search, for small n: on the 322,560 affine maps
// of 4 bits, 5,616 (1.7%) get 3 where 2 would do (measured once, off-line), and none gets 4.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bmmc/core/bmmc.hpp"

namespace bmmc {

/// f∘f = id  ⟺  A² = I and A·c = c.
bool is_involution(const Bmmc& f);

/// The number s of low index bits that f carries through untouched: f(x) = f(x with bits 0..s-1 cleared) | (x
/// with bits s.. cleared), i.e. for i < s column i and row i of A are e_i and c_i = 0. Runs of 2^s consecutive
/// elements then land on runs of 2^s consecutive elements in order. Example: swap_index_bits(30, {{28, 29}})
/// carries 28 bits, bit-reverse none.
int carried_low_bits(const Bmmc& f);

/// Involutions g_1..g_k with f = g_k ∘ … ∘ g_1 (g_1 applied first); each is_involution and none is the
/// identity; empty for the identity. The shortest this file's routes find (bounds above; the route and its
/// bound come from factor_involutions_explained). Deterministic: the searches use fixed seeds. The result is
/// checked (product and every factor) before it is returned; a failed check is a std::logic_error.
std::vector<Bmmc> factor_involutions(const Bmmc& f);

/// The BMMC on n bits (0..64) that swaps index bits pairs[i].first <-> pairs[i].second (cuStateVec's
/// custatevecSwapIndexBits vocabulary); other bits stay. Pairs must be disjoint, in 0..n-1 and i != j;
/// otherwise std::invalid_argument naming the offending pair by its position and value. The result is a BP
/// involution; no pairs give the identity. Example: swap_index_bits(4, {{0, 3}}).apply(0b0001) == 0b1000.
Bmmc swap_index_bits(int n, const std::vector<std::pair<int, int>>& pairs);

/// factor_involutions with the route it took and that route's bound, for printing.
struct InvolutionFactorization {
  std::vector<Bmmc> factors;  ///< g_1 first, as factor_involutions returns them
  /// "identity", "involution", "bpc", "unipotent", "involution-unipotent", "permutation-unipotent" or
  /// "general" (see above).
  std::string route;
  /// The most factors the route can take: 0, 1, 2, 2, then 4 for the three general routes (the bound of
  /// the class, not of the route's best case: "involution-unipotent" itself gives 3).
  int bound = 0;
};

InvolutionFactorization factor_involutions_explained(const Bmmc& f);

}  // namespace bmmc
