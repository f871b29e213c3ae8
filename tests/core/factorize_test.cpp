// LUP / ULP factorisations and the paper's §5.2 tiled split, by property over random matrices n = 1..64,
// plus the worked example of factorize.hpp verbatim.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "bmmc/core/factorize.hpp"
#include "bmmc/core/named.hpp"

namespace bmmc {
namespace {

constexpr int kSeeds = 12;  // per n: 64 sizes × 12 seeds ≈ 770 random matrices per property

BitMatrix rows3(BitVec r0, BitVec r1, BitVec r2) { return BitMatrix::from_rows(3, {r0, r1, r2}); }

void expect_lup_ok(const BitMatrix& a, const std::string& what) {
  const LupFactors f = lup(a);
  EXPECT_TRUE(is_lower_triangular(f.l)) << what << "\nL =\n" << f.l.to_string();
  EXPECT_TRUE(is_upper_triangular(f.u)) << what << "\nU =\n" << f.u.to_string();
  EXPECT_TRUE(f.l.invertible() && f.u.invertible()) << what;  // triangular + invertible = unit diagonal
  EXPECT_TRUE(f.p.is_permutation()) << what << "\nP =\n" << f.p.to_string();
  EXPECT_EQ(f.l * f.u * f.p, a) << what;
}

void expect_ulp_ok(const BitMatrix& a, const std::string& what) {
  const UlpFactors f = ulp(a);
  EXPECT_TRUE(is_upper_triangular(f.u)) << what << "\nU =\n" << f.u.to_string();
  EXPECT_TRUE(is_lower_triangular(f.l)) << what << "\nL =\n" << f.l.to_string();
  EXPECT_TRUE(f.l.invertible() && f.u.invertible()) << what;
  EXPECT_TRUE(f.p.is_permutation()) << what << "\nP =\n" << f.p.to_string();
  EXPECT_EQ(f.u * f.l * f.p, a) << what;
}

TEST(Triangular, ShapePredicates) {
  EXPECT_TRUE(is_lower_triangular(rows3(0b001, 0b011, 0b111)));
  EXPECT_FALSE(is_upper_triangular(rows3(0b001, 0b011, 0b111)));
  EXPECT_TRUE(is_upper_triangular(rows3(0b111, 0b110, 0b100)));
  EXPECT_FALSE(is_lower_triangular(rows3(0b111, 0b110, 0b100)));
  EXPECT_TRUE(is_lower_triangular(BitMatrix::identity(64)));
  EXPECT_TRUE(is_upper_triangular(BitMatrix::identity(64)));
  EXPECT_FALSE(is_lower_triangular(BitMatrix(2, 3)));
}

TEST(Factorize, WorkedExampleFromTheHeader) {
  const BitMatrix a = rows3(0b010, 0b100, 0b101);
  ASSERT_EQ(a.to_string(), ".1.\n..1\n1.1\n");
  const UlpFactors f = ulp(a);
  EXPECT_EQ(f.u.to_string(), "1..\n.11\n..1\n");
  EXPECT_EQ(f.l.to_string(), "1..\n.1.\n.11\n");
  EXPECT_EQ(f.p.to_string(), ".1.\n1..\n..1\n");
  const LupFactors g = lup(a);
  EXPECT_EQ(g.l.to_string(), "1..\n.1.\n.11\n");
  EXPECT_EQ(g.u, BitMatrix::identity(3));
  EXPECT_EQ(g.p.to_string(), ".1.\n..1\n1..\n");
  const Bmmc bm(a, 0b101);
  const TiledSplit s = tiled_split(bm, 2);
  EXPECT_EQ(s.first.matrix().to_string(), "1.1\n1..\n.1.\n");
  EXPECT_EQ(s.first.complement(), 0u);
  EXPECT_EQ(s.second.matrix().to_string(), "..1\n11.\n1..\n");
  EXPECT_EQ(s.second.complement(), 0b101u);
  EXPECT_EQ(s.first.tiled_columns(2), (std::vector<int>{0, 2}));
  EXPECT_EQ(s.second.tiled_columns(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(s.first.apply(1), 3u);
  EXPECT_EQ(s.second.apply(3), 1u);
  EXPECT_EQ(bm.apply(1), 1u);
}

TEST(Factorize, LupAndUlpMultiplyBackOnRandomMatrices) {
  for (int n = 1; n <= 64; ++n)
    for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
      const BitMatrix a = random_bmmc(n, seed * 1000 + n).matrix();
      const std::string what = "n = " + std::to_string(n) + ", seed = " + std::to_string(seed);
      expect_lup_ok(a, what);
      expect_ulp_ok(a, what);
    }
}

TEST(Factorize, PermutationAndNamedMatrices) {
  for (int n = 1; n <= 64; n += 7) {
    for (const Bmmc& m : {bit_reverse(n), rotate(n, n / 3), transpose(n, n / 2), gray(n), gray_inverse(n),
                          random_bpc(n, n)}) {
      expect_lup_ok(m.matrix(), "named, n = " + std::to_string(n));
      expect_ulp_ok(m.matrix(), "named, n = " + std::to_string(n));
    }
    // A permutation matrix P factors as I·I·P both ways: elimination never needs to add rows.
    const BitMatrix p = random_bpc(n, 7 * n).matrix();
    EXPECT_EQ(lup(p).l, BitMatrix::identity(n));
    EXPECT_EQ(lup(p).u, BitMatrix::identity(n));
    EXPECT_EQ(lup(p).p, p);
    EXPECT_EQ(ulp(p).p, p);
  }
}

TEST(Factorize, TriangularInputNeedsNoPivoting) {
  // Lowest-column pivoting keeps P = I whenever a plain LU (resp. UL) exists: A = L gives (L, I, I) and
  // A = U gives ulp (U, I, I).
  std::mt19937_64 rng(42);
  for (int n = 1; n <= 64; ++n) {
    BitMatrix lo = BitMatrix::identity(n), up = BitMatrix::identity(n);
    for (int i = 0; i < n; ++i) {
      lo.set_row(i, (rng() & low_mask(i)) | (BitVec{1} << i));
      up.set_row(i, (rng() & ~low_mask(i + 1) & low_mask(n)) | (BitVec{1} << i));
    }
    const LupFactors f = lup(lo);
    EXPECT_EQ(f.l, lo);
    EXPECT_EQ(f.u, BitMatrix::identity(n));
    EXPECT_EQ(f.p, BitMatrix::identity(n));
    const UlpFactors g = ulp(up);
    EXPECT_EQ(g.u, up);
    EXPECT_EQ(g.l, BitMatrix::identity(n));
    EXPECT_EQ(g.p, BitMatrix::identity(n));
    // And the product L·U (resp. U·L) is recovered exactly, P = I.
    const LupFactors h = lup(lo * up);
    EXPECT_EQ(h.l, lo);
    EXPECT_EQ(h.u, up);
    EXPECT_EQ(h.p, BitMatrix::identity(n));
  }
}

TEST(Factorize, SingularAndNonSquareInputThrowWithTheReason) {
  // Rank 2 in F2^3: row 2 = row 0 ⊕ row 1.
  const BitMatrix s = rows3(0b011, 0b110, 0b101);
  for (auto f : {+[](const BitMatrix& m) { (void)lup(m); }, +[](const BitMatrix& m) { (void)ulp(m); }}) {
    try {
      f(s);
      ADD_FAILURE() << "a singular matrix was factorised";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("rank 2 < 3"), std::string::npos) << e.what();
    }
    try {
      f(BitMatrix(3, 4));
      ADD_FAILURE() << "a non-square matrix was factorised";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("3x4"), std::string::npos) << e.what();
    }
  }
  // Every random singular matrix throws (a zero row hides anywhere).
  std::mt19937_64 rng(7);
  for (int n = 1; n <= 64; ++n) {
    BitMatrix a = random_bmmc(n, n).matrix();
    const int i = static_cast<int>(rng() % n), j = static_cast<int>(rng() % n);
    if (i != j) a.set_row(i, a.row(j)); else a.set_row(i, 0);
    EXPECT_THROW((void)lup(a), std::invalid_argument) << "n = " << n;
    EXPECT_THROW((void)ulp(a), std::invalid_argument) << "n = " << n;
  }
  EXPECT_NO_THROW((void)lup(BitMatrix(0, 0)));
}

void expect_split_ok(const Bmmc& a, int tile_bits, const std::string& what) {
  const TiledSplit s = tiled_split(a, tile_bits);
  const int n = a.n(), t = std::min(tile_bits, n);
  EXPECT_EQ(compose(s.second, s.first), a) << what;
  EXPECT_EQ(s.first.complement(), 0u) << what;
  EXPECT_EQ(s.second.complement(), a.complement()) << what;
  EXPECT_TRUE(s.first.is_tiled(t)) << what << "\nfirst =\n" << s.first.to_string();
  // The second factor U·R is tiled on the top t columns, as the paper says.
  std::vector<int> top;
  for (int j = n - t; j < n; ++j) top.push_back(j);
  EXPECT_EQ(s.second.tiled_columns(t), top) << what << "\nsecond =\n" << s.second.to_string();
}

TEST(TiledSplit, BothFactorsTiledAndComposeBackForTileFive) {
  for (int n = 1; n <= 64; ++n)
    for (std::uint64_t seed = 0; seed < kSeeds; ++seed)
      expect_split_ok(random_bmmc(n, 77 + seed * 131 + n), 5,
                      "n = " + std::to_string(n) + ", seed = " + std::to_string(seed));
}

TEST(TiledSplit, FactorsAreTiledForEveryTileWidth) {
  // The triangular shapes make the split independent of the tile width (see factorize.hpp).
  for (int n = 1; n <= 40; n += 3)
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      const Bmmc a = random_bmmc(n, seed + 5000);
      const TiledSplit s = tiled_split(a, 5);
      for (int t = 0; t <= n; ++t) {
        EXPECT_TRUE(s.first.is_tiled(t)) << "n = " << n << ", t = " << t;
        EXPECT_TRUE(s.second.is_tiled(t)) << "n = " << n << ", t = " << t;
      }
      for (int t : {0, 1, 4, 6, 64, 100}) expect_split_ok(a, t, "t = " + std::to_string(t));
    }
}

TEST(TiledSplit, ComposesToTheSamePermutationExhaustively) {
  for (int n = 1; n <= 10; ++n)
    for (std::uint64_t seed = 0; seed < 5; ++seed) {
      const Bmmc a = random_bmmc(n, seed * 17 + n);
      const TiledSplit s = tiled_split(a, 5);
      for (BitVec x = 0; x < (BitVec{1} << n); ++x)
        ASSERT_EQ(s.second.apply(s.first.apply(x)), a.apply(x)) << "n = " << n << ", x = " << x;
    }
}

TEST(TiledSplit, WorksOnNamedMapsAndRejectsNegativeTiles) {
  for (int n = 1; n <= 64; n += 9)
    for (const Bmmc& m : {identity(n), bit_reverse(n), reverse(n), gray(n), random_bpc(n, 3)})
      expect_split_ok(m, 5, "named, n = " + std::to_string(n));
  EXPECT_THROW((void)tiled_split(random_bmmc(8, 1), -1), std::invalid_argument);
}

}  // namespace
}  // namespace bmmc
