// The digit planner, checked by executing its formulas (check_digit_plan) on random maps of random shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "plan/digit_map_support.hpp"
#include "bmmc/plan/digit_plan.hpp"
#include "bmmc/plan/digit_plan_check.hpp"

namespace bmmc {
namespace {

void expect_ok(const DigitPlan& p) {
  const DigitPlanReport r = check_digit_plan(p);
  ASSERT_TRUE(r.ok) << r.error << "\n" << to_string(p);
  EXPECT_EQ(r.writes, p.elements());
}

TEST(DigitPlan, RandomMapsEveryElementSizeAreExact) {
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 6, 40, 1 << 14, 3);
    for (int eb : {1, 2, 3, 4, 8, 12, 16}) {
      SCOPED_TRACE(m.to_string() + " on " + shape_to_string(m.shape()) + " elem " + std::to_string(eb));
      expect_ok(plan_digits(m, eb));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 300 * 7);
}

TEST(DigitPlan, SmallTilesLeaveEdgesOnEverySide) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 5, 97, 1 << 15, 3);
    DigitPolicy pol;
    pol.run_bytes = 4 << (trial % 5);
    pol.tile_bytes = 64 << (trial % 4);
    pol.max_tile_bytes = 256 << (trial % 3);
    pol.threads_per_block = 32 << (trial % 3);
    SCOPED_TRACE(m.to_string() + " on " + shape_to_string(m.shape()));
    expect_ok(plan_digits(m, 4, pol));
  }
}

TEST(DigitPlan, HighRankExtentThreeReversal) {
  // (3,)^12 reversed: the canonical form keeps 12 axes of extent 3 (a flip of every axis fuses them into one).
  const DigitMap m = DigitMap::transpose(std::vector<Extent>(12, 3), {});
  const DigitPlan p = plan_digits(m, 4);
  expect_ok(p);
  const auto r = check_digit_plan(p);
  // Runs of at least 256 bytes on both sides (3^4 = 81 four-byte elements).
  EXPECT_GE(r.read_run * 4, 256);
  EXPECT_GE(r.write_run * 4, 256);
}

TEST(DigitPlan, TilesOfManySmallWholeAxesShrinkToFit) {
  // Eight extent-3 axes on each side want 3^16 elements; the tile must shrink whole small axes to fit.
  const DigitPlan p = plan_digits(DigitMap::transpose(std::vector<Extent>(16, 3), {}), 16);
  EXPECT_LE(p.smem_bytes(), std::size_t{32 * 1024});
  const DigitPlan q = plan_digits(DigitMap(std::vector<Extent>{3, 3, 3, 3, 3, 3, 3, 3}, {7, 6, 5, 4, 3, 2, 1, 0},
                                           {0, 1, 0, 0, 0, 0, 0, 1}),
                                  16);
  expect_ok(q);
}

TEST(DigitPlan, RunsAndBanksAsPlannedOnATranspose) {
  // Scalar lanes (no covering vectors): conflict-free both ways by the pad.
  DigitPolicy scalar;
  scalar.cover = -1;
  const DigitPlan p = plan_digits(DigitMap::transpose({997, 1009}, {1, 0}), 4, scalar);
  const auto r = check_digit_plan(p);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GE(r.read_run, 64);
  EXPECT_GE(r.write_run, 64);
  EXPECT_EQ(r.read_conflicts, 1) << to_string(p);
  EXPECT_EQ(r.write_conflicts, 1) << to_string(p);
  // Covering vectors of 4 int32 move their elements to and from shared memory one by one, 4 cols apart in every
  // lane: the ways the bank model counts for that (2 each way, where scalar lanes had none).
  DigitPolicy both;
  both.cover = 1;
  const DigitPlan c = plan_digits(DigitMap::transpose({997, 1009}, {1, 0}), 4, both);
  ASSERT_TRUE(c.read_cover && c.write_cover) << to_string(c);
  const auto rc = check_digit_plan(c);
  ASSERT_TRUE(rc.ok) << rc.error;
  EXPECT_EQ(rc.read_run, r.read_run);
  EXPECT_EQ(rc.write_run, r.write_run);
  EXPECT_EQ(rc.read_conflicts, 2) << to_string(c);
  EXPECT_EQ(rc.write_conflicts, 2) << to_string(c);
}

