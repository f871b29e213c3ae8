#include "bmmc/core/bit_matrix.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace bmmc {

namespace {
void check_dim(int d, const char* what) {
  if (d < 0 || d > BitMatrix::kMaxDim)
    throw std::invalid_argument(
        fmt::format("bit matrix {} must be between 0 and {}, got {}", what, BitMatrix::kMaxDim, d));
}
}  // namespace

BitMatrix::BitMatrix(int rows, int cols) : rows_(rows), cols_(cols) {
  check_dim(rows, "row count");
  check_dim(cols, "column count");
}

BitMatrix BitMatrix::identity(int n) {
  BitMatrix m(n, n);
  for (int i = 0; i < n; ++i) m.r_[i] = BitVec{1} << i;
  return m;
}

BitMatrix BitMatrix::from_rows(int cols, const std::vector<BitVec>& rows) {
  BitMatrix m(static_cast<int>(rows.size()), cols);
  for (int i = 0; i < m.rows_; ++i) {
    if (rows[i] & ~low_mask(cols))
      throw std::invalid_argument(fmt::format(
          "row {} = {:#x} has bits at or above column {}: a matrix with {} columns only has bits 0..{}", i,
          rows[i], cols, cols, cols - 1));
    m.r_[i] = rows[i];
  }
  return m;
}

BitMatrix BitMatrix::from_cols(int rows, const std::vector<BitVec>& cols) {
  BitMatrix m(rows, static_cast<int>(cols.size()));
  for (int j = 0; j < m.cols_; ++j) {
    if (cols[j] & ~low_mask(rows))
      throw std::invalid_argument(fmt::format(
          "column {} = {:#x} has bits at or above row {}: a matrix with {} rows only has bits 0..{}", j,
          cols[j], rows, rows, rows - 1));
    for (int i = 0; i < rows; ++i)
      if ((cols[j] >> i) & 1) m.r_[i] |= BitVec{1} << j;
  }
  return m;
}

bool BitMatrix::get(int i, int j) const {
  if (i < 0 || i >= rows_ || j < 0 || j >= cols_)
    throw std::out_of_range(fmt::format("entry ({}, {}) outside a {}x{} bit matrix", i, j, rows_, cols_));
  return (r_[i] >> j) & 1;
}

void BitMatrix::set(int i, int j, bool value) {
  if (i < 0 || i >= rows_ || j < 0 || j >= cols_)
    throw std::out_of_range(fmt::format("entry ({}, {}) outside a {}x{} bit matrix", i, j, rows_, cols_));
  if (value)
    r_[i] |= BitVec{1} << j;
  else
    r_[i] &= ~(BitVec{1} << j);
}

BitVec BitMatrix::row(int i) const {
  if (i < 0 || i >= rows_)
    throw std::out_of_range(fmt::format("row {} outside a matrix with {} rows", i, rows_));
  return r_[i];
}

void BitMatrix::set_row(int i, BitVec value) {
  if (i < 0 || i >= rows_)
    throw std::out_of_range(fmt::format("row {} outside a matrix with {} rows", i, rows_));
  r_[i] = value & low_mask(cols_);
}

BitVec BitMatrix::col(int j) const {
  if (j < 0 || j >= cols_)
    throw std::out_of_range(fmt::format("column {} outside a matrix with {} columns", j, cols_));
  BitVec c = 0;
  for (int i = 0; i < rows_; ++i) c |= ((r_[i] >> j) & 1) << i;
  return c;
}

std::vector<BitVec> BitMatrix::row_list() const { return {r_.begin(), r_.begin() + rows_}; }

std::vector<BitVec> BitMatrix::col_list() const {
  std::vector<BitVec> out(cols_);
  for (int j = 0; j < cols_; ++j) out[j] = col(j);
  return out;
}

BitMatrix BitMatrix::transpose() const {
  BitMatrix t(cols_, rows_);
  for (int i = 0; i < rows_; ++i)
    for (int j = 0; j < cols_; ++j)
      if ((r_[i] >> j) & 1) t.r_[j] |= BitVec{1} << i;
  return t;
}

