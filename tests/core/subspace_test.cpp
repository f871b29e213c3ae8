// Subspace: basis invariants, sum / intersection dimensions, annihilators, reduce, coordinates and
// coordinate complements, by property over random subspaces and exhaustively for small n.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/core/subspace.hpp"

namespace bmmc {
namespace {

// A random subspace: up to `count` vectors, sparse half of the time so that random pairs of subspaces
// share non-trivial intersections.
Subspace random_subspace(std::mt19937_64& rng, int n, int count) {
  std::vector<BitVec> vs;
  const bool sparse = rng() & 1;
  for (int i = 0; i < count; ++i) vs.push_back((sparse ? rng() & rng() & rng() : rng()) & low_mask(n));
  return Subspace::span(n, vs);
}

// Every member, by enumerating the 2^dim combinations of the basis (small dims only).
std::set<BitVec> members(const Subspace& s) {
  std::set<BitVec> out;
  const auto& b = s.basis();
  for (BitVec k = 0; k < (BitVec{1} << b.size()); ++k) {
    BitVec v = 0;
    for (size_t i = 0; i < b.size(); ++i)
      if ((k >> i) & 1) v ^= b[i];
    out.insert(v);
  }
  return out;
}

void expect_reduced_basis(const Subspace& s) {
  BitVec pivots = 0;
  int last = -1;
  for (BitVec b : s.basis()) {
    ASSERT_NE(b, 0u);
    ASSERT_EQ(b & ~low_mask(s.n()), 0u);
    const int p = __builtin_ctzll(b);
    ASSERT_GT(p, last) << "basis not sorted by pivot";
    last = p;
    pivots |= BitVec{1} << p;
  }
  EXPECT_EQ(pivots, s.pivots());
  for (BitVec b : s.basis()) EXPECT_EQ(b & pivots, b & -b) << "a basis vector holds another's pivot";
}

TEST(Subspace, WorkedExampleFromTheHeader) {
  const Subspace s = Subspace::span(3, {0b110, 0b011});
  EXPECT_EQ(s.basis(), (std::vector<BitVec>{0b101, 0b110}));
  EXPECT_EQ(s.pivots(), 0b011u);
  EXPECT_EQ(s.coordinate_complement(), std::vector<int>{2});
  EXPECT_TRUE(s.contains(0b110));
  EXPECT_FALSE(s.contains(0b100));
}

TEST(Subspace, ErrorsAndEdgeCases) {
  EXPECT_THROW(Subspace(65), std::invalid_argument);
  EXPECT_THROW((void)Subspace::span(3, {0b1000}), std::invalid_argument);
  EXPECT_THROW((void)Subspace::low_bits(3, 4), std::invalid_argument);
  EXPECT_THROW((void)(Subspace(3) + Subspace(4)), std::invalid_argument);
  EXPECT_THROW((void)intersect(Subspace(3), Subspace(4)), std::invalid_argument);
  EXPECT_THROW((void)Subspace(3).image(BitMatrix(3, 4)), std::invalid_argument);
  EXPECT_EQ(Subspace::whole(64).dim(), 64);
  EXPECT_EQ(Subspace::whole(64).annihilator().dim(), 0);
  EXPECT_EQ(Subspace(64).annihilator(), Subspace::whole(64));
  Subspace s(5);
  EXPECT_TRUE(s.insert(0b10100));
  EXPECT_FALSE(s.insert(0b10100));
  EXPECT_FALSE(s.insert(0));
  EXPECT_EQ(s.dim(), 1);
}

TEST(Subspace, BasisStaysReducedAndSorted) {
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 64);
    expect_reduced_basis(random_subspace(rng, n, static_cast<int>(rng() % (n + 2))));
  }
  // low_bits: e_0..e_{k-1} exactly, the planner's L.
  const Subspace l = Subspace::low_bits(10, 5);
  EXPECT_EQ(l.basis(), (std::vector<BitVec>{1, 2, 4, 8, 16}));
  expect_reduced_basis(l);
}

TEST(Subspace, SumAndIntersectionDimensions) {
  std::mt19937_64 rng(22);
  int nontrivial = 0;
  for (int trial = 0; trial < 800; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 64);
    const Subspace a = random_subspace(rng, n, static_cast<int>(rng() % (n + 1)));
    const Subspace b = random_subspace(rng, n, static_cast<int>(rng() % (n + 1)));
    const Subspace sum = a + b, cap = intersect(a, b);
    ASSERT_EQ(sum.dim() + cap.dim(), a.dim() + b.dim()) << "n = " << n;
    nontrivial += cap.dim() > 0 && cap.dim() < std::min(a.dim(), b.dim());
    expect_reduced_basis(sum);
    expect_reduced_basis(cap);
    for (BitVec v : cap.basis()) EXPECT_TRUE(a.contains(v) && b.contains(v));
    for (BitVec v : a.basis()) EXPECT_TRUE(sum.contains(v));
    for (BitVec v : b.basis()) EXPECT_TRUE(sum.contains(v));
    EXPECT_EQ(a + b, b + a);
    EXPECT_EQ(intersect(a, b), intersect(b, a));
    EXPECT_EQ(intersect(a, a), a);
    EXPECT_EQ(a + a, a);
  }
  EXPECT_GT(nontrivial, 50);  // the random subspaces really overlap partially
}

