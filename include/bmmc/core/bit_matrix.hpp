// Bit matrices and bit vectors over F2, the algebra every other layer stands on.
//
// A BitMatrix has up to 64 rows and 64 columns; row i is stored as a uint64_t whose bit j is the entry
// a_ij. Vectors are plain uint64_t with bit i = component i (bit 0 = least significant = index bit 0).
// Conventions follow docs/DESIGN.md §1: row i is output bit i, column j is input bit j, so A·x is the vector
// whose bit i is the parity of (row_i AND x). Printing shows row 0 first, column 0 first, '1' or '.',
// as the paper's artifact does. Example: the 4×4 transpose of the paper's §3 prints
//   ..1.
//   ...1
//   1...
//   .1..
// and maps 6 = 0b0110 to 9 = 0b1001.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

namespace bmmc {

using BitVec = std::uint64_t;

/// Parity of the set bits of v: the F2 dot product <a, b> is parity(a & b).
constexpr int parity(BitVec v) noexcept { return __builtin_parityll(v); }

/// Mask with the low `bits` bits set (bits in 0..64).
constexpr BitVec low_mask(int bits) noexcept {
  return bits >= 64 ? ~BitVec{0} : ((BitVec{1} << bits) - 1);
}

/// XOR of cols[i] over the set bits i of v: a matrix given by its columns applied to v. Plans store their
/// linear maps as column lists (plan.hpp); the checker, the code generator, the planner and the CPU tables
/// all evaluate them with this. `cols` is any sized range (vector, array, span) of integer columns.
template <class Cols>
constexpr auto xor_of_columns(const Cols& cols, std::uint64_t v) noexcept {
  std::remove_cvref_t<decltype(*std::begin(cols))> r = 0;
  std::size_t i = 0;
  for (const auto& c : cols) {
    if ((v >> i) & 1) r ^= c;
    ++i;
  }
  return r;
}

class BitMatrix {
 public:
  static constexpr int kMaxDim = 64;

  /// The zero matrix with `rows` rows and `cols` columns (0..64 each).
  BitMatrix(int rows, int cols);
  /// The empty 0×0 matrix.
  BitMatrix() : BitMatrix(0, 0) {}

  static BitMatrix identity(int n);
  /// Rows given as integers (bit j of rows[i] = a_ij); bits at or above `cols` are an error.
  static BitMatrix from_rows(int cols, const std::vector<BitVec>& rows);
  /// Columns given as integers (bit i of cols[j] = a_ij).
  static BitMatrix from_cols(int rows, const std::vector<BitVec>& cols);

  int rows() const noexcept { return rows_; }
  int cols() const noexcept { return cols_; }
  bool square() const noexcept { return rows_ == cols_; }

  bool get(int i, int j) const;
  void set(int i, int j, bool value);
  BitVec row(int i) const;
  void set_row(int i, BitVec value);
  BitVec col(int j) const;
  std::vector<BitVec> row_list() const;
  std::vector<BitVec> col_list() const;

  /// A·x: bit i of the result is <row_i, x>.
  BitVec apply(BitVec x) const noexcept {
    BitVec y = 0;
    for (int i = 0; i < rows_; ++i) y |= BitVec(parity(r_[i] & x)) << i;
    return y;
  }

  BitMatrix transpose() const;
  /// Rank over F2.
  int rank() const;
  bool invertible() const { return square() && rank() == rows_; }
  /// The inverse; throws std::invalid_argument naming the rank when the matrix is singular or not square.
  BitMatrix inverse() const;
  /// Reduced row echelon form (pivots are the lowest set column of each row, rows ordered by pivot).
  BitMatrix echelon() const;
  /// Is this a permutation matrix (exactly one 1 in each row and each column)?
  bool is_permutation() const;

  friend BitMatrix operator*(const BitMatrix& a, const BitMatrix& b);
  friend BitMatrix operator+(const BitMatrix& a, const BitMatrix& b);  // entrywise XOR
  friend bool operator==(const BitMatrix& a, const BitMatrix& b);

  /// The docs/DESIGN.md text format: one line per row, '1' or '.', row 0 first, column 0 first.
  std::string to_string() const;

 private:
  int rows_ = 0;
  int cols_ = 0;
  std::array<BitVec, kMaxDim> r_{};
};

}  // namespace bmmc
