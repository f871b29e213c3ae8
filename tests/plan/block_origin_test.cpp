// block_origin (plan.hpp): the one definition of where block b of a tile pass starts, used by the plan
// checker, the CPU tables, the generic GPU kernel and (through its columns) the code generator. Checked by
// its meaning: x0 carries b's bits exactly at the block positions, and z = A·x0 ⊕ c.
#include <gtest/gtest.h>

#include "bmmc/core/named.hpp"
#include "bmmc/plan/plan.hpp"
#include "bmmc/plan/gpu_policy.hpp"

namespace bmmc {
namespace {

TEST(BlockOrigin, DepositsBlockBitsAndAddsTheirImages) {
  constexpr int positions[] = {6, 9};
  constexpr std::uint64_t images[] = {0x30, 0x401};
  static_assert(block_origin(positions, images, 2, 0x5, 0).x0 == 0);
  static_assert(block_origin(positions, images, 2, 0x5, 0).z == 0x5);
  static_assert(block_origin(positions, images, 2, 0x5, 0b10).x0 == (1u << 9));
  static_assert(block_origin(positions, images, 2, 0x5, 0b11).x0 == ((1u << 6) | (1u << 9)));
  static_assert(block_origin(positions, images, 2, 0x5, 0b11).z == (0x5 ^ 0x30 ^ 0x401));
}

TEST(BlockOrigin, IsTheCosetOriginOfEveryPlannedBlock) {
  // Plans without a tile pass have nothing to check: count what was checked, so that a planner that stopped
  // making tile passes fails here instead of passing with nothing checked.
  int plans = 0, tile_passes = 0;
  std::uint64_t blocks = 0;
  for (int seed = 0; seed < 40; ++seed) {
    const int n = 6 + seed % 11;  // 6..16
    for (const Bmmc& b : {random_bmmc(n, 500 + seed), random_bpc(n, 500 + seed) * reverse(n)}) {
      for (int eb : {1, 4, 16}) {
        const Plan plan = make_plan(b, eb, default_caps());
        ++plans;
        for (const Pass& pass : plan.passes) {
          const auto* p = std::get_if<TilePass>(&pass);
          if (!p) continue;
          ++tile_passes;
          blocks += p->blocks();
          BitVec block_mask = 0;
          for (int w : p->block_positions) block_mask |= BitVec{1} << w;
          for (std::uint64_t blk = 0; blk < p->blocks(); ++blk) {
            const BlockOrigin o = block_origin(*p, blk);
            ASSERT_EQ(o.x0 & ~block_mask, 0u) << "x0 only has bits at the block positions";
            for (std::size_t i = 0; i < p->block_positions.size(); ++i)
              ASSERT_EQ((o.x0 >> p->block_positions[i]) & 1, (blk >> i) & 1);
            ASSERT_EQ(o.z, p->bmmc.apply(o.x0)) << "z = A·x0 ^ c, n = " << n << ", block " << blk;
          }
        }
      }
    }
  }
  EXPECT_EQ(plans, 40 * 2 * 3);
  EXPECT_GE(tile_passes, plans) << "every plan of n >= 6 has at least one tile pass";
  EXPECT_GE(blocks, 2000u) << "blocks checked (2769 with the planner of this test's writing)";
}

}  // namespace
}  // namespace bmmc
