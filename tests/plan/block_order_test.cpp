// Launch orders of tile passes (plan/block_order.hpp): the worked example of the header verbatim, and by
// property over random BMMCs — M is a bijection of the block indices, the Output order steps through the
// lowest output directions, the Balanced order takes directions in order of the least r at which they are low
// on both sides — and every ordered plan passes the plan checker (each output written once, coalesced,
// conflict-free).
#include <gtest/gtest.h>

#include "bmmc/core/named.hpp"
#include "bmmc/plan/block_order.hpp"
#include "bmmc/plan/plan_check.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {
namespace {

// x0 of the block that launch bit j runs (launch index 2^j).
BitVec launch_direction(const TilePass& p, int j) { return block_origin(p, launched_block(p, std::uint64_t{1} << j)).x0; }

TilePass one_pass(const Bmmc& b, int eb, BlockOrder order) {
  PlanOptions o;
  o.variant = Variant::OnePass;
  o.tile_bits = 12;
  o.block_order = order;
  return std::get<TilePass>(make_plan(b, eb, o).passes.at(0));
}

TEST(BlockOrder, WorkedExampleOfTheHeader) {
  // n = 3, V' = span(e_0), A = the cyclic shift e_0 -> e_1 -> e_2 -> e_0 (column j = A·e_j).
  const BitMatrix a = BitMatrix::from_cols(3, {0b010, 0b100, 0b001});
  const Subspace v = Subspace::span(3, {0b001});
  EXPECT_EQ(block_order_columns(a, v, BlockOrder::Output), (std::vector<std::uint64_t>{0b10, 0b01}));
  EXPECT_TRUE(block_order_columns(a, v, BlockOrder::Coordinate).empty());
  EXPECT_TRUE(block_order_columns(a, v, BlockOrder::Input).empty()) << "e_1, e_2: the identity, stored empty";
}

TEST(BlockOrder, NamesParseAndPrint) {
  for (BlockOrder o : {BlockOrder::Coordinate, BlockOrder::Input, BlockOrder::Output, BlockOrder::Balanced})
    EXPECT_EQ(parse_block_order(to_string(o)), o);
  try {
    parse_block_order("sideways");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("expected coordinate, input, output or balanced"), std::string::npos) << e.what();
  }
}

TEST(BlockOrder, IsABijectionAndRejectsOthers) {
  EXPECT_TRUE(is_block_order({}, 5));
  EXPECT_TRUE(is_block_order({0b01, 0b11}, 2));
  EXPECT_FALSE(is_block_order({0b11, 0b11}, 2));   // dependent columns
  EXPECT_FALSE(is_block_order({0b01}, 2));         // too few
  EXPECT_FALSE(is_block_order({0b01, 0b100}, 2));  // outside the block bits
}

// The positions u_0 < u_1 < … whose unit vectors are new modulo `side` and the earlier ones.
std::vector<int> lowest_new_positions(Subspace side) {
  std::vector<int> u;
  for (int j = 0; j < side.n(); ++j)
    if (side.insert(BitVec{1} << j)) u.push_back(j);
  return u;
}

TEST(BlockOrder, InputAndOutputOrdersStepThroughTheLowestDirectionsOfTheirSide) {
  for (int seed = 0; seed < 30; ++seed) {
    const int n = 12 + seed % 9;  // 12..20
    for (const Bmmc& b : {random_bmmc(n, 700 + seed), random_bpc(n, 700 + seed), bit_reverse(n)})
      for (BlockOrder order : {BlockOrder::Input, BlockOrder::Output}) {
        const TilePass p = one_pass(b, 4, order);
        ASSERT_TRUE(is_block_order(p.block_order, static_cast<int>(p.block_positions.size())));
        const bool out = order == BlockOrder::Output;
        const Subspace side = out ? tile_space(p).image(b.matrix()) : tile_space(p);
        const std::vector<int> u = lowest_new_positions(side);
        ASSERT_EQ(u.size(), p.block_positions.size());
        for (size_t j = 0; j < u.size(); ++j) {
          const BitVec x = launch_direction(p, static_cast<int>(j));
          ASSERT_EQ(side.reduce(out ? b.matrix().apply(x) : x), side.reduce(BitVec{1} << u[j]))
              << to_string(order) << ": launch bit " << j << " moves by e_" << u[j] << " modulo the tile (n = " << n
              << ", seed " << seed << ")";
        }
      }
  }
}

