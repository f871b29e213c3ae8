// BitMatrix by property over random matrices (all shapes up to 64×64) and by worked examples.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/named.hpp"

namespace bmmc {
namespace {

BitMatrix random_matrix(std::mt19937_64& rng, int rows, int cols) {
  BitMatrix m(rows, cols);
  for (int i = 0; i < rows; ++i) m.set_row(i, rng() & low_mask(cols));
  return m;
}

int random_dim(std::mt19937_64& rng) { return 1 + static_cast<int>(rng() % 64); }

// X·D_r·Y with X, Y invertible and D_r = diag(1 × r, 0 × (n - r)): a matrix of rank exactly r.
BitMatrix matrix_of_rank(int n, int r, std::uint64_t seed) {
  BitMatrix d(n, n);
  for (int i = 0; i < r; ++i) d.set(i, i, true);
  return random_bmmc(n, seed).matrix() * d * random_bmmc(n, seed + 1).matrix();
}

TEST(BitMatrix, WorkedExampleTransposePrintsAndApplies) {
  const BitMatrix t = BitMatrix::from_rows(4, {0b0100, 0b1000, 0b0001, 0b0010});
  EXPECT_EQ(t.to_string(), "..1.\n...1\n1...\n.1..\n");
  EXPECT_EQ(t.apply(6), 9u);
  EXPECT_EQ(t.col(0), 0b0100u);
  EXPECT_EQ(BitMatrix::from_cols(4, t.col_list()), t);
  EXPECT_EQ(t.row_list(), (std::vector<BitVec>{0b0100, 0b1000, 0b0001, 0b0010}));
}

TEST(BitMatrix, ConstructionAndAccessErrors) {
  EXPECT_THROW(BitMatrix(65, 3), std::invalid_argument);
  EXPECT_THROW(BitMatrix(3, -1), std::invalid_argument);
  EXPECT_THROW((void)BitMatrix::from_rows(3, {0b1000}), std::invalid_argument);
  EXPECT_THROW((void)BitMatrix::from_cols(2, {0b100}), std::invalid_argument);
  BitMatrix m(3, 5);
  EXPECT_THROW((void)m.get(3, 0), std::out_of_range);
  EXPECT_THROW(m.set(0, 5, true), std::out_of_range);
  EXPECT_THROW((void)m.row(-1), std::out_of_range);
  EXPECT_THROW((void)m.col(5), std::out_of_range);
  m.set_row(1, ~BitVec{0});  // bits beyond the columns are dropped, never stored
  EXPECT_EQ(m.row(1), 0b11111u);
  EXPECT_EQ(m.transpose().col(1), 0b11111u);
  EXPECT_THROW((void)(BitMatrix(2, 3) * BitMatrix(2, 3)), std::invalid_argument);
  EXPECT_THROW((void)(BitMatrix(2, 3) + BitMatrix(3, 2)), std::invalid_argument);
  EXPECT_NE(BitMatrix(2, 3), BitMatrix(3, 2));
}

TEST(BitMatrix, SixtyFourBitsWork) {
  BitMatrix m = BitMatrix::identity(64);
  EXPECT_EQ(m.apply(~BitVec{0}), ~BitVec{0});
  m.set(63, 0, true);
  EXPECT_EQ(m.apply(1), 1u | (BitVec{1} << 63));
  EXPECT_EQ(m.inverse() * m, BitMatrix::identity(64));
  EXPECT_EQ(m.col(0), 1u | (BitVec{1} << 63));
}

TEST(BitMatrix, ProductIsAssociativeAndMatchesApply) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 500; ++trial) {
    const int r = random_dim(rng), k = random_dim(rng), m = random_dim(rng), p = random_dim(rng);
    const BitMatrix a = random_matrix(rng, r, k), b = random_matrix(rng, k, m), c = random_matrix(rng, m, p);
    ASSERT_EQ((a * b) * c, a * (b * c)) << r << "x" << k << "x" << m << "x" << p;
    const BitVec x = rng() & low_mask(p);
    EXPECT_EQ((a * b * c).apply(x), a.apply(b.apply(c.apply(x))));
    // Distributivity over the entrywise sum.
    const BitMatrix b2 = random_matrix(rng, k, m);
    EXPECT_EQ(a * (b + b2), a * b + a * b2);
    EXPECT_EQ(a * BitMatrix::identity(k), a);
    EXPECT_EQ(BitMatrix::identity(r) * a, a);
  }
}

TEST(BitMatrix, TransposeIsAnInvolutionAndReversesProducts) {
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 500; ++trial) {
    const int r = random_dim(rng), k = random_dim(rng), m = random_dim(rng);
    const BitMatrix a = random_matrix(rng, r, k), b = random_matrix(rng, k, m);
    EXPECT_EQ(a.transpose().transpose(), a);
    EXPECT_EQ(a.transpose().rows(), k);
    EXPECT_EQ((a * b).transpose(), b.transpose() * a.transpose());
    const int i = static_cast<int>(rng() % r), j = static_cast<int>(rng() % k);
    EXPECT_EQ(a.transpose().get(j, i), a.get(i, j));
  }
}

