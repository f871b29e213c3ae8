// The all-to-all form of the distributed plan (alltoall.hpp): every element of every rank lands, after the
// rank's pre-pass, inside the send segment of its true destination rank; the counts pair up between ranks;
// the header's worked example; the purely local case. (End-to-end runs against the reference are in
// simulate_test.cpp, Path::AllToAll, for 1 to 1024 ranks.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bmmc/dist/alltoall.hpp"
#include "dist/error_message.hpp"
#include "dist_test_support.hpp"

namespace bmmc {
namespace {

// Rank r's send segments: [begin, end) per destination, in ascending destination order as the collective lays
// them out.
std::vector<std::uint64_t> displacements(const std::vector<std::uint64_t>& counts) {
  std::vector<std::uint64_t> at(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) at[i + 1] = at[i] + counts[i];
  return at;
}

void expect_segments_hold_their_destinations(const Bmmc& b, int g, const std::string& what) {
  const DistPlan plan = make_dist_plan(b, g, 4);
  const int m = plan.local_bits;
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    const AllToAllStep s = alltoall_step(plan, r);
    std::uint64_t sent = 0, received = 0, destinations = 0;
    for (BitVec d = 0; d < plan.ranks(); ++d) {
      sent += s.send_counts[d];
      received += s.recv_counts[d];
      destinations += s.send_counts[d] != 0;
      EXPECT_TRUE(s.send_counts[d] == 0 || s.send_counts[d] == plan.chunk_elems()) << what;
      EXPECT_EQ(s.recv_counts[d], alltoall_step(plan, d).send_counts[r]) << what << ": " << d << " -> " << r;
    }
    EXPECT_EQ(sent, plan.local_elems()) << what;
    EXPECT_EQ(received, plan.local_elems()) << what;
    EXPECT_EQ(destinations, plan.destinations_per_rank()) << what;
    const std::vector<std::uint64_t> at = displacements(s.send_counts);
    for (BitVec x = 0; x < plan.local_elems(); ++x) {
      const BitVec dest = b.apply(x | (r << m)) >> m;
      const BitVec p = s.pre.apply(x);
      ASSERT_TRUE(at[dest] <= p && p < at[dest + 1])
          << what << ": rank " << r << " element " << x << " goes to rank " << dest << " but sits at " << p;
    }
  }
}

TEST(DistAllToAll, EveryElementSitsInItsDestinationsSegment) {
  for (int g = 0; g <= 5; ++g)
    for (int m : {0, 1, 3, 6})
      for (const auto& [name, b] : test::maps_for(m + g, 17 + g * 3 + m))
        expect_segments_hold_their_destinations(b, g, name + " g=" + std::to_string(g) + " m=" + std::to_string(m));
  expect_segments_hold_their_destinations(test::rank_local_swap_all(8, 4, 3), 4, "k = g");
  expect_segments_hold_their_destinations(test::block_triangular(5, 3, 2), 3, "k = 0");
}

TEST(DistAllToAll, WorkedExampleRankLocalSwap) {
  // 2 ranks of 4 elements, local bit 0 <-> the rank bit: every rank sends chunk t to rank t, counts (2, 2).
  const DistPlan plan = make_dist_plan(test::one_bit_swap(2, 1, 0, 0), 1, 4);
  ASSERT_EQ(plan.k, 1);
  for (BitVec r = 0; r < 2; ++r) {
    const AllToAllStep s = alltoall_step(plan, r);
    EXPECT_EQ(s.pre, plan.pre);
    EXPECT_EQ(s.post, post_for_rank(plan, r));
    EXPECT_EQ(s.send_counts, (std::vector<std::uint64_t>{2, 2}));
    EXPECT_EQ(s.recv_counts, (std::vector<std::uint64_t>{2, 2}));
    EXPECT_FALSE(s.local_only);
  }
}

TEST(DistAllToAll, LocalOnlyWhenNoElementChangesRank) {
  // A local permutation of every rank's slice (A_hl = 0, A_hh = I, c_h = 0): one local pass, the map itself.
  const int m = 6, g = 2;
  const Bmmc local = random_bmmc(m, 5);
  std::vector<BitVec> rows;
  for (int i = 0; i < m; ++i) rows.push_back(local.matrix().row(i) | (static_cast<BitVec>(i % 2) << (m + 1)));  // A_lh ≠ 0
  for (int i = 0; i < g; ++i) rows.push_back(BitVec{1} << (m + i));
  const Bmmc b = from_rows(rows, 0b101);
  const DistPlan plan = make_dist_plan(b, g, 8);
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    const AllToAllStep s = alltoall_step(plan, r);
    EXPECT_TRUE(s.local_only);
    for (BitVec x = 0; x < plan.local_elems(); ++x) EXPECT_EQ(s.local.apply(x), b.apply(x | (r << m)) & low_mask(m));
  }
  // Ranks swap whole slices (k = 0, A_hh ≠ I): data moves, so not local.
  EXPECT_FALSE(alltoall_step(make_dist_plan(reverse(m + g), g, 8), 0).local_only);
}

TEST(DistAllToAll, RankOutOfRange) {
  const DistPlan plan = make_dist_plan(random_bmmc(8, 1), 2, 4);
  EXPECT_NE(test::error_message([&] { alltoall_step(plan, 4); }), "no error");
}

}  // namespace
}  // namespace bmmc
