// The push pass without a GPU: for random maps over 2 … 8 ranks, the tile pass of the push plan's F runs on
// one rank's input (check_push_pass), rank r's blocks are exactly [r·B, (r+1)·B) with origins on rank r, and
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
#include "bmmc/plan/gpu_policy.hpp"
#include "peer_test_support.hpp"

namespace bmmc {
namespace {

TilePass push_pass_of(const Bmmc& a, int g, int eb) {
  const PushPlan pp = make_gpu_push_plan(a, g, eb);
  GpuPolicy policy;
  policy.variant = Variant::OnePass;
  const Plan plan = make_plan(pp.push, eb, default_caps(), policy);
  EXPECT_EQ(plan.passes.size(), 1u);
  return std::get<TilePass>(plan.passes[0]);
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
              const BlockOrigin o = block_origin(p, r * per_rank + b);
              EXPECT_EQ(o.x0 >> m, r) << "block " << b << " of rank " << r;
            }
        }
      }
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
      const KernelSource k = generate_rank_swap(sp.direct, m, eb, sp.vector_bits);
      EXPECT_EQ(k.kernel_name, "bmmc_rank_swap");
      jobs.emplace_back(fmt::format("rank swap eb {} m {} g {}", eb, m, g), k.source);
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
