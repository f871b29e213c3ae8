// In place across ranks in chunks (staged_swap_plan.hpp): the plan's properties (the chunk bits are fixed, f_c is
// f without them), the worked example verbatim, and simulate_dist_staged_swap — the chunk-by-chunk schedules the
// GPUs run (through the push engine, staging poisoned before each use, and through the copies) — against the global reference for 1 … 8 ranks, every element size,
// random BMMCs and BPCs that fix the top local bits and the rank ↔ local bit swaps; maps that move the top local
// bit refused (nullopt).
#include "bmmc/dist/staged_swap_plan.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/dist/push_plan.hpp"
#include "bmmc/dist/simulate.hpp"
#include "dist/error_message.hpp"
#include "dist_test_support.hpp"

namespace bmmc {
namespace {

// A random BMMC (or BPC) on every bit except the top `fixed` local bits, which it leaves alone.
Bmmc fixing_top_local_bits(int m, int g, int fixed, bool bpc, std::uint64_t seed) {
  const int n = m + g, k = n - fixed;
  const Bmmc inner = bpc ? random_bpc(k, seed) : random_bmmc(k, seed);
  std::vector<int> pos;  // inner bit i sits at pos[i]
  for (int i = 0; i < n; ++i)
    if (i < m - fixed || i >= m) pos.push_back(i);
  std::vector<BitVec> cols(n);
  for (int i = 0; i < n; ++i) cols[i] = BitVec{1} << i;
  BitVec c = 0;
  for (int j = 0; j < k; ++j) {
    BitVec col = 0;
    for (int i = 0; i < k; ++i)
      if ((inner.matrix().col(j) >> i) & 1) col |= BitVec{1} << pos[i];
    cols[pos[j]] = col;
    if ((inner.complement() >> j) & 1) c |= BitVec{1} << pos[j];
  }
  return Bmmc(BitMatrix::from_cols(n, cols), c);
}

void expect_staged_matches(const StagedSwapPlan& p, int seed, const std::string& what) {
  const int n = p.n(), m = p.local_bits, eb = p.elem_bytes;
  const std::size_t total = (std::size_t{1} << n) * eb, slice = total >> p.rank_bits;
  std::vector<unsigned char> whole(total), want(total);
  test::fill_random(whole, seed);
  permute_reference(p.bmmc, whole.data(), want.data(), eb);
  for (bool by_copies : {false, true}) {  // the push engine's schedule and the copy engine's
    std::vector<unsigned char> got = whole;
    std::vector<void*> data;
    for (std::uint64_t r = 0; r < p.ranks(); ++r) data.push_back(got.data() + r * slice);
    simulate_dist_staged_swap(p, data, {}, by_copies);
    EXPECT_EQ(got, want) << what << " (m = " << m << ", g = " << p.rank_bits << ", " << eb << "-byte elements, "
                         << p.chunks() << " chunks, " << (by_copies ? "copies" : "push") << ")";
  }
}

TEST(StagedSwapPlan, WorkedExampleRankBitWithLocalBitZero) {
  const Bmmc f = test::swaps(32, {{0, 31}});
  const auto p = make_staged_swap_plan(f, 1, 8);
  ASSERT_TRUE(p);
  EXPECT_EQ(fixed_top_local_bits(f, 1), 30);
  EXPECT_EQ(p->chunk_bits, 4);
  EXPECT_EQ(p->chunks(), 16u);
  EXPECT_EQ(p->chunk_bytes(), std::size_t{1} << 30);
  EXPECT_EQ(p->chunk_map, test::swaps(28, {{0, 27}}));
  EXPECT_FALSE(make_gpu_push_plan(p->chunk_map, 1, 8).one_pass());  // push + finish: in place is safe
  EXPECT_NE(describe(*p).find("16 chunks"), std::string::npos) << describe(*p);
}

TEST(StagedSwapPlan, ChunkMapIsTheMapWithoutTheChunkBits) {
  for (int seed = 1; seed <= 20; ++seed) {
    const int m = 12, g = 1 + seed % 3, fixed = 1 + seed % 4;
    const Bmmc f = fixing_top_local_bits(m, g, fixed, seed % 2 == 0, seed);
    EXPECT_GE(fixed_top_local_bits(f, g), fixed);
    const auto p = make_staged_swap_plan(f, g, 4, std::size_t{4} << (m - fixed), 4);
    ASSERT_TRUE(p) << seed;
    ASSERT_EQ(p->chunk_bits, fixed) << seed;
    // f(x) on any x equals f_c on x without the chunk bits, the chunk bits carried.
    const int lo = m - fixed;
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 200; ++i) {
      const BitVec x = rng() & low_mask(m + g), chunk = (x >> lo) & low_mask(fixed);
      const BitVec xc = (x & low_mask(lo)) | ((x >> m) << lo);
      const BitVec y = f.apply(x), yc = p->chunk_map.apply(xc);
      EXPECT_EQ((y >> lo) & low_mask(fixed), chunk);
      EXPECT_EQ((y & low_mask(lo)) | ((y >> m) << lo), yc);
    }
  }
}

TEST(StagedSwapPlan, SimulatedAgainstReference) {
  int seed = 100;
  for (int g : {0, 1, 2, 3})
    for (int eb : {1, 2, 4, 8, 16}) {
      const int m = 11;
      const std::size_t max_chunk = static_cast<std::size_t>(eb) << 8;  // chunks of 2^8 elements: 8 of them
      std::vector<std::pair<std::string, Bmmc>> maps = {
          {"random BMMC fixing 4 top local bits", fixing_top_local_bits(m, g, 4, false, ++seed)},
          {"random BPC fixing 3", fixing_top_local_bits(m, g, 3, true, ++seed)}};
      if (g > 0) {
        maps.emplace_back("rank <-> local 0", test::swaps(m + g, {{0, m}}));
        maps.emplace_back("top rank <-> local 1", test::swaps(m + g, {{1, m + g - 1}}));
      }
      for (const auto& [what, f] : maps) {
        const auto p = make_staged_swap_plan(f, g, eb, max_chunk, 4);
        ASSERT_TRUE(p) << what;
        EXPECT_EQ(p->chunk_elems(), 1u << 8) << what;
        expect_staged_matches(*p, ++seed, what);
      }
    }
}

TEST(StagedSwapPlan, MapsThatMoveTheTopLocalBitHaveNoChunks) {
  EXPECT_FALSE(make_staged_swap_plan(test::swaps(13, {{11, 12}}), 1, 4));  // the top local bit moves
  EXPECT_FALSE(make_staged_swap_plan(bit_reverse(13), 1, 4));
  EXPECT_EQ(fixed_top_local_bits(reverse(13), 1), 0);                      // complemented, not fixed
  // Chunks below 2^min_chunk_bits elements: none.
  EXPECT_FALSE(make_staged_swap_plan(test::swaps(13, {{0, 12}}), 1, 4, 16, 10));
  EXPECT_THROW(make_staged_swap_plan(identity(3), 4, 4), std::invalid_argument);  // more rank bits than n
}

// A staged plan edited by hand (another chunk map, chunk bits the map does not fix, chunk bits beyond the local
// bits) is refused before any element moves; the planner's own plan, at any chunk budget, runs.
TEST(StagedSwapPlan, HandEditedPlansAreRefusedBeforeMoving) {
  const Bmmc f = test::swaps(13, {{0, 12}});  // rank bit <-> local bit 0 on 2 ranks of 2^12
  const auto good = make_staged_swap_plan(f, 1, 4, std::size_t{4} << 8, 4);
  ASSERT_TRUE(good);
  std::vector<std::uint32_t> r0(4096, 7), r1(4096, 7);
  const std::vector<void*> data = {r0.data(), r1.data()};
  for (int edit = 0; edit < 3; ++edit) {
    StagedSwapPlan bad = *good;
    if (edit == 0) bad.chunk_map = identity(bad.chunk_map.n());
    if (edit == 1) bad.chunk_bits = bad.local_bits;      // the map moves local bit 0
    if (edit == 2) bad.chunk_bits = bad.local_bits + 3;  // beyond the local bits
    const std::string m = test::error_message([&] { simulate_dist_staged_swap(bad, data, {}, false); });
    EXPECT_NE(m.find("simulate_dist_staged_swap: "), std::string::npos) << edit << ": " << m;
  }
  EXPECT_EQ(r0, std::vector<std::uint32_t>(4096, 7));
  EXPECT_EQ(r1, std::vector<std::uint32_t>(4096, 7));
  EXPECT_NO_THROW(simulate_dist_staged_swap(*good, data, {}, false));
}

}  // namespace
}  // namespace bmmc