TEST(DigitPlan, PreservedInnerAxisFoldsIntoTheElement) {
  // fp16 (16, 2047, 32, 128) → (0, 2, 1, 3): the inner 128 halves stay together: 16-byte elements.
  const DigitPlan p = plan_digits(DigitMap::transpose({16, 2047, 32, 128}, {0, 2, 1, 3}), 2);
  EXPECT_EQ(p.elem_bytes, 16);
  EXPECT_EQ(p.caller_elem_bytes, 2);
  DigitPolicy narrow;
  narrow.max_elem_bytes = 4;
  EXPECT_EQ(plan_digits(DigitMap::transpose({16, 20, 32, 128}, {0, 2, 1, 3}), 2, narrow).elem_bytes, 4);
  expect_ok(plan_digits(DigitMap::transpose({3, 20, 5, 6}, {0, 2, 1, 3}), 2));
  // A cap that is not a power of two folds to the power of two below it (3 → 2 bytes), never to 3 bytes.
  narrow.max_elem_bytes = 3;
  EXPECT_EQ(plan_digits(DigitMap::transpose({5, 7, 6}, {1, 0, 2}), 1, narrow).elem_bytes, 2);
}

TEST(DigitPlan, LanesMoveVectorsWhereRunsAllowThem) {
  // uint8 (100, 720·1280, 3) → (0, 2, 1): 16-byte lanes on both sides (runs of 3·chunk bytes in, chunk bytes out).
  const DigitPlan p = plan_digits(DigitMap::transpose({100, 720 * 1280, 3}, {0, 2, 1}), 1);
  EXPECT_EQ(p.read_vector, 16) << to_string(p);
  EXPECT_EQ(p.write_vector, 16) << to_string(p);
  expect_ok(plan_digits(DigitMap::transpose({10, 72 * 128, 3}, {0, 2, 1}), 1));
  // Prime extents leave no vector that divides a run: reads take covering vectors of 16 bytes, writes stay scalar
  // unless cover 1 asks for covering writes too; the scalar policy turns them off, and so does cover −1.
  const DigitPlan q = plan_digits(DigitMap::transpose({997, 1009}, {1, 0}), 2);
  EXPECT_EQ(q.read_vector, 8) << to_string(q);
  EXPECT_TRUE(q.read_cover) << to_string(q);
  EXPECT_EQ(q.write_vector, 1) << to_string(q);
  EXPECT_FALSE(q.write_cover) << to_string(q);
  expect_ok(q);
  DigitPolicy both;
  both.cover = 1;
  const DigitPlan q0 = plan_digits(DigitMap::transpose({997, 1009}, {1, 0}), 2, both);
  EXPECT_TRUE(q0.read_cover && q0.write_cover) << to_string(q0);
  EXPECT_EQ(q0.write_vector, 8) << to_string(q0);
  expect_ok(q0);
  DigitPolicy no_cover;
  no_cover.cover = -1;
  const DigitPlan q1 = plan_digits(DigitMap::transpose({997, 1009}, {1, 0}), 2, no_cover);
  EXPECT_EQ(q1.read_vector, 1);
  EXPECT_EQ(q1.write_vector, 1);
  EXPECT_FALSE(q1.read_cover || q1.write_cover);
  DigitPolicy scalar;
  scalar.max_vector_elems = 1;
  EXPECT_EQ(plan_digits(DigitMap::transpose({100, 720 * 1280, 3}, {0, 2, 1}), 1, scalar).read_vector, 1);
  const DigitPlan q2 = plan_digits(DigitMap::transpose({997, 1009}, {1, 0}), 2, scalar);
  EXPECT_FALSE(q2.read_cover || q2.write_cover);
  // Covering where the rows are at least four vectors long (plan/tuning.hpp): rows of 3 int32 are not, and where
  // aligned vectors divide the run no plan covers; writes never across a roll's wrap. Every covering plan checks
  // out (small shapes).
  EXPECT_FALSE(plan_digits(DigitMap::transpose({3, 1 << 20}, {1, 0}), 4).read_cover);
  EXPECT_FALSE(plan_digits(DigitMap::transpose({1000, 1024}, {1, 0}), 4).read_cover);
  EXPECT_FALSE(plan_digits(DigitMap::transpose({1024, 1000}, {1, 0}), 4, both).write_cover);
  for (const DigitMap& m : {DigitMap::transpose({97, 101, 67}, {2, 1, 0}),
                            DigitMap::transpose({3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}),
                            DigitMap::roll({819, 821}, {100, 814})})
    for (int eb : {1, 2, 4, 8}) {
      const DigitPlan c = plan_digits(m, eb);
      EXPECT_TRUE(c.read_cover) << to_string(c);
      EXPECT_FALSE(c.write_cover) << to_string(c);
      EXPECT_EQ(c.read_vector * c.elem_bytes, 16) << to_string(c);
      EXPECT_EQ(c.read_skew_step, 0) << to_string(c);
      expect_ok(c);
      const DigitPlan w = plan_digits(m, eb, both);  // covering writes too, never across the roll's wrap
      EXPECT_EQ(w.write_cover, m.rolls()[1] == 0) << to_string(w);
      if (w.write_cover) EXPECT_EQ(w.write_vector * w.elem_bytes, 16) << to_string(w);
      expect_ok(w);
    }
  // Offset pointers: vectors never exceed the access the alignment allows.
  DigitPolicy aligned4;
  aligned4.max_access_bytes = 4;
  const DigitPlan a = plan_digits(DigitMap::transpose({100, 720 * 1280, 3}, {0, 2, 1}), 1, aligned4);
  EXPECT_EQ(a.read_vector, 4) << to_string(a);
  EXPECT_EQ(a.write_vector, 4) << to_string(a);
  // A roll on the innermost output axis breaks output runs at its wrap: no write vectors; reads keep theirs.
  const DigitPlan r = plan_digits(DigitMap::roll({512, 512}, {0, 7}), 4);
  EXPECT_EQ(r.write_vector, 1) << to_string(r);
  EXPECT_EQ(r.read_vector, 4) << to_string(r);
  expect_ok(r);
}