TEST(BitMatrix, InverseOnBothSides) {
  for (int n = 0; n <= 64; ++n)
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      const BitMatrix a = random_bmmc(n, seed * 64 + n).matrix();
      const BitMatrix inv = a.inverse();
      ASSERT_EQ(a * inv, BitMatrix::identity(n)) << "n = " << n << ", seed = " << seed;
      ASSERT_EQ(inv * a, BitMatrix::identity(n)) << "n = " << n << ", seed = " << seed;
      EXPECT_EQ(inv.inverse(), a);
    }
}

TEST(BitMatrix, RankOfConstructedMatricesAndSingularInverseNamesTheRank) {
  std::mt19937_64 rng(3);
  for (int n = 1; n <= 64; ++n)
    for (int trial = 0; trial < 6; ++trial) {
      const int r = static_cast<int>(rng() % (n + 1));
      const BitMatrix a = matrix_of_rank(n, r, rng());
      ASSERT_EQ(a.rank(), r) << "n = " << n;
      EXPECT_EQ(a.transpose().rank(), r);
      EXPECT_EQ(a.invertible(), r == n);
      if (r == n) continue;
      try {
        (void)a.inverse();
        ADD_FAILURE() << "inverse of a rank-" << r << " matrix did not throw";
      } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("rank " + std::to_string(r) + " < " + std::to_string(n)), std::string::npos) << msg;
      }
    }
  EXPECT_THROW((void)BitMatrix(2, 3).inverse(), std::invalid_argument);
  EXPECT_FALSE(BitMatrix(2, 3).invertible());
}

TEST(BitMatrix, RankOfProductIsAtMostTheSmaller) {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = random_dim(rng), k = random_dim(rng), m = random_dim(rng);
    // Sparse entries give a spread of ranks, not just full rank.
    BitMatrix a(n, k), b(k, m);
    for (int i = 0; i < n; ++i) a.set_row(i, rng() & rng() & rng() & low_mask(k));
    for (int i = 0; i < k; ++i) b.set_row(i, rng() & rng() & low_mask(m));
    const int rab = (a * b).rank();
    EXPECT_LE(rab, std::min(a.rank(), b.rank()));
    EXPECT_LE(a.rank(), std::min(n, k));
    // Multiplying by an invertible matrix keeps the rank.
    EXPECT_EQ((random_bmmc(n, trial).matrix() * a).rank(), a.rank());
  }
}

TEST(BitMatrix, EchelonIsReducedIdempotentAndKeepsTheRowSpace) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    const int r = random_dim(rng), c = random_dim(rng);
    BitMatrix a(r, c);
    for (int i = 0; i < r; ++i) a.set_row(i, rng() & rng() & low_mask(c));
    const BitMatrix e = a.echelon();
    ASSERT_EQ(e.echelon(), e);
    ASSERT_EQ(e.rank(), a.rank());
    // Shape: non-zero rows first, with strictly increasing pivots (lowest set bit); a pivot column is
    // zero in every other row.
    int last_pivot = -1;
    bool seen_zero = false;
    for (int i = 0; i < r; ++i) {
      const BitVec row = e.row(i);
      if (row == 0) { seen_zero = true; continue; }
      ASSERT_FALSE(seen_zero) << "a non-zero row below a zero row";
      const int p = __builtin_ctzll(row);
      ASSERT_GT(p, last_pivot);
      last_pivot = p;
      EXPECT_EQ(e.col(p), BitVec{1} << i);
    }
    // Same row space: every row of A reduces to zero against the echelon rows, and vice versa by rank.
    for (int i = 0; i < r; ++i) {
      BitVec v = a.row(i);
      for (int k = 0; k < r; ++k)
        if (const BitVec row = e.row(k); row && ((v >> __builtin_ctzll(row)) & 1)) v ^= row;
      EXPECT_EQ(v, 0u);
    }
  }
}

TEST(BitMatrix, PermutationMatrices) {
  for (int n = 1; n <= 64; ++n) {
    EXPECT_TRUE(random_bpc(n, n).matrix().is_permutation());
    EXPECT_TRUE(BitMatrix::identity(n).is_permutation());
    if (n >= 2) {
      EXPECT_FALSE(gray(n).matrix().is_permutation());
      BitMatrix twice = BitMatrix::identity(n);
      twice.set_row(0, 0b10);  // two rows hit column 1, none column 0
      EXPECT_FALSE(twice.is_permutation());
    }
  }
  EXPECT_FALSE(BitMatrix(2, 3).is_permutation());
}

}  // namespace
}  // namespace bmmc
