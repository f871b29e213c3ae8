// Involutions: is_involution, swap_index_bits and factor_involutions, by property over seeded random maps of
// every class (n = 1..64), exhaustively over every affine map of up to 3 bits, on named maps, and on the
// worked example of involution.hpp verbatim. Every factorisation is checked two ways: with compose() and by
// pushing indices through the factors one at a time, g_1 first, which pins the composition order down
// independently of compose().
//
// Measured factor counts for random general BMMCs (random_bmmc, 200 per n; HistogramOfRandomGeneralMatrices
// records them as test properties, count:how many): n = 8: 2:2 3:198, n = 16: 3:198 4:2,
// n = 30: 3:198 4:2, n = 64: 3:200. Every affine map of 3 bits (AGL(3, 2), 1344 maps): 0:1 1:91 2:868 3:384,
// each the fewest possible.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bmmc/core/involution.hpp"
#include "bmmc/core/named.hpp"

namespace bmmc {
namespace {

BitMatrix random_invertible(int n, std::mt19937_64& rng) {
  for (;;) {
    std::vector<BitVec> rows(n);
    for (BitVec& r : rows) r = rng() & low_mask(n);
    BitMatrix m = BitMatrix::from_rows(n, rows);
    if (m.invertible()) return m;
  }
}

// S = Q·D·Q⁻¹ with D = I ⊕ (bit 2i+1 into bit 2i, for i < k), k random; c = Q·d with d ∈ Fix(D), so
// (S, c) is an involution (Fix(S) = Q·Fix(D)).
Bmmc random_involution(int n, std::mt19937_64& rng) {
  const int k = static_cast<int>(rng() % (n / 2 + 1));
  BitMatrix d = BitMatrix::identity(n);
  BitVec moved = 0;  // the coordinates D does not fix
  for (int i = 0; i < k; ++i) {
    d.set(2 * i, 2 * i + 1, true);
    moved |= BitVec{1} << (2 * i + 1);
  }
  const BitMatrix q = random_invertible(n, rng);
  return Bmmc(q * d * q.inverse(), q.apply(rng() & low_mask(n) & ~moved));
}

// Q·U·Q⁻¹ with U upper unitriangular, any complement.
Bmmc random_unipotent(int n, std::mt19937_64& rng) {
  BitMatrix u = BitMatrix::identity(n);
  for (int i = 0; i < n; ++i) u.set_row(i, (rng() & low_mask(n) & ~low_mask(i + 1)) | (BitVec{1} << i));
  const BitMatrix q = random_invertible(n, rng);
  return Bmmc(q * u * q.inverse(), rng() & low_mask(n));
}

bool unipotent(const BitMatrix& a) {
  const int n = a.rows();
  BitMatrix nil = a + BitMatrix::identity(n), p = BitMatrix::identity(n);
  for (int i = 0; i < n; ++i) p = p * nil;
  return p == BitMatrix(n, n);
}

// Checks factor_involutions on f and returns the factor count.
int expect_factorization(const Bmmc& f, int max_factors, const std::string& what) {
  const InvolutionFactorization r = factor_involutions_explained(f);
  const int n = f.n(), k = static_cast<int>(r.factors.size());
  EXPECT_LE(k, max_factors) << what << " (route " << r.route << ")\n" << f.to_string();
  EXPECT_LE(k, r.bound) << what << " (route " << r.route << ")";
  Bmmc product = identity(n);
  for (const Bmmc& g : r.factors) {
    EXPECT_TRUE(is_involution(g)) << what << "\n" << g.to_string();
    EXPECT_FALSE(g.is_identity()) << what;
    product = compose(g, product);  // g_1 first: f = g_k ∘ … ∘ g_1
  }
  EXPECT_EQ(product, f) << what << " (route " << r.route << ")";
  // The same without compose(): push indices through g_1, then g_2, …
  std::mt19937_64 rng(n * 7919 + k);
  const int samples = n <= 8 ? (1 << n) : 64;
  for (int s = 0; s < samples; ++s) {
    const BitVec x = n <= 8 ? static_cast<BitVec>(s) : rng() & low_mask(n);
    BitVec y = x;
    for (const Bmmc& g : r.factors) y = g.apply(y);
    if (y != f.apply(x)) {
      ADD_FAILURE() << what << ": the factors, g_1 first, send x = " << x << " to " << y << ", f to "
                    << f.apply(x);
      break;
    }
  }
  EXPECT_EQ(factor_involutions(f), r.factors) << what << ": not deterministic";
  return k;
}

std::string histogram_text(const std::map<int, int>& h) {
  std::string s;
  for (const auto& [k, count] : h) s += (s.empty() ? "" : " ") + std::to_string(k) + ":" + std::to_string(count);
  return s;
}

TEST(IsInvolution, KnownMaps) {
  for (int n : {1, 2, 5, 64}) {
    EXPECT_TRUE(is_involution(bit_reverse(n))) << n;
    EXPECT_TRUE(is_involution(reverse(n))) << n;  // complement only: x ↦ x ⊕ c
    EXPECT_TRUE(is_involution(Bmmc(BitMatrix::identity(n), BitVec{1} << (n - 1)))) << n;
    EXPECT_TRUE(is_involution(identity(n))) << n;
    EXPECT_TRUE(is_involution(swap_index_bits(n, n >= 2 ? std::vector<std::pair<int, int>>{{0, n - 1}}
                                                         : std::vector<std::pair<int, int>>{})))
        << n;
  }
  EXPECT_TRUE(is_involution(transpose(8, 4)));   // square transpose: swaps the two halves of the bits
  EXPECT_FALSE(is_involution(transpose(8, 3)));  // 3-cycles of bits
  EXPECT_TRUE(is_involution(gray(2)));           // A = I ⊕ E_01 squares to I
  for (int n : {3, 4, 17, 64}) {
    EXPECT_FALSE(is_involution(gray(n))) << n;
    EXPECT_FALSE(is_involution(rotate(n, 1))) << n;
  }
  // A swap with a complement outside its fixed space: x ↦ swap(x) ⊕ 1 has order 4.
  const Bmmc s01 = swap_index_bits(2, {{0, 1}});
  EXPECT_FALSE(is_involution(Bmmc(s01.matrix(), 0b01)));
  EXPECT_TRUE(is_involution(Bmmc(s01.matrix(), 0b11)));
}

TEST(IsInvolution, AgreesWithComposingTwiceOnRandomMaps) {
  std::mt19937_64 rng(11);
  for (int n = 1; n <= 64; ++n)
    for (int t = 0; t < 6; ++t) {
      const Bmmc f = t % 2 ? random_involution(n, rng) : random_bmmc(n, rng());
      EXPECT_EQ(is_involution(f), compose(f, f).is_identity()) << "n = " << n << "\n" << f.to_string();
      if (t % 2) EXPECT_TRUE(is_involution(f)) << "n = " << n;
    }
}

TEST(SwapIndexBits, BuildsTheSwapMatrix) {
  const Bmmc s = swap_index_bits(8, {{0, 7}, {3, 2}});
  EXPECT_EQ(s, bit_permutation({7, 1, 3, 2, 4, 5, 6, 0}));
  EXPECT_TRUE(s.is_bp());
  EXPECT_TRUE(is_involution(s));
  for (BitVec x = 0; x < 256; ++x) {
    BitVec y = x & 0b01110010;
    y |= ((x >> 0) & 1) << 7 | ((x >> 7) & 1) << 0 | ((x >> 2) & 1) << 3 | ((x >> 3) & 1) << 2;
    ASSERT_EQ(s.apply(x), y) << x;
  }
  EXPECT_EQ(swap_index_bits(4, {{0, 3}}).apply(0b0001), 0b1000u);  // the header's example
  EXPECT_EQ(swap_index_bits(5, {}), identity(5));
  EXPECT_EQ(swap_index_bits(0, {}), identity(0));
  // All 32 pairs of 64 bits at once: the bit-reverse.
  std::vector<std::pair<int, int>> all;
  for (int i = 0; i < 32; ++i) all.emplace_back(i, 63 - i);
  EXPECT_EQ(swap_index_bits(64, all), bit_reverse(64));
}

void expect_swap_error(int n, const std::vector<std::pair<int, int>>& pairs, const std::string& fragment) {
  try {
    (void)swap_index_bits(n, pairs);
    ADD_FAILURE() << "no error; expected one mentioning \"" << fragment << "\"";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(SwapIndexBits, RejectsBadPairsNamingThem) {
  expect_swap_error(8, {{0, 1}, {2, 8}}, "pair 1 (2, 8)");
  expect_swap_error(8, {{0, 1}, {2, 8}}, "outside 0..7");
  expect_swap_error(8, {{-1, 3}}, "pair 0 (-1, 3)");
  expect_swap_error(8, {{0, 1}, {4, 4}}, "pair 1 (4, 4) swaps bit 4 with itself");
  expect_swap_error(8, {{0, 1}, {2, 3}, {5, 1}}, "pair 2 (5, 1) reuses bit 1, already swapped by pair 0 (0, 1)");
  expect_swap_error(8, {{0, 1}, {1, 0}}, "pair 1 (1, 0) reuses bit 1");
  expect_swap_error(65, {}, "between 0 and 64");
  expect_swap_error(-1, {}, "got -1");
}

TEST(FactorInvolutions, WorkedExampleFromTheHeader) {
  const Bmmc g = gray(3);
  ASSERT_EQ(g.matrix().to_string(), "11.\n.11\n..1\n");
  EXPECT_EQ(g.apply(4), 6u);
  EXPECT_EQ(g.apply(6), 5u);
  const InvolutionFactorization r = factor_involutions_explained(g);
  EXPECT_EQ(r.route, "unipotent");
  EXPECT_EQ(r.bound, 2);
  ASSERT_EQ(r.factors.size(), 2u);
  EXPECT_EQ(r.factors[0].to_string(), "1.1\n.11\n..1\nc = 0x0\n");
  EXPECT_EQ(r.factors[1].to_string(), "11.\n.1.\n..1\nc = 0x0\n");
  EXPECT_EQ(r.factors[0].apply(4), 7u);
  EXPECT_EQ(r.factors[0].apply(5), 6u);
  EXPECT_EQ(r.factors[1].apply(7), 6u);
  EXPECT_EQ(r.factors[1].apply(2), 3u);
  EXPECT_EQ(compose(r.factors[1], r.factors[0]), g);
  EXPECT_NE(compose(r.factors[0], r.factors[1]), g);  // the order matters
}

TEST(FactorInvolutions, IdentityIsEmptyAndAnInvolutionIsItself) {
  std::mt19937_64 rng(5);
  for (int n : {0, 1, 2, 7, 64}) {
    const InvolutionFactorization r = factor_involutions_explained(identity(n));
    EXPECT_TRUE(r.factors.empty());
    EXPECT_EQ(r.route, "identity");
  }
  for (int n = 1; n <= 64; ++n)
    for (int t = 0; t < 4; ++t) {
      const Bmmc f = random_involution(n, rng);
      if (f.is_identity()) continue;
      const InvolutionFactorization r = factor_involutions_explained(f);
      EXPECT_EQ(r.route, "involution");
      EXPECT_EQ(r.factors, std::vector<Bmmc>{f}) << "n = " << n;
    }
}

TEST(FactorInvolutions, BpcTakesAtMostTwo) {
  for (int n = 1; n <= 64; ++n)
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
      const Bmmc f = random_bpc(n, seed * 100 + n);
      const int k = expect_factorization(f, 2, "BPC n = " + std::to_string(n) + ", seed " + std::to_string(seed));
      if (k == 2) EXPECT_EQ(factor_involutions_explained(f).route, "bpc");
    }
  // Every complement on one 5-cycle and a fixed bit (both parities of the cycle's part, the fixed bit set or
  // not), and on two 2-cycles, where the linear part is itself an involution.
  for (BitVec c = 0; c < 64; ++c) {
    expect_factorization(Bmmc(bit_permutation({1, 2, 3, 4, 0, 5}).matrix(), c), 2, "5-cycle, c = " + std::to_string(c));
    if (c < 16) expect_factorization(Bmmc(swap_index_bits(4, {{0, 1}, {2, 3}}).matrix(), c), 2, "swaps, c = " + std::to_string(c));
  }
}

TEST(FactorInvolutions, UnipotentTakesAtMostTwo) {
  std::mt19937_64 rng(23);
  for (int n = 1; n <= 64; ++n)
    for (int t = 0; t < 5; ++t) {
      const Bmmc f = random_unipotent(n, rng);
      ASSERT_TRUE(unipotent(f.matrix()));
      const int k = expect_factorization(f, 2, "unipotent n = " + std::to_string(n));
      if (k == 2 && !f.is_bpc()) EXPECT_EQ(factor_involutions_explained(f).route, "unipotent") << n;
    }
  // A² = I but A·c ≠ c: the linear part is one involution, the complement needs a translation.
  const Bmmc t(BitMatrix::from_rows(2, {0b11, 0b10}), 0b10);
  ASSERT_FALSE(is_involution(t));
  const InvolutionFactorization r = factor_involutions_explained(t);
  EXPECT_EQ(r.route, "unipotent");
  ASSERT_EQ(r.factors.size(), 2u);
  EXPECT_EQ(r.factors[0].matrix(), t.matrix());
  EXPECT_EQ(r.factors[1].matrix(), BitMatrix::identity(2));
  expect_factorization(t, 2, "transvection with complement");
}

TEST(FactorInvolutions, GeneralTakesAtMostFour) {
  std::map<int, int> histogram;
  int general = 0;
  for (int n = 1; n <= 64; ++n)
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
      const Bmmc f = random_bmmc(n, seed * 1000 + n);
      const int k = expect_factorization(f, 4, "general n = " + std::to_string(n) + ", seed " + std::to_string(seed));
      ++histogram[k];
      general += !f.is_bpc() && !unipotent(f.matrix());
    }
  RecordProperty("histogram_n1_to_64", histogram_text(histogram));
  EXPECT_GT(general, 300);  // the sample is mostly general matrices
}

TEST(FactorInvolutions, HistogramOfRandomGeneralMatrices) {
  for (int n : {8, 16, 30, 64}) {
    std::map<int, int> histogram;
    const int count = 200;
    for (int s = 0; s < count; ++s) ++histogram[expect_factorization(random_bmmc(n, 4242 + s * 64 + n), 4, "n = " + std::to_string(n))];
    RecordProperty("histogram_n" + std::to_string(n), histogram_text(histogram));
    int at_most_3 = 0, at_most_5 = 0;
    for (const auto& [k, c] : histogram) {
      at_most_3 += k <= 3 ? c : 0;
      at_most_5 += k <= 5 ? c : 0;
    }
    EXPECT_GE(at_most_5, count * 95 / 100) << "n = " << n << ": " << histogram_text(histogram);
    EXPECT_GE(at_most_3, count * 90 / 100) << "n = " << n << ": " << histogram_text(histogram);
  }
}

// The fewest involutions each affine map of n bits needs, by breadth-first search over products of the
// group's involutions (0 for the identity; maps needing more than 3 are left out: none exist for n ≤ 3).
std::unordered_map<Bmmc, int> minimal_lengths(const std::vector<Bmmc>& group) {
  std::vector<Bmmc> involutions;
  for (const Bmmc& f : group)
    if (is_involution(f) && !f.is_identity()) involutions.push_back(f);
  std::unordered_map<Bmmc, int> length{{identity(group.front().n()), 0}};
  std::vector<Bmmc> frontier{identity(group.front().n())};
  for (int k = 1; k <= 3; ++k) {
    std::vector<Bmmc> next;
    for (const Bmmc& x : frontier)
      for (const Bmmc& g : involutions)
        if (const Bmmc y = compose(g, x); length.emplace(y, k).second) next.push_back(y);
    frontier = std::move(next);
  }
  return length;
}

TEST(FactorInvolutions, OptimalOnEveryAffineMapOfUpToThreeBits) {
  std::map<int, int> histogram;
  for (int n = 1; n <= 3; ++n) {
    std::vector<Bmmc> group;  // AGL(n, 2)
    for (BitVec bits = 0; bits < (BitVec{1} << (n * n)); ++bits) {
      std::vector<BitVec> rows(n);
      for (int i = 0; i < n; ++i) rows[i] = (bits >> (i * n)) & low_mask(n);
      const BitMatrix a = BitMatrix::from_rows(n, rows);
      if (a.invertible())
        for (BitVec c = 0; c < (BitVec{1} << n); ++c) group.emplace_back(a, c);
    }
    const std::unordered_map<Bmmc, int> best = minimal_lengths(group);
    for (const Bmmc& f : group) {
      const int k = expect_factorization(f, 4, "n = " + std::to_string(n));
      ASSERT_TRUE(best.count(f)) << f.to_string();
      EXPECT_EQ(k, best.at(f)) << "not the fewest involutions for\n" << f.to_string();
      if (n == 3) ++histogram[k];
    }
  }
  RecordProperty("histogram_agl3", histogram_text(histogram));
  EXPECT_EQ(histogram_text(histogram), "0:1 1:91 2:868 3:384");
}

TEST(FactorInvolutions, NamedMaps) {
  for (int n = 1; n <= 64; ++n) {
    const std::string at = ", n = " + std::to_string(n);
    EXPECT_EQ(expect_factorization(bit_reverse(n), 1, "bit_reverse" + at), n == 1 ? 0 : 1);
    EXPECT_EQ(expect_factorization(reverse(n), 1, "reverse" + at), 1);
    if (n >= 3) {
      EXPECT_EQ(expect_factorization(gray(n), 2, "gray" + at), 2);
      EXPECT_EQ(factor_involutions_explained(gray(n)).route, "unipotent");
      EXPECT_EQ(expect_factorization(gray_inverse(n), 2, "gray_inverse" + at), 2);
      EXPECT_EQ(expect_factorization(Bmmc(gray(n).matrix(), low_mask(n)), 2, "gray with complement" + at), 2);
    }
    for (int r = 0; r <= n; r += 1 + n / 8) {
      const Bmmc t = transpose(n, r);
      const int k = expect_factorization(t, 2, "transpose" + at + ", r = " + std::to_string(r));
      EXPECT_EQ(k, t.is_identity() ? 0 : is_involution(t) ? 1 : 2);
    }
    expect_factorization(rotate(n, 1), 2, "rotate" + at);
    expect_factorization(compose(gray(n), bit_reverse(n)), 4, "gray after bit_reverse" + at);
    expect_factorization(compose(bit_reverse(n), gray(n)), 4, "bit_reverse after gray" + at);
  }
}

TEST(FactorInvolutions, MatricesWithoutAPlainLuOrNotCyclic) {
  std::mt19937_64 rng(31);
  // A zero corner: Q = I cannot serve the LU route, the transvection construction must.
  for (int n = 2; n <= 64; n += 3) {
    BitMatrix a = random_invertible(n, rng);
    while (a.get(0, 0)) a = random_invertible(n, rng);
    expect_factorization(Bmmc(a, rng() & low_mask(n)), 4, "a_00 = 0, n = " + std::to_string(n));
  }
  // Many equal invariant factors (B ⊕ B ⊕ … with B of order 3, hidden by a random conjugation): no
  // rank-1 or rank-2 update is controllable, so the pole-placement route fails and the LU route answers.
  for (int n : {4, 6, 20, 20, 40, 64, 64, 64}) {
    BitMatrix a(n, n);
    for (int i = 0; i < n; i += 2) {
      a.set(i, i + 1, true);
      a.set(i + 1, i, true);
      a.set(i + 1, i + 1, true);
    }
    const BitMatrix q = random_invertible(n, rng);
    const Bmmc f(q * a * q.inverse(), rng() & low_mask(n));
    expect_factorization(f, 4, "B^k, n = " + std::to_string(n));
    if (n >= 20) EXPECT_EQ(factor_involutions_explained(f).route, "general") << n;
  }
  // I ⊕ (a random rank-2 map), not unipotent: near the identity, where random conjugators rarely give an LU.
  for (int n = 3; n <= 64; n += 5)
    for (int t = 0; t < 4; ++t) {
      BitMatrix a = BitMatrix::identity(n);
      const BitVec u1 = rng() & low_mask(n), u2 = rng() & low_mask(n), w1 = rng() & low_mask(n),
                   w2 = rng() & low_mask(n);
      for (int i = 0; i < n; ++i) a.set_row(i, a.row(i) ^ (((u1 >> i) & 1) ? w1 : 0) ^ (((u2 >> i) & 1) ? w2 : 0));
      if (!a.invertible()) continue;
      expect_factorization(Bmmc(a, rng() & low_mask(n)), 4, "I + rank 2, n = " + std::to_string(n));
    }
}

}  // namespace
}  // namespace bmmc
