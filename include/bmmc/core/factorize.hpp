// Triangular factorisations of bit matrices (LUP, ULP) and the paper's split of any BMMC into two tiled
// BMMCs (§5.2 "Factorizing BMMCs into tiled BMMCs"), the fallback the planner can use where the one-pass
// plan of docs/DESIGN.md §4 is not wanted (the benchmarks' "paper 2-pass" variant).
//
// Conventions (docs/DESIGN.md §1): row i = output bit i, column j = input bit j, row 0 / column 0 printed first.
// "Upper triangular" means a_ij = 0 for i > j (printed: zeros below the diagonal), "lower" a_ij = 0 for
// i < j. Over F2 an invertible triangular matrix has a unit diagonal, so L and U always do. P is a
// permutation matrix acting on the RIGHT, i.e. it permutes columns (= input bits): A = X·P means column
// j of A is column p(j) of X where P·e_j = e_{p(j)}. Elimination pivots over columns only and takes the
// lowest usable column, so P = I whenever A already has a plain LU (resp. UL) factorisation.
//
// Worked example, n = 3 (rows as integers: 0b010, 0b100, 0b101):
//
//        A            U         L         P
//       .1.          1..       1..       .1.
//       ..1    =     .11   ·   .1.   ·   1..        (A = U·L·P, the ulp() result)
//       1.1          ..1       .11       ..1
//
//   U·L has rows 1.. / ..1 / .11 (row 1 of U = e1 ⊕ e2 picks rows 1 and 2 of L: .1. ⊕ .11 = ..1);
//   multiplying by P on the right swaps columns 0 and 1: 1.. / ..1 / .11 → .1. / ..1 / 1.1 = A.
//   The same A as L·U·P (lup): L = 1.. / .1. / .11, U = I, P = .1. / ..1 / 1.. .
//
// The tiled split. A BMMC (A, c) is tiled for a tile of t bits (paper §5.1) when some columns i_1..i_t
// have an invertible block in rows 0..t-1 (the LOW output bits) and zeros in rows t..n-1. With
// A = U·L·P and R the bit-reverse (r_ij = 1 iff i + j = n-1, R² = I):
//
//     A = (U·R)·(R·L·P),   first = (R·L·P, 0),   second = (U·R, c),   (A, c) = second ∘ first.
//
// Why each factor is tiled, checked under OUR conventions (the paper's claim holds as stated, no
// adaptation was needed):
//   * U·R: column j of U·R is column n-1-j of U. Column k < t of U is zero below row k < t, and the top
//     t×t block of U is upper unitriangular, so columns n-t..n-1 of U·R (= columns t-1..0 of U) are tiled.
//   * R·L: row i of R·L is row n-1-i of L, so column j of R·L can be non-zero only in rows i ≤ n-1-j.
//     For j ≥ n-t that is i ≤ t-1: the bottom is zero, and the top block is anti-triangular with ones on
//     the anti-diagonal (l_jj = 1), hence invertible. Multiplying by P on the right moves column p(k) to
//     k, so R·L·P is tiled on the columns k with p(k) ≥ n-t (the paper's "p(n-n_tile), ..., p(n-1)" in
//     its convention for p).
//   These shapes hold for EVERY t in 0..n at once, so the split does not depend on the tile width; the
//   `tile_bits` argument is validated and the result is checked against min(tile_bits, n).
//   In the example above (n = 3, t = 2, c = 0b101): first = 1.1 / 1.. / .1. (tiled on columns 0, 2),
//   second = ..1 / 11. / 1.. with c = 0x5 (tiled on columns 1, 2); e.g. x = 1 ↦ 3 ↦ 1 = A·1 ⊕ c.
#pragma once

#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/bmmc.hpp"

namespace bmmc {

/// A = l·u·p: l lower unitriangular, u upper unitriangular, p a permutation matrix.
struct LupFactors {
  BitMatrix l, u, p;
};

/// A = u·l·p: u upper unitriangular, l lower unitriangular, p a permutation matrix (the paper's form).
struct UlpFactors {
  BitMatrix u, l, p;
};

/// a_ij = 0 for j > i (square matrices only; false for non-square).
bool is_lower_triangular(const BitMatrix& m);
/// a_ij = 0 for j < i (square matrices only; false for non-square).
bool is_upper_triangular(const BitMatrix& m);

/// LUP by Gaussian elimination with column pivoting. Throws std::invalid_argument for a non-square or
/// singular matrix (the message gives the shape, resp. the rank).
LupFactors lup(const BitMatrix& a);
/// ULP, computed as the LUP of R·A·R conjugated back by R. Same errors as lup().
UlpFactors ulp(const BitMatrix& a);

/// (A, c) = second ∘ first, both tiled (paper §5.1) for a tile of min(tile_bits, n) bits — in fact for
/// every tile width, see above.
struct TiledSplit {
  Bmmc first;   ///< (R·L·P, 0): applied first.
  Bmmc second;  ///< (U·R, c): applied second.
};

/// The paper's §5.2 split. Throws std::invalid_argument when tile_bits < 0. The default 5 is the paper's
/// 32-element tile (plan.hpp's kLaneBits; core sits below plan and cannot include it).
TiledSplit tiled_split(const Bmmc& a, int tile_bits = 5);

}  // namespace bmmc