TEST(DigitPlan, TheCheckerRefusesCoveringVectorsTheKernelCannotRun) {
  // Covering writes on a rolled write run: the kernel's covering writes do not wrap (whether or not the wrap falls
  // inside a tile's row).
  for (Extent shift : {5, 64}) {
    DigitPlan rolled = plan_digits(DigitMap::roll({64, 128}, {0, shift}), 4);
    ASSERT_TRUE(check_digit_plan(rolled).ok);
    rolled.write_cover = true, rolled.write_vector = 4;
    const auto r = check_digit_plan(rolled);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("on a write run with a roll"), std::string::npos) << r.error;
  }
  // Vectors the kernel has no access for: 3 elements, or 32 bytes.
  DigitPlan odd = plan_digits(DigitMap::transpose({97, 101}, {1, 0}), 4);
  ASSERT_TRUE(odd.read_cover) << to_string(odd);
  odd.read_vector = 3;
  EXPECT_NE(check_digit_plan(odd).error.find("covering read vectors of 3 elements"), std::string::npos);
  odd.read_vector = 8;
  EXPECT_NE(check_digit_plan(odd).error.find("at most 16 bytes"), std::string::npos);
}

TEST(DigitPlan, OddElementSizesBecomeBytes) {
  const DigitPlan p = plan_digits(DigitMap::transpose({5, 7}, {1, 0}), 3);
  EXPECT_EQ(p.elem_bytes, 1);
  expect_ok(p);
}

TEST(DigitPlan, RefusesATileLimitBelowOneElement) {
  DigitPolicy tiny;
  tiny.max_tile_bytes = 8;
  EXPECT_THROW(plan_digits(DigitMap::flip({5}, {0}), 16, tiny), std::invalid_argument);
  EXPECT_NO_THROW(plan_digits(DigitMap::flip({5}, {0}), 8, tiny));
  EXPECT_NO_THROW(plan_digits(DigitMap(), 8, tiny));  // rank 0: one element
}

TEST(DigitPlan, RefusesBadElementSizes) {
  EXPECT_THROW(plan_digits(DigitMap::identity({4}), 0), std::invalid_argument);
  EXPECT_THROW(plan_digits(DigitMap::identity({4}), (1 << 20) + 1), std::invalid_argument);
  EXPECT_THROW(plan_digits(DigitMap::identity({Extent{1} << 40, Extent{1} << 20}), 16), std::invalid_argument);
}

TEST(DigitPlan, PrintsItself) {
  const DigitPlan p = plan_digits(DigitMap(std::vector<Extent>{1000, 1003, 257}, {2, 0, 1}, {1, 0, 0}), 2);
  const std::string s = to_string(p), j = to_json(p);
  EXPECT_NE(s.find("1000x1003x257"), std::string::npos) << s;
  EXPECT_NE(j.find("\"kind\":\"digit\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"tiles\":"), std::string::npos) << j;
}

}  // namespace
}  // namespace bmmc