TEST(BlockOrder, InputOrderOfARandomBmmcReadsTheNeighbouringRun) {
  // random-bmmc:1 at n = 30 with 8-byte lanes: runs of 2^6 elements, V' pivots 0..11, W = 12..29. The
  // coordinate order moves the reads by e_12; the input order by e_6, the run next door.
  const TilePass c = one_pass(random_bmmc(30, 1), 4, BlockOrder::Coordinate);
  ASSERT_EQ(c.block_positions.front(), 12);
  EXPECT_EQ(launch_direction(c, 0), BitVec{1} << 12);
  const TilePass in = one_pass(random_bmmc(30, 1), 4, BlockOrder::Input);
  EXPECT_EQ(tile_space(in).reduce(launch_direction(in, 0)), tile_space(in).reduce(BitVec{1} << 6));
}

TEST(BlockOrder, BalancedOrderTakesDirectionsByTheirLevelOnBothSides) {
  for (int seed = 0; seed < 30; ++seed) {
    const int n = 12 + seed % 9;
    const Bmmc b = random_bmmc(n, 900 + seed);
    const TilePass p = one_pass(b, 4, BlockOrder::Balanced);
    const Subspace v = tile_space(p), av = v.image(b.matrix());
    const BitMatrix ainv = b.matrix().inverse();
    // S_r = (V' + low(r)) ∩ A⁻¹(A·V' + low(r)); level(x) = the least r with x in S_r.
    std::vector<Subspace> s;
    for (int r = 0; r <= n; ++r) {
      const Subspace low = Subspace::low_bits(n, r);
      s.push_back(intersect(v + low, (av + low).image(ainv)));
    }
    int previous = 0;
    for (size_t j = 0; j < p.block_positions.size(); ++j) {
      const BitVec x = launch_direction(p, static_cast<int>(j));
      int level = 0;
      while (!s[level].contains(x)) ++level;
      ASSERT_GE(level, previous) << "launch bit " << j << " (n = " << n << ", seed " << seed << ")";
      previous = level;
      // Every direction of level ≤ r is among the launch bits taken so far: none was skipped.
      int at_most = 0;
      for (size_t i = 0; i < p.block_positions.size(); ++i)
        if (s[level].contains(launch_direction(p, static_cast<int>(i)))) ++at_most;
      ASSERT_EQ(at_most, s[level].dim() - v.dim());
    }
  }
}

TEST(BlockOrder, EveryOrderedPlanPassesTheChecker) {
  for (int seed = 0; seed < 12; ++seed) {
    const int n = 10 + seed % 5;
    for (BlockOrder order : {BlockOrder::Input, BlockOrder::Output, BlockOrder::Balanced})
      for (int eb : {1, 4, 8, 16}) {
        PlanOptions o;
        o.block_order = order;
        const Plan plan = make_plan(random_bmmc(n, 40 + seed), eb, o);
        const CheckReport r = check_plan(plan);
        ASSERT_TRUE(r.correct) << to_string(order) << ", eb " << eb << ": " << r.first_error;
        EXPECT_TRUE(r.coalesced);
        EXPECT_EQ(r.max_bank_conflict, 1);
      }
  }
}

TEST(BlockOrder, AnOrderOutsideTheEnumerationIsRefused) {
  const Plan plan = make_plan(random_bmmc(12, 3), 4);
  const auto& p = std::get<TilePass>(plan.passes[0]);
  try {
    block_order_columns(p.bmmc.matrix(), tile_space(p), static_cast<BlockOrder>(9));
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("block order: 9 names no launch order"), std::string::npos) << e.what();
  }
}

TEST(BlockOrder, TheCheckerRefusesALaunchOrderThatIsNotABijection) {
  Plan plan = make_plan(random_bmmc(16, 3), 4);
  ASSERT_GE(std::get<TilePass>(plan.passes[0]).block_positions.size(), 2u);
  auto& p = std::get<TilePass>(plan.passes[0]);
  p.block_order.assign(p.block_positions.size(), 1);
  const CheckReport r = check_plan(plan);
  EXPECT_FALSE(r.correct);
  EXPECT_NE(r.first_error.find("not a bijection"), std::string::npos) << r.first_error;
}

}  // namespace
}  // namespace bmmc
