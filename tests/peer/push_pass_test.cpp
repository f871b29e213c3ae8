// The push pass without a GPU: for random maps over 2 … 8 ranks, the tile pass of the push plan's F runs on
// one rank's input (check_push_pass), rank r's launches are exactly [r·B, (r+1)·B) with origins on rank r, the
// launch order cycles through the destinations, and
// the emitted push kernel and the in-place kernel across ranks compile with NVRTC for sm_90; a pass that does not fit is refused with a reason.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <future>
#include <string>
#include <vector>

#include "bmmc/codegen/push_source.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cuda/nvrtc.hpp"
#include "bmmc/dist/push_plan.hpp"
#include "bmmc/dist/rank_swap_plan.hpp"
#include "bmmc/plan/block_order.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "peer_test_support.hpp"

namespace bmmc {
namespace {

TilePass push_pass_of(const Bmmc& a, int g, int eb) {
  const PushPlan pp = make_gpu_push_plan(a, g, eb);
  GpuPolicy policy;
  policy.variant = Variant::OnePass;
  policy.block_order = BlockOrder::Coordinate;
  const Plan plan = make_plan(pp.push, eb, default_caps(), policy);
  EXPECT_EQ(plan.passes.size(), 1u);
  TilePass p = std::get<TilePass>(plan.passes[0]);
  p.block_order = push_launch_order(p, a.n() - g);  // as PeerPermuter does
  return p;
}

TEST(PushPass, RankBlocksStayOnTheirRank) {
  int seed = 0;
  for (int g = 1; g <= 3; ++g)
    for (int m : {12, 16, 20})
      for (int eb : {1, 2, 4, 8, 16}) {
        const int n = m + g;
        for (const Bmmc& a : {random_bmmc(n, ++seed), random_bpc(n, ++seed), test::swaps(n, {{0, m}}), bit_reverse(n)}) {
          const TilePass p = push_pass_of(a, g, eb);
          ASSERT_NO_THROW(check_push_pass(p, m)) << "g " << g << " m " << m << " eb " << eb;
          const std::uint64_t per_rank = p.blocks() >> g;
          for (std::uint64_t r = 0; r < (1u << g); ++r)
            for (std::uint64_t b : {std::uint64_t{0}, per_rank / 3, per_rank - 1}) {
              const BlockOrigin o = block_origin(p, launched_block(p, r * per_rank + b));
              EXPECT_EQ(o.x0 >> m, r) << "launch " << b << " of rank " << r;
            }
        }
      }
}

// The launch order cycles through the destinations: for a swap of the rank bit with the top local bit, every
// second launch of a rank goes to the other rank (the coordinate order would run all local blocks first).
TEST(PushPass, LaunchOrderAlternatesTheDestinations) {
  for (int eb : {1, 4, 8, 16})
    for (int g = 1; g <= 2; ++g) {
      const int m = 20, n = m + g;
      const TilePass p = push_pass_of(test::swaps(n, {{m - 1, n - 1}}), g, eb);
      ASSERT_FALSE(p.block_order.empty());
      ASSERT_TRUE(is_block_order(p.block_order, static_cast<int>(p.block_positions.size())));
      EXPECT_EQ(p.block_positions[__builtin_ctzll(p.block_order[0])], m - 1) << "eb " << eb;
      const std::uint64_t per_rank = p.blocks() >> g;
      for (std::uint64_t r = 0; r < (1u << g); ++r)
        for (std::uint64_t i = 0; i + 1 < std::min<std::uint64_t>(per_rank, 64); i += 2) {
          const BitVec d0 = block_origin(p, launched_block(p, r * per_rank + i)).z >> m;
          const BitVec d1 = block_origin(p, launched_block(p, r * per_rank + i + 1)).z >> m;
          EXPECT_NE(d0, d1) << "eb " << eb << " g " << g << " rank " << r << " launch " << i;
        }
    }
  // A map that keeps every block on its rank needs no new order.
  const int m = 16;
  EXPECT_TRUE(push_launch_order(push_pass_of(bit_reverse(m), 0, 4), m).empty());
  // A launch order that moves blocks across ranks is refused.
  TilePass bad = push_pass_of(test::swaps(m + 1, {{m - 1, m}}), 1, 4);
  const int b = static_cast<int>(bad.block_positions.size());
  bad.block_order.assign(b, 0);
  for (int i = 0; i < b; ++i) bad.block_order[i] = std::uint64_t{1} << (b - 1 - i);
  EXPECT_THROW(check_push_pass(bad, m), std::invalid_argument);
}

TEST(PushPass, RefusesTilesThatLeaveTheRank) {
  // A itself (not the push plan's F) for a swap of local bit 0 with the rank bit: the tile reads along the rank bit.
  const int m = 16;
  const Bmmc a = test::swaps(m + 1, {{0, m}});
  const Plan plan = make_plan(a, 4, default_caps(), {Variant::OnePass});
  try {
    check_push_pass(std::get<TilePass>(plan.passes[0]), m);
    FAIL() << "accepted a tile outside the local bits";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("outside the 16 local bits"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_push_pass(push_pass_of(random_bmmc(m + 1, 3), 1, 4), 4), std::invalid_argument);
}

TEST(PushPass, KernelsCompileForSm90) {
  std::vector<std::pair<std::string, std::string>> jobs;
  int seed = 100;
  for (int eb : {1, 2, 4, 8, 16})
    for (auto [m, g] : {std::pair{14, 1}, std::pair{20, 2}, std::pair{31, 3}}) {  // 34 bits: 64-bit indices
      const TilePass p = push_pass_of(random_bmmc(m + g, ++seed), g, eb);
      const KernelSource k = generate_push(p, m, {eb == 4});
      EXPECT_EQ(k.kernel_name, "bmmc_push");
      EXPECT_EQ(k.grid, p.blocks() >> g);
      EXPECT_NE(k.source.find("__grid_constant__ bmmc_targets"), std::string::npos);
      jobs.emplace_back(fmt::format("eb {} m {} g {}", eb, m, g), k.source);
    }
  for (int eb : {1, 4, 16})  // the in-place kernel across ranks, 32- and 64-bit indices (n = 32: x >> 32)
    for (auto [m, g] : {std::pair{16, 1}, std::pair{30, 2}, std::pair{32, 0}}) {
      const RankSwapPlan sp = make_rank_swap_plan(test::swaps(m + g, {{0, m + g - 1}}), g, eb);
      for (int owner : {sp.owner_bit, -1}) {  // the planner's owner bit, and always the smaller index
        const KernelSource k = generate_rank_swap(sp.direct, m, eb, sp.vector_bits, owner);
        EXPECT_EQ(k.kernel_name, "bmmc_rank_swap");
        EXPECT_EQ(k.source.find("the other thread owns the pair") != std::string::npos, owner >= 0);
        jobs.emplace_back(fmt::format("rank swap eb {} m {} g {} owner bit {}", eb, m, g, owner), k.source);
      }
    }
  std::vector<std::future<std::vector<char>>> done;
  for (auto& [what, src] : jobs)
    done.push_back(std::async(std::launch::async, [src = src] { return compile_cubin(src, "bmmc_push.cu", 90); }));
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::vector<char> cubin;
    EXPECT_NO_THROW(cubin = done[i].get()) << jobs[i].first << "\n" << jobs[i].second;
    EXPECT_TRUE(looks_like_cubin(cubin)) << jobs[i].first;
  }
}

}  // namespace
}  // namespace bmmc