BitMatrix BitMatrix::echelon() const {
  BitMatrix m = *this;
  int next = 0;  // rows above `next` are finished pivot rows
  for (int j = 0; j < cols_ && next < rows_; ++j) {
    int p = -1;
    for (int i = next; i < rows_; ++i)
      if ((m.r_[i] >> j) & 1) { p = i; break; }
    if (p < 0) continue;
    std::swap(m.r_[p], m.r_[next]);
    for (int i = 0; i < rows_; ++i)
      if (i != next && ((m.r_[i] >> j) & 1)) m.r_[i] ^= m.r_[next];
    ++next;
  }
  return m;
}

int BitMatrix::rank() const {
  const BitMatrix e = echelon();
  int r = 0;
  for (int i = 0; i < rows_; ++i) r += e.r_[i] != 0;
  return r;
}

BitMatrix BitMatrix::inverse() const {
  if (!square())
    throw std::invalid_argument(
        fmt::format("only a square matrix has an inverse; this one is {}x{}", rows_, cols_));
  const int n = rows_;
  // Gauss-Jordan on [A | I], keeping the right half in a second array.
  BitMatrix a = *this, inv = identity(n);
  for (int j = 0; j < n; ++j) {
    int p = -1;
    for (int i = j; i < n; ++i)
      if ((a.r_[i] >> j) & 1) { p = i; break; }
    if (p < 0)
      throw std::invalid_argument(fmt::format(
          "the {}x{} matrix is singular (rank {} < {}), so it defines no permutation; a BMMC needs an "
          "invertible matrix",
          n, n, rank(), n));
    std::swap(a.r_[p], a.r_[j]);
    std::swap(inv.r_[p], inv.r_[j]);
    for (int i = 0; i < n; ++i)
      if (i != j && ((a.r_[i] >> j) & 1)) {
        a.r_[i] ^= a.r_[j];
        inv.r_[i] ^= inv.r_[j];
      }
  }
  return inv;
}

bool BitMatrix::is_permutation() const {
  if (!square()) return false;
  BitVec seen = 0;
  for (int i = 0; i < rows_; ++i) {
    if (__builtin_popcountll(r_[i]) != 1 || (seen & r_[i])) return false;
    seen |= r_[i];
  }
  return true;
}

BitMatrix operator*(const BitMatrix& a, const BitMatrix& b) {
  if (a.cols_ != b.rows_)
    throw std::invalid_argument(fmt::format("cannot multiply a {}x{} by a {}x{} bit matrix", a.rows_, a.cols_,
                                            b.rows_, b.cols_));
  BitMatrix p(a.rows_, b.cols_);
  // Row i of A·B is the XOR of the rows of B selected by row i of A.
  for (int i = 0; i < a.rows_; ++i) {
    BitVec acc = 0;
    for (BitVec sel = a.r_[i]; sel; sel &= sel - 1) acc ^= b.r_[__builtin_ctzll(sel)];
    p.r_[i] = acc;
  }
  return p;
}

BitMatrix operator+(const BitMatrix& a, const BitMatrix& b) {
  if (a.rows_ != b.rows_ || a.cols_ != b.cols_)
    throw std::invalid_argument(
        fmt::format("cannot add a {}x{} to a {}x{} bit matrix", a.rows_, a.cols_, b.rows_, b.cols_));
  BitMatrix s(a.rows_, a.cols_);
  for (int i = 0; i < a.rows_; ++i) s.r_[i] = a.r_[i] ^ b.r_[i];
  return s;
}

bool operator==(const BitMatrix& a, const BitMatrix& b) {
  if (a.rows_ != b.rows_ || a.cols_ != b.cols_) return false;
  for (int i = 0; i < a.rows_; ++i)
    if (a.r_[i] != b.r_[i]) return false;
  return true;
}

std::string BitMatrix::to_string() const {
  std::string s;
  s.reserve(static_cast<size_t>(rows_) * (cols_ + 1));
  for (int i = 0; i < rows_; ++i) {
    for (int j = 0; j < cols_; ++j) s += ((r_[i] >> j) & 1) ? '1' : '.';
    s += '\n';
  }
  return s;
}

}  // namespace bmmc
