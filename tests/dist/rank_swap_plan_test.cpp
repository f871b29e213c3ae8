// In place across ranks (rank_swap_plan.hpp): the plan's properties (f' = Q·f·Q an involution carrying the low
// vector bits + 5, Q a local bit swap), the worked example verbatim, and simulate_dist_swap against the global
// reference for 1 … 1024 ranks, every element size and every kind of involution; non-involutions refused.
#include "bmmc/dist/rank_swap_plan.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bmmc/core/involution.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/dist/simulate.hpp"
#include "dist/error_message.hpp"
#include "dist_test_support.hpp"

namespace bmmc {
namespace {

// Random disjoint bit swaps (a BPC involution) with a complement the swap fixes (c_i = c_(p(i))).
Bmmc random_swaps(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> bits(n);
  for (int i = 0; i < n; ++i) bits[i] = i;
  std::shuffle(bits.begin(), bits.end(), rng);
  std::vector<std::pair<int, int>> pairs;
  BitVec c = 0;
  for (int i = 0; i + 1 < n && pairs.size() < static_cast<std::size_t>(n / 3 + 1); i += 2) {
    pairs.emplace_back(bits[i], bits[i + 1]);
    if (rng() & 1) c |= (BitVec{1} << bits[i]) | (BitVec{1} << bits[i + 1]);
  }
  return test::swaps(n, pairs, c);
}

// A non-BPC involution: P·S·P⁻¹ for a random invertible P and a bit swap S.
Bmmc conjugated_swap(int n, std::uint64_t seed) {
  const Bmmc p = random_bmmc(n, seed);
  const Bmmc pl(p.matrix());
  return pl * test::swaps(n, {{0, n - 1}}) * pl.inverse();
}

std::vector<std::pair<std::string, Bmmc>> involutions(int m, int g, std::uint64_t seed) {
  const int n = m + g;
  std::vector<std::pair<std::string, Bmmc>> v = {{"reverse", reverse(n)}, {"bit-reverse", bit_reverse(n)},
                                                 {"random swaps", random_swaps(n, seed)}};
  if (g > 0 && m > 0) {
    v.emplace_back("rank <-> local 0", test::swaps(n, {{0, m}}));
    v.emplace_back("top rank <-> top local", test::swaps(n, {{m - 1, n - 1}}));
  }
  if (n >= 2) v.emplace_back("conjugated swap", conjugated_swap(n, seed));
  return v;
}

void expect_swap_matches(const Bmmc& f, int g, int eb, std::uint64_t seed, const std::string& what) {
  const RankSwapPlan p = make_rank_swap_plan(f, g, eb);
  const int m = p.local_bits, n = p.n();
  ASSERT_TRUE(is_involution(p.direct)) << what;
  ASSERT_TRUE(is_involution(p.conjugate)) << what;
  ASSERT_TRUE(p.conjugate.is_bp()) << what;
  std::vector<int> wide(n);
  for (int i = 0; i < n; ++i) wide[i] = i < m ? __builtin_ctzll(p.conjugate.matrix().col(i)) : i;
  const Bmmc q = bit_permutation(wide);
  ASSERT_EQ(q * p.direct * q, f) << what;
  if (p.vector_bits > 0) EXPECT_GE(carried_low_bits(p.direct), p.vector_bits + 5) << what;
  const std::size_t slice = p.local_elems() * eb;
  std::vector<unsigned char> whole(slice * p.ranks()), ref(whole.size());
  test::fill_random(whole, seed);
  permute_reference(f, whole.data(), ref.data(), eb);
  std::vector<std::vector<unsigned char>> data(p.ranks());
  std::vector<void*> ptrs;
  for (BitVec r = 0; r < p.ranks(); ++r) {
    data[r].assign(whole.begin() + r * slice, whole.begin() + (r + 1) * slice);
    data[r].resize(slice + 16);
    ptrs.push_back(data[r].data());
  }
  CpuPolicy cpu;
  cpu.threads = 1;
  simulate_dist_swap(p, ptrs, cpu);
  for (BitVec r = 0; r < p.ranks(); ++r)
    ASSERT_EQ(std::memcmp(data[r].data(), ref.data() + r * slice, slice), 0)
        << what << ": rank " << r << " of " << p.ranks() << ", eb " << eb << "\n" << describe(p);
}

TEST(RankSwapPlan, WorkedExampleRankBitWithLocalBitZero) {
  const RankSwapPlan p = make_rank_swap_plan(test::swaps(11, {{0, 10}}), 1, 4);
  EXPECT_EQ(p.conjugate, test::swaps(10, {{0, 7}}));
  EXPECT_EQ(p.direct, test::swaps(11, {{7, 10}}));
  EXPECT_EQ(p.vector_bits, 2);
  EXPECT_TRUE(p.conjugated());
  EXPECT_NE(describe(p).find("local swap Q"), std::string::npos);
  // The top local bit needs no conjugation: 16-byte vectors swap straight away.
  const RankSwapPlan top = make_rank_swap_plan(test::swaps(11, {{9, 10}}), 1, 4);
  EXPECT_FALSE(top.conjugated());
  EXPECT_EQ(top.vector_bits, 2);
  // The pairs (rank 0, bit 9 set) <-> (rank 1, bit 9 clear) split on bit 8, the highest local bit ≥ 7 it fixes.
  EXPECT_EQ(top.owner_bit, 8);
  EXPECT_EQ(p.owner_bit, 9);
  EXPECT_TRUE(rank_swap_owns(8, 0x200, 0x400));    // lo on rank 0, bit 8 clear: rank 0's thread
  EXPECT_FALSE(rank_swap_owns(8, 0x400, 0x200));
  EXPECT_TRUE(rank_swap_owns(8, 0x500, 0x300));    // lo = 0x300 has bit 8 set: rank 1's thread (of 0x500)
  EXPECT_FALSE(rank_swap_owns(8, 0x300, 0x500));
  EXPECT_NE(describe(top).find("lo if bit 8 of lo is 0"), std::string::npos);
  // A hand-edited plan (owner bit, conjugation) is refused before any element moves.
  std::vector<std::uint32_t> r0(1024, 7), r1(1024, 7);
  for (int edit = 0; edit < 2; ++edit) {
    RankSwapPlan bad = p;
    if (edit == 0) bad.owner_bit = 3;
    if (edit == 1) bad.conjugate = identity(10);
    const std::string m = test::error_message([&] { simulate_dist_swap(bad, {r0.data(), r1.data()}); });
    EXPECT_NE(m.find("simulate_dist_swap: the plan differs from make_rank_swap_plan's"), std::string::npos) << m;
  }
  EXPECT_EQ(r0, std::vector<std::uint32_t>(1024, 7));
  EXPECT_EQ(r1, std::vector<std::uint32_t>(1024, 7));
}

// Every pair is swapped by exactly one thread, whatever the owner bit; and with the planner's owner bit the pairs
// between two ranks split evenly for bit swaps (a rank-bit swap keeps both ranks busy, not only the lower one).
TEST(RankSwapPlan, EveryPairHasOneOwnerAndBitSwapsShareTheWork) {
  for (int g = 1; g <= 3; ++g)
    for (const auto& [name, f] : involutions(10, g, 11 + g)) {
      const RankSwapPlan p = make_rank_swap_plan(f, g, 4);
      const int m = p.local_bits;
      std::vector<std::uint64_t> owned(p.ranks() * p.ranks(), 0);
      for (int bit : {-1, 0, 5, m - 1, p.owner_bit})
        for (BitVec x = 0; x < (BitVec{1} << p.n()); ++x) {
          const BitVec y = p.direct.apply(x);
          ASSERT_EQ(rank_swap_owns(bit, x, y) + rank_swap_owns(bit, y, x), x == y ? 0 : 1) << name << " bit " << bit;
          if (bit == p.owner_bit && rank_swap_owns(bit, x, y) && (x >> m) != (y >> m))
            ++owned[(x >> m) * p.ranks() + (y >> m)];
        }
      if (!f.is_bpc()) continue;
      for (BitVec a = 0; a < p.ranks(); ++a)
        for (BitVec b = a + 1; b < p.ranks(); ++b)
          EXPECT_EQ(owned[a * p.ranks() + b], owned[b * p.ranks() + a]) << name << " g=" << g << " ranks " << a << ", " << b;
    }
}

TEST(RankSwapPlan, SimulatedAgainstReferenceUpTo64Ranks) {
  for (int g = 0; g <= 6; ++g)
    for (int m = 0; m <= 12; m += (m < 4 ? 1 : 4))
      for (int eb : {1, 2, 4, 8, 16})
        for (const auto& [name, f] : involutions(m, g, 3 + 7 * g + m + eb))
          expect_swap_matches(f, g, eb, g + m + eb, name + " g=" + std::to_string(g) + " m=" + std::to_string(m));
}

TEST(RankSwapPlan, SimulatedAt1024Ranks) {
  for (const auto& [name, f] : involutions(12, 10, 5)) expect_swap_matches(f, 10, 8, 9, name);
}

TEST(RankSwapPlan, RefusesNonInvolutionsAndBadBuffers) {
  EXPECT_NE(test::error_message([] { make_rank_swap_plan(random_bmmc(12, 1), 1, 4); }).find("not one"),
            std::string::npos);
  const RankSwapPlan p = make_rank_swap_plan(test::swaps(9, {{0, 8}}), 1, 4);
  std::vector<unsigned char> a(1024, 7), b(1024, 9);
  EXPECT_THROW(simulate_dist_swap(p, {a.data()}), std::invalid_argument);                    // one buffer for 2 ranks
  EXPECT_THROW(simulate_dist_swap(p, {a.data(), a.data() + 512}), std::invalid_argument);    // overlap
  EXPECT_EQ(a, std::vector<unsigned char>(1024, 7));
  EXPECT_EQ(b, std::vector<unsigned char>(1024, 9));
}

}  // namespace
}  // namespace bmmc
