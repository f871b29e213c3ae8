// Bmmc: composition, inverse, bijectivity, classification and the §5.1 tiled columns.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/named.hpp"

namespace bmmc {
namespace {

TEST(Bmmc, ConstructorRejectsBadInput) {
  EXPECT_THROW(Bmmc(BitMatrix(2, 3)), std::invalid_argument);
  EXPECT_THROW(Bmmc(BitMatrix::identity(4), 0x10), std::invalid_argument);
  EXPECT_NO_THROW(Bmmc(BitMatrix::identity(64), ~BitVec{0}));
  try {
    (void)Bmmc(BitMatrix::from_rows(3, {0b011, 0b110, 0b101}));
    ADD_FAILURE() << "a singular matrix was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2 < 3"), std::string::npos) << e.what();
  }
}

TEST(Bmmc, CompositionIsAssociativeAndAppliesRightFirst) {
  std::mt19937_64 rng(11);
  for (int n = 1; n <= 64; ++n)
    for (std::uint64_t s = 0; s < 8; ++s) {
      const Bmmc a = random_bmmc(n, 3 * s), b = random_bmmc(n, 3 * s + 1), c = random_bmmc(n, 3 * s + 2);
      ASSERT_EQ(compose(compose(a, b), c), compose(a, compose(b, c))) << "n = " << n;
      for (int k = 0; k < 4; ++k) {
        const BitVec x = rng() & low_mask(n);
        EXPECT_EQ((a * b).apply(x), a.apply(b.apply(x)));
      }
      // (A, c) ∘ (B, d) = (A·B, A·d ⊕ c).
      EXPECT_EQ((a * b).matrix(), a.matrix() * b.matrix());
      EXPECT_EQ((a * b).complement(), a.matrix().apply(b.complement()) ^ a.complement());
    }
  EXPECT_THROW((void)compose(identity(3), identity(4)), std::invalid_argument);
}

TEST(Bmmc, InverseOnBothSides) {
  for (int n = 0; n <= 64; ++n)
    for (std::uint64_t s = 0; s < 8; ++s) {
      for (const Bmmc& x : {random_bmmc(n, s + 100), random_bpc(n, s + 100)}) {
        ASSERT_EQ(x * x.inverse(), identity(n)) << "n = " << n << ", seed = " << s;
        ASSERT_EQ(x.inverse() * x, identity(n)) << "n = " << n << ", seed = " << s;
        EXPECT_EQ(x.inverse().inverse(), x);
      }
    }
}

TEST(Bmmc, IsIdentityExactlyWhenEveryIndexIsFixed) {
  for (int n = 0; n <= 10; ++n) {
    EXPECT_TRUE(identity(n).is_identity()) << "n = " << n;
    for (std::uint64_t s = 0; s < 4; ++s)
      for (const Bmmc& f : {random_bmmc(n, s), random_bpc(n, s), gray(n), reverse(n)}) {
        bool fixes_all = true;
        for (BitVec x = 0; x < (BitVec{1} << n); ++x) fixes_all = fixes_all && f.apply(x) == x;
        EXPECT_EQ(f.is_identity(), fixes_all) << "n = " << n << ", seed = " << s << "\n" << f.to_string();
        EXPECT_TRUE((f * f.inverse()).is_identity());
      }
  }
  // A complement alone is not the identity, nor is a bit permutation other than the identity with c = 0.
  EXPECT_FALSE(Bmmc(BitMatrix::identity(4), 0b0100).is_identity());
  EXPECT_FALSE(bit_reverse(4).is_identity());
  EXPECT_TRUE(Bmmc().is_identity());
  EXPECT_TRUE(identity(64).is_identity());
}

TEST(Bmmc, ApplyIsABijectionExhaustively) {
  for (int n = 0; n <= 12; ++n)
    for (std::uint64_t s = 0; s < 4; ++s)
      for (const Bmmc& f : {random_bmmc(n, s), random_bpc(n, s), gray(n), rotate(n, 3)}) {
        const BitVec size = BitVec{1} << n;
        std::vector<bool> hit(size, false);
        const Bmmc inv = f.inverse();
        for (BitVec x = 0; x < size; ++x) {
          const BitVec y = f.apply(x);
          ASSERT_LT(y, size);
          ASSERT_FALSE(hit[y]) << "n = " << n << ": two inputs reach " << y;
          hit[y] = true;
          ASSERT_EQ(inv.apply(y), x);
        }
      }
}

TEST(Bmmc, ClassifyNamedMaps) {
  for (int n = 1; n <= 64; ++n) {
    EXPECT_EQ(bit_reverse(n).classify(), BmmcClass::BP) << n;
    EXPECT_EQ(transpose(n, n / 2).classify(), BmmcClass::BP) << n;
    EXPECT_EQ(identity(n).classify(), BmmcClass::BP) << n;
    EXPECT_EQ(reverse(n).classify(), BmmcClass::BPC) << n;
  }
  int bpc_with_complement = 0;
  for (int n = 1; n <= 64; ++n)
    for (std::uint64_t s = 0; s < 10; ++s) {
      const Bmmc p = random_bpc(n, s);
      EXPECT_EQ(p.classify(), p.complement() ? BmmcClass::BPC : BmmcClass::BP);
      bpc_with_complement += p.complement() != 0;
    }
  EXPECT_GT(bpc_with_complement, 500);  // the BPC branch was exercised, not only BP
  EXPECT_STREQ(to_string(BmmcClass::BP), "BP");
  EXPECT_STREQ(to_string(BmmcClass::BPC), "BPC");
  EXPECT_STREQ(to_string(BmmcClass::Tiled), "tiled");
  EXPECT_STREQ(to_string(BmmcClass::General), "general");
}

