#include "bmmc/core/factorize.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

namespace bmmc {

namespace {

// Reverses the low n bits of v (bit i ↦ bit n-1-i).
BitVec reverse_low_bits(BitVec v, int n) {
  BitVec r = 0;
  for (int i = 0; i < n; ++i) r |= ((v >> i) & 1) << (n - 1 - i);
  return r;
}

// R·M·R for the n×n bit-reverse R: entry (i, j) becomes m_{n-1-i, n-1-j}. Conjugating by R turns lower
// triangular into upper triangular and back, and keeps permutation matrices permutation matrices.
BitMatrix conjugate_by_reverse(const BitMatrix& m) {
  const int n = m.rows();
  BitMatrix out(n, n);
  for (int i = 0; i < n; ++i) out.set_row(i, reverse_low_bits(m.row(n - 1 - i), n));
  return out;
}

BitMatrix reverse_matrix(int n) {
  BitMatrix r(n, n);
  for (int i = 0; i < n; ++i) r.set(i, n - 1 - i, true);
  return r;
}

// Swaps bits j and k of w.
BitVec swap_bits(BitVec w, int j, int k) {
  if (((w >> j) ^ (w >> k)) & 1) w ^= (BitVec{1} << j) | (BitVec{1} << k);
  return w;
}

void check_square(const BitMatrix& a, const char* what) {
  if (!a.square())
    throw std::invalid_argument(
        fmt::format("{} factorisation needs a square matrix; this one is {}x{}", what, a.rows(), a.cols()));
}

[[noreturn]] void throw_singular(const BitMatrix& a, const char* what) {
  throw std::invalid_argument(fmt::format(
      "{} factorisation needs an invertible matrix; this {}x{} matrix is singular (rank {} < {})", what,
      a.rows(), a.cols(), a.rank(), a.rows()));
}

// A = L·U·P by Gaussian elimination with COLUMN pivoting (the pivots move columns, never rows, so the row
// order — the output bits — is kept and L stays lower triangular). `what` names the caller's factorisation
// in error messages.
LupFactors lup_impl(const BitMatrix& a, const char* what) {
  check_square(a, what);
  const int n = a.rows();
  std::vector<BitVec> m = a.row_list();
  // col_of[k]: the column of A that now sits at position k of the working matrix m = A·Q.
  std::vector<int> col_of(n);
  for (int k = 0; k < n; ++k) col_of[k] = k;
  BitMatrix l = BitMatrix::identity(n);
  for (int k = 0; k < n; ++k) {
    // Rows 0..k-1 already cleared columns 0..k-1 of row k, so row k's candidates are its columns >= k.
    const BitVec candidates = m[k] & ~low_mask(k);
    if (candidates == 0) throw_singular(a, what);
    // The lowest candidate: keeps P = I whenever A already has an LU factorisation.
    const int j = __builtin_ctzll(candidates);
    if (j != k) {
      for (BitVec& row : m) row = swap_bits(row, j, k);
      std::swap(col_of[j], col_of[k]);
    }
    for (int i = k + 1; i < n; ++i)
      if ((m[i] >> k) & 1) {
        m[i] ^= m[k];
        l.set(i, k, true);
      }
  }
  // Now L·U = A·Q with Q·e_k = e_{col_of[k]}, so A = L·U·P with P = Q⁻¹ = Qᵀ: row k of P is e_{col_of[k]}.
  BitMatrix u = BitMatrix::from_rows(n, m);
  BitMatrix p(n, n);
  for (int k = 0; k < n; ++k) p.set(k, col_of[k], true);
  return {std::move(l), std::move(u), std::move(p)};
}

}  // namespace

bool is_lower_triangular(const BitMatrix& m) {
  if (!m.square()) return false;
  for (int i = 0; i < m.rows(); ++i)
    if (m.row(i) & ~low_mask(i + 1)) return false;
  return true;
}

bool is_upper_triangular(const BitMatrix& m) {
  if (!m.square()) return false;
  for (int i = 0; i < m.rows(); ++i)
    if (m.row(i) & low_mask(i)) return false;
  return true;
}

LupFactors lup(const BitMatrix& a) { return lup_impl(a, "LUP"); }

UlpFactors ulp(const BitMatrix& a) {
  check_square(a, "ULP");
  // R·A·R = L'·U'·P'  ⇒  A = (R·L'·R)·(R·U'·R)·(R·P'·R), using R² = I; R·L'·R is upper triangular.
  LupFactors f = lup_impl(conjugate_by_reverse(a), "ULP");
  return {conjugate_by_reverse(f.l), conjugate_by_reverse(f.u), conjugate_by_reverse(f.p)};
}

TiledSplit tiled_split(const Bmmc& a, int tile_bits) {
  if (tile_bits < 0)
    throw std::invalid_argument(fmt::format("tile width must be a non-negative number of bits, got {}", tile_bits));
  const int n = a.n();
  const int t = std::min(tile_bits, n);
  UlpFactors f = ulp(a.matrix());
  const BitMatrix r = reverse_matrix(n);
  TiledSplit split{Bmmc(r * f.l * f.p, 0), Bmmc(f.u * r, a.complement())};
  // The shapes guarantee both conditions for every t (see the header); checking them costs two n×n
  // inversions and turns a silent wrong plan into a loud error if the algebra above is ever broken.
  if (!split.first.is_tiled(t) || !split.second.is_tiled(t))
    throw std::logic_error(fmt::format("internal error: tiled_split produced a factor that is not tiled for a "
                                       "tile of {} bits (n = {})",
                                       t, n));
  return split;
}

}  // namespace bmmc
