// The plan across nodes (node_plan.hpp, node_simulate.hpp): random geometries of 2..1024 ranks in 1..128 nodes
// against the single-array reference, the bytes crossing between nodes counted exactly and checked against the
// bound from A alone (per rank, per node, and element by element: only the elements whose node changes cross,
// each once), random BMMCs and BPCs, bit-reverse, transposes, node↔offset and node↔local-rank bit swaps; the
// header's worked example; the one-exchange plan exceeding the bound where the hierarchy exists for; bad input.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bmmc/cpu/reference.hpp"
#include "bmmc/dist/node_plan.hpp"
#include "bmmc/dist/node_simulate.hpp"
#include "bmmc/dist/schedule.hpp"
#include "dist/error_message.hpp"
#include "dist_test_support.hpp"

namespace bmmc {
namespace {

std::vector<std::byte> seeded_bytes(std::size_t bytes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> v(bytes);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

// Runs the node plan of `b` and checks everything the plan promises; returns the report.
NodeSimReport expect_node_plan_holds(const Bmmc& b, int g, int h, int e, const std::string& what) {
  const NodePlan plan = make_node_plan(b, g, h, e);
  const int n = b.n(), m = n - g, l_bits = g - h;
  const std::size_t bytes = (std::size_t{1} << n) * e;
  const std::vector<std::byte> in = seeded_bytes(bytes, n * 131 + g * 7 + h);
  std::vector<std::byte> out(bytes, std::byte{0xA5}), want(bytes);
  permute_reference(b, in.data(), want.data(), e);
  const NodeSimReport rep = simulate_node_permute(plan, in.data(), out.data());
  EXPECT_TRUE(out == want) << what << ": the simulated nodes differ from the reference";

  // Element by element: the elements whose node changes, per source node (the least that must cross).
  std::vector<std::uint64_t> leaving(plan.node_count(), 0);
  for (BitVec x = 0; x < (BitVec{1} << n); ++x)
    if ((x >> (n - h)) != (b.apply(x) >> (n - h))) ++leaving[x >> (n - h)];
  const NodeTraffic t = node_traffic(plan);
  const DistPlan flat = make_dist_plan(b, g, e);
  std::vector<std::uint64_t> sent_by_node(plan.node_count(), 0), received_by_node(plan.node_count(), 0);
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    const NetworkBound bound = network_bound(b, g, h, e, r);
    EXPECT_EQ(bound.node_elems, leaving[r >> l_bits]) << what << ": the bound of rank " << r;
    EXPECT_LE(rep.network_bytes[r], bound.rank_bytes) << what << ": rank " << r << " sends more than the bound";
    if (plan.node_k() <= m)  // the chunk bits all lie in the offset: every rank sends exactly its share
      EXPECT_EQ(rep.network_bytes[r], bound.rank_bytes) << what << ": rank " << r;
    EXPECT_EQ(rep.network_bytes[r], t.bytes[r]) << what << ": counted and planned bytes of rank " << r;
    EXPECT_EQ(t.bound_bytes[r], bound.rank_bytes) << what;
    // What arrives: by the same argument for A⁻¹, at most the receiving node's share.
    EXPECT_LE(rep.received_bytes[r], network_bound(b.inverse(), g, h, e, r).rank_bytes) << what << ": rank " << r;
    std::uint64_t straight = 0;
    for (const SendStep& s : send_schedule(flat, r))
      if ((s.dest >> l_bits) != (r >> l_bits)) straight += s.count * e;
    EXPECT_EQ(t.one_exchange_bytes[r], straight) << what << ": the one-exchange plan's bytes of rank " << r;
    sent_by_node[r >> l_bits] += rep.network_bytes[r];
    received_by_node[r >> l_bits] += rep.received_bytes[r];
  }
  std::uint64_t all_leaving = 0;
  for (BitVec v = 0; v < plan.node_count(); ++v) {
    // Exactly the elements that must leave, each once: no element crosses twice or needlessly.
    EXPECT_EQ(sent_by_node[v], leaving[v] * e) << what << ": node " << v;
    all_leaving += leaving[v];
  }
  std::uint64_t all_received = 0;
  for (std::uint64_t x : received_by_node) all_received += x;
  EXPECT_EQ(all_received, all_leaving * e) << what;
  if (h == 0) EXPECT_EQ(all_leaving, 0u) << what;
  return rep;
}

// 2..1024 ranks in 1..128 nodes: random geometries (not every combination), every map family.
TEST(NodePlan, RandomGeometriesAgainstTheReferenceAndTheBound) {
  std::mt19937_64 rng(48);
  const int sizes[] = {1, 2, 4, 8, 16};
  for (int trial = 0; trial < 100; ++trial) {
    const int g = 1 + static_cast<int>(rng() % 10);            // 2..1024 ranks
    const int h = static_cast<int>(rng() % (std::min(g, 7) + 1));  // 1..128 nodes
    const int m = static_cast<int>(rng() % 5);
    const int n = m + g, e = sizes[rng() % 5];
    std::vector<std::pair<std::string, Bmmc>> maps = test::maps_for(n, rng());
    if (m >= 1 && h >= 1) maps.emplace_back("node-offset swap", test::one_bit_swap(m, g, 0, g - 1));
    if (g - h >= 1 && h >= 1) maps.emplace_back("node-local rank swap", test::one_bit_swap(m + g - h, h, m + g - h - 1, 0));
    if (m >= g) maps.emplace_back("all rank-offset swaps", test::rank_local_swap_all(m, g, rng()));
    for (const auto& [name, b] : maps)
      expect_node_plan_holds(b, g, h, e,
                             name + " n=" + std::to_string(n) + " G=" + std::to_string(1 << g) + " N=" +
                                 std::to_string(1 << h) + " e=" + std::to_string(e));
  }
}

// The extremes: 1024 ranks in 128 nodes and in 1, one rank per node, one node.
TEST(NodePlan, Extremes) {
  for (auto [g, h, m] : {std::tuple{10, 7, 2}, std::tuple{10, 0, 1}, std::tuple{7, 7, 3}, std::tuple{1, 1, 0},
                         std::tuple{3, 0, 4}, std::tuple{6, 6, 0}}) {
    const int n = m + g;
    for (const auto& [name, b] : test::maps_for(n, 1000 + n))
      expect_node_plan_holds(b, g, h, 4, name + " G=" + std::to_string(1 << g) + " N=" + std::to_string(1 << h));
  }
}

// The header's worked example, verbatim: G = 4 in N = 2 nodes, m = 3, the swap of local-rank bit 3 and node bit 4.
TEST(NodePlan, WorkedExampleLocalRankNodeSwap) {
  const Bmmc b = test::swaps(5, {{3, 4}});
  const NodePlan plan = make_node_plan(b, 2, 1, 4);
  EXPECT_EQ(plan.node_k(), 1);
  EXPECT_EQ(plan.nodes.pre, from_rows({0b0100, 0b0010, 0b0001, 0b1000}));  // p = (x_2, x_1, x_0, x_3)
  EXPECT_EQ(plan.rail, test::swaps(4, {{2, 3}}));
  // y = (x_2, x_1, x_3, x_0) on a node's 4 bits (x_3 the local rank), and its inverse on both nodes.
  EXPECT_EQ(plan.intra_pre.bmmc, from_rows({0b0100, 0b0010, 0b1000, 0b0001}));
  EXPECT_EQ(plan.intra_pre.k, 1);
  EXPECT_EQ(intra_post_for_node(plan, 0).bmmc, from_rows({0b0100, 0b0010, 0b1000, 0b0001}).inverse());
  EXPECT_EQ(intra_post_for_node(plan, 1).bmmc, from_rows({0b0100, 0b0010, 0b1000, 0b0001}).inverse());
  const NodeTraffic t = node_traffic(plan);
  EXPECT_EQ(t.bytes, (std::vector<std::uint64_t>{16, 16, 16, 16}));
  EXPECT_EQ(t.bound_bytes, (std::vector<std::uint64_t>{16, 16, 16, 16}));
  EXPECT_EQ(t.one_exchange_bytes, (std::vector<std::uint64_t>{0, 32, 32, 0}));
  EXPECT_EQ(t.nodes_keeping_a_chunk, 2u);
  for (BitVec r = 0; r < 4; ++r) {
    const BitVec node = r >> 1, local = r & 1;
    for (const NodeSend& s : inter_node_sends(plan, r)) {
      EXPECT_EQ(s.count, 4u);
      if (s.crosses) {
        EXPECT_EQ(s.offset, node == 0 ? 4u : 0u) << r;
        EXPECT_EQ(s.dest_rank, ((1 - node) << 1) | local) << r;
        EXPECT_EQ(s.dest_offset, 4 * node) << r;
      } else {
        EXPECT_EQ(s.dest_rank, r);
      }
    }
  }
  expect_node_plan_holds(b, 2, 1, 4, "worked example");
}

// k' = 0: one node, or node rows of A blind to the node-local bits: no gathering step, one intra-node exchange;
// with one node the post is the one-level plan itself.
TEST(NodePlan, WholeNodesMoveWithoutAGatheringStep) {
  const Bmmc one_node = random_bmmc(9, 5);
  const NodePlan a = make_node_plan(one_node, 3, 0, 4);
  EXPECT_TRUE(a.intra_pre.bmmc.is_identity());
  EXPECT_EQ(intra_post_for_node(a, 0).bmmc, one_node);
  // Node bits of A depend on the node bits only (block triangular over the node split): k' = 0.
  const Bmmc whole = test::block_triangular(7, 2, 9);
  const NodePlan b = make_node_plan(whole, 4, 2, 2);
  EXPECT_EQ(b.node_k(), 0);
  EXPECT_TRUE(b.intra_pre.bmmc.is_identity());
  for (const NodeSend& s : inter_node_sends(b, 5)) EXPECT_EQ(s.count, b.local_elems());
  expect_node_plan_holds(one_node, 3, 0, 4, "one node");
  expect_node_plan_holds(whole, 4, 2, 2, "whole nodes");
}

// The bound is what the one-exchange plan misses: swapping a local-rank bit with a node bit makes half the ranks
// of every node send their whole buffer there, twice the bound; the node plan spreads it over every rank.
TEST(NodePlan, OneExchangePlanExceedsTheBoundWhereTheNodePlanMeetsIt) {
  for (auto [m, g, h] : {std::tuple{4, 3, 1}, std::tuple{2, 6, 3}, std::tuple{3, 8, 7}}) {
    const Bmmc b = test::one_bit_swap(m + g - h, h, m + g - h - 1, 0);
    const NodeTraffic t = node_traffic(make_node_plan(b, g, h, 8));
    std::uint64_t worst = 0, worst_bound = 0;
    for (std::size_t r = 0; r < t.bytes.size(); ++r) {
      EXPECT_LE(t.bytes[r], t.bound_bytes[r]);
      worst = std::max(worst, t.one_exchange_bytes[r]);
      worst_bound = std::max(worst_bound, t.bound_bytes[r]);
    }
    EXPECT_EQ(worst, 2 * worst_bound) << "m=" << m << " g=" << g << " h=" << h;
  }
}

TEST(NodePlan, BadInput) {
  EXPECT_EQ(test::error_message([] { dist_node_bits(3, 8); }),
            "nodes = 3: expected a power of two from 1 to the rank count 8 (ranks are spread evenly over nodes)");
  EXPECT_NE(test::error_message([] { dist_node_bits(16, 8); }).find("nodes = 16"), std::string::npos);
  EXPECT_NE(test::error_message([] { dist_node_bits(0, 8); }).find("nodes = 0"), std::string::npos);
  EXPECT_EQ(dist_node_bits(8, 8), 3);
  EXPECT_EQ(test::error_message([] { make_node_plan(bit_reverse(6), 2, 3, 4); }),
            "node bits h = 3 must lie in 0..g = 0..2: every node holds whole ranks");
  const NodePlan plan = make_node_plan(bit_reverse(6), 2, 1, 4);
  EXPECT_NE(test::error_message([&] { inter_node_sends(plan, 4); }).find("rank 4 is outside 0..3"), std::string::npos);
  EXPECT_NE(test::error_message([&] { intra_post_for_node(plan, 2); }).find("node 2 is outside 0..1"),
            std::string::npos);
  NodePlan edited = plan;
  edited.rail = Bmmc(edited.rail.matrix(), 1);
  std::vector<std::byte> in(256), out(256, std::byte{7});
  EXPECT_NE(test::error_message([&] { simulate_node_permute(edited, in.data(), out.data()); }).find("hand-edited"),
            std::string::npos);
  EXPECT_TRUE(out == std::vector<std::byte>(256, std::byte{7}));
  EXPECT_NE(test::error_message([&] { simulate_node_permute(plan, in.data(), nullptr); }), "no error");
}

}  // namespace
}  // namespace bmmc