TEST(Subspace, IntersectionIsExactlyTheCommonMembersForSmallN) {
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 8);
    const Subspace a = random_subspace(rng, n, static_cast<int>(rng() % (n + 1)));
    const Subspace b = random_subspace(rng, n, static_cast<int>(rng() % (n + 1)));
    const std::set<BitVec> ma = members(a), mb = members(b), mc = members(intersect(a, b));
    for (BitVec x = 0; x < (BitVec{1} << n); ++x)
      ASSERT_EQ(mc.count(x), ma.count(x) && mb.count(x)) << "n = " << n << ", x = " << x;
  }
}

TEST(Subspace, AnnihilatorIsOrthogonalAndAnInvolution) {
  std::mt19937_64 rng(24);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 64);
    const Subspace a = random_subspace(rng, n, static_cast<int>(rng() % (n + 1)));
    const Subspace ann = a.annihilator();
    ASSERT_EQ(ann.dim(), n - a.dim());
    for (BitVec w : ann.basis())
      for (BitVec v : a.basis()) ASSERT_EQ(parity(w & v), 0) << "n = " << n;
    EXPECT_EQ(ann.annihilator(), a);
  }
}

TEST(Subspace, ReduceIsZeroExactlyForMembers) {
  std::mt19937_64 rng(25);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 10);
    const Subspace a = random_subspace(rng, n, static_cast<int>(rng() % (n + 1)));
    const std::set<BitVec> m = members(a);
    ASSERT_EQ(m.size(), BitVec{1} << a.dim());
    for (BitVec x = 0; x < (BitVec{1} << n); ++x) {
      ASSERT_EQ(a.reduce(x) == 0, m.count(x) == 1) << "n = " << n << ", x = " << x;
      ASSERT_EQ(a.reduce(x) & a.pivots(), 0u);                 // the canonical representative
      ASSERT_TRUE(m.count(x ^ a.reduce(x)));                   // differs from x by a member
    }
  }
}

TEST(Subspace, CoordinatesReconstruct) {
  std::mt19937_64 rng(26);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 64);
    // An arbitrary (not echelon) independent basis: random vectors kept while independent.
    std::vector<BitVec> basis;
    Subspace seen(n);
    const int want = static_cast<int>(rng() % (n + 1));
    while (static_cast<int>(basis.size()) < want) {
      const BitVec v = rng() & low_mask(n);
      if (seen.insert(v)) basis.push_back(v);
    }
    for (int k = 0; k < 10; ++k) {
      const BitVec coeff = rng() & low_mask(static_cast<int>(basis.size()));
      BitVec v = 0;
      for (size_t i = 0; i < basis.size(); ++i)
        if ((coeff >> i) & 1) v ^= basis[i];
      ASSERT_EQ(coordinates(basis, v), coeff) << "n = " << n;
      const BitVec outside = rng() & low_mask(n);
      EXPECT_EQ(coordinates(basis, outside).has_value(), seen.contains(outside));
    }
  }
  EXPECT_THROW((void)coordinates({0b011, 0b110, 0b101}, 0), std::invalid_argument);
  EXPECT_EQ(coordinates({}, 0), BitVec{0});
  EXPECT_FALSE(coordinates({}, 1).has_value());
}

TEST(Subspace, CoordinateComplementIsADirectSumExhaustively) {
  std::mt19937_64 rng(27);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 10);
    const Subspace a = random_subspace(rng, n, static_cast<int>(rng() % (n + 1)));
    const std::vector<int> comp = a.coordinate_complement();
    ASSERT_EQ(static_cast<int>(comp.size()) + a.dim(), n);
    // Every x is w ⊕ v for exactly one pair (w on the complement positions, v in the subspace).
    std::vector<int> hits(BitVec{1} << n, 0);
    const std::set<BitVec> m = members(a);
    for (BitVec k = 0; k < (BitVec{1} << comp.size()); ++k) {
      BitVec w = 0;
      for (size_t i = 0; i < comp.size(); ++i)
        if ((k >> i) & 1) w |= BitVec{1} << comp[i];
      for (BitVec v : m) ++hits[w ^ v];
    }
    for (BitVec x = 0; x < (BitVec{1} << n); ++x) ASSERT_EQ(hits[x], 1) << "n = " << n << ", x = " << x;
  }
}

TEST(Subspace, ImageUnderMatrices) {
  std::mt19937_64 rng(28);
  for (int n = 1; n <= 64; ++n) {
    const Bmmc a = random_bmmc(n, n);
    const int t = std::min(5, n);
    // A·L_t is spanned by the first t columns of A.
    std::vector<BitVec> cols;
    for (int j = 0; j < t; ++j) cols.push_back(a.matrix().col(j));
    EXPECT_EQ(Subspace::low_bits(n, t).image(a.matrix()), Subspace::span(n, cols));
    // An invertible map keeps dimensions, and its inverse maps the image back.
    const Subspace s = random_subspace(rng, n, static_cast<int>(rng() % (n + 1)));
    const Subspace img = s.image(a.matrix());
    EXPECT_EQ(img.dim(), s.dim());
    EXPECT_EQ(img.image(a.matrix().inverse()), s);
    // A rank-deficient map can only shrink it: the zero matrix sends everything to {0}.
    EXPECT_EQ(s.image(BitMatrix(n, n)).dim(), 0);
  }
}

}  // namespace
}  // namespace bmmc