// A = [[T, X], [0, D]] by (low rows, high rows) × (low columns, high columns): the low t input bits stay
// inside the low t output bits, so columns 0..t-1 are the tile; then shuffled by a column permutation Q.
Bmmc block_tiled(int n, int t, std::uint64_t seed, const std::vector<int>& q) {
  std::mt19937_64 rng(seed);
  const BitMatrix tm = random_bmmc(t, seed).matrix(), dm = random_bmmc(n - t, seed + 1).matrix();
  BitMatrix a(n, n);
  for (int i = 0; i < t; ++i) a.set_row(i, tm.row(i) | ((rng() & low_mask(n - t)) << t));
  for (int i = t; i < n; ++i) a.set_row(i, dm.row(i - t) << t);
  return Bmmc(a * bit_permutation(q).matrix(), rng() & low_mask(n));
}

TEST(Bmmc, ClassifyTiledBlockMatrices) {
  for (int n = 10; n <= 64; n += 6)
    for (std::uint64_t s = 0; s < 10; ++s) {
      std::vector<int> q(n);
      for (int i = 0; i < n; ++i) q[i] = i;
      const Bmmc plain = block_tiled(n, 5, s, q);
      EXPECT_EQ(plain.classify(), BmmcClass::Tiled) << plain.to_string();
      EXPECT_EQ(plain.tiled_columns(5), (std::vector<int>{0, 1, 2, 3, 4}));
      // With the columns shuffled by Q (A·Q, Q·e_j = e_{q[j]}), the tile is at q⁻¹(0..4).
      std::mt19937_64 rng(s + 99);
      std::shuffle(q.begin(), q.end(), rng);
      const Bmmc shuffled = block_tiled(n, 5, s, q);
      std::vector<int> expect;
      for (int j = 0; j < n; ++j)
        if (q[j] < 5) expect.push_back(j);
      EXPECT_EQ(shuffled.tiled_columns(5), expect);
      EXPECT_EQ(shuffled.classify(), BmmcClass::Tiled);
      // Breaking the zero block (an input tile bit leaking into a high output bit) makes it general.
      BitMatrix leak = plain.matrix();
      leak.set_row(n - 1, leak.row(n - 1) ^ 1);
      if (leak.invertible()) EXPECT_FALSE(Bmmc(leak).tiled_columns(5).has_value()) << leak.to_string();
    }
}

TEST(Bmmc, RandomBmmcIsGeneral) {
  // The chance that A⁻¹·span(e_0..e_4) is a coordinate subspace is astronomically small for n ≥ 10.
  for (int n = 10; n <= 64; ++n)
    for (std::uint64_t s = 0; s < 10; ++s) {
      const Bmmc a = random_bmmc(n, s + 1);
      EXPECT_EQ(a.classify(), BmmcClass::General) << "n = " << n << ", seed = " << s + 1;
      EXPECT_FALSE(a.tiled_columns(5).has_value());
    }
}

TEST(Bmmc, TiledColumnsOfABpcAreTheInputBitsReachingTheTile) {
  std::mt19937_64 rng(12);
  for (int n = 1; n <= 64; ++n)
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<int> p(n);
      for (int i = 0; i < n; ++i) p[i] = i;
      std::shuffle(p.begin(), p.end(), rng);
      const Bmmc b(bit_permutation(p).matrix(), rng() & low_mask(n));
      const int t = std::min(5, n);
      std::vector<int> expect;
      for (int i = 0; i < n; ++i)
        if (p[i] < t) expect.push_back(i);  // input bit i lands in output bit p[i] < t
      EXPECT_EQ(b.tiled_columns(t), expect) << "n = " << n;
    }
  // Bit-reverse on 8 bits: output bits 0..4 come from input bits 7..3.
  EXPECT_EQ(bit_reverse(8).tiled_columns(5), (std::vector<int>{3, 4, 5, 6, 7}));
  // Edge widths: t = 0 is trivially tiled, t > n never.
  EXPECT_EQ(random_bmmc(6, 1).tiled_columns(0), std::vector<int>{});
  EXPECT_FALSE(identity(4).tiled_columns(5).has_value());
  EXPECT_FALSE(identity(4).tiled_columns(-1).has_value());
  EXPECT_EQ(identity(4).tiled_columns(4), (std::vector<int>{0, 1, 2, 3}));
}

TEST(Bmmc, SmallNClassifiesWithTheWholeIndexAsTile) {
  // For n < 5 every BMMC is tiled with t = n (the whole matrix is the invertible block).
  for (int n = 1; n < 5; ++n)
    for (std::uint64_t s = 0; s < 20; ++s) {
      const Bmmc a = random_bmmc(n, s);
      if (a.matrix().is_permutation()) continue;
      EXPECT_EQ(a.classify(), BmmcClass::Tiled) << "n = " << n;
    }
}

TEST(Bmmc, ToStringShowsMatrixAndComplement) {
  EXPECT_EQ(reverse(2).to_string(), "1.\n.1\nc = 0x3\n");
  EXPECT_EQ(bit_reverse(2).to_string(), ".1\n1.\nc = 0x0\n");
}

}  // namespace
}  // namespace bmmc
