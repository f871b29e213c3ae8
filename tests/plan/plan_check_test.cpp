// The plan checker proves plans correct, coalesced and conflict-free; these tests run it over random
// BMMCs/BPCs and the named maps for every element size and variant, and show that it catches broken plans.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>
#include <variant>

#include "bmmc/core/named.hpp"
#include "bmmc/plan/plan_check.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {
namespace {

const int kElemBytes[] = {1, 2, 4, 8, 16};

CheckReport expect_good(const Plan& plan, bool coalesced, const std::string& what) {
  const CheckReport r = check_plan(plan);
  EXPECT_TRUE(r.correct) << what << ": " << r.first_error << "\n" << describe(plan);
  if (coalesced) {
    EXPECT_TRUE(r.coalesced) << what << "\n" << describe(plan);
    EXPECT_EQ(r.max_bank_conflict, 1) << what << "\n" << describe(plan);
  }
  EXPECT_GT(r.warp_accesses, 0u) << what;
  return r;
}

std::vector<std::pair<std::string, Bmmc>> named_maps(int n) {
  std::vector<std::pair<std::string, Bmmc>> v = {
      {"identity", identity(n)},       {"bit-reverse", bit_reverse(n)}, {"reverse", reverse(n)},
      {"rotate:1", rotate(n, 1)},      {"rotate:7", rotate(n, 7)},      {"transpose", transpose(n, n / 2)},
      {"gray", gray(n)},               {"gray-inverse", gray_inverse(n)}, {"parm:3", parm_matrix(n, 3)},
      {"parm:msb", parm_matrix(n, BitVec{1} << (n - 1))}};
  return v;
}

// default_caps() without an SM count: the arrays here (n ≤ 19) are small enough that on 132 SMs 1-byte elements
// would get 4-byte lanes to fill the device (default_gpu_geometry); without a count they get the packed 8-byte
// lanes a large array gets, so these tests check both widths' plans.
DeviceCaps sm_count_unknown() {
  DeviceCaps c = default_caps();
  c.sm_count = 0;
  return c;
}

// The default plan (variant auto) of a random BMMC is one tile pass; the checker must have executed every
// element of it: read once and written once in whole-warp accesses of 2^s elements, so 2·2^n / 2^s of them.
// The random maps must also reach every lane width the planner uses (k = 0..3) and both kinds of tile: rows
// all forced by the permutation (m = q) and extra rows the planner adds (m > q); a planner change that
// stopped producing one of them would leave it unchecked here, so that fails too.
TEST(PlanCheck, OnePassRandomBmmcsEveryElementSize) {
  std::map<int, int> plans_with_vector_bits;  // k -> plans checked
  int forced_rows_only = 0, extra_rows = 0;
  for (int seed = 0; seed < 120; ++seed) {
    const int n = 5 + seed % 12;  // 5..16
    const Bmmc b = random_bmmc(n, 1000 + seed);
    for (int eb : kElemBytes) {
      const std::string what = fmt::format("random_bmmc({}, {}) eb {}", n, 1000 + seed, eb);
      const Plan plan = make_plan(b, eb, (seed / 12) % 2 ? sm_count_unknown() : default_caps());
      const CheckReport r = expect_good(plan, true, what);
      ASSERT_EQ(plan.variant, Variant::OnePass) << what;
      ASSERT_EQ(plan.passes.size(), 1u) << what;
      const auto* tp = std::get_if<TilePass>(&plan.passes[0]);
      ASSERT_NE(tp, nullptr) << what;
      EXPECT_EQ(r.warp_accesses, std::uint64_t{2} << (n - tp->segment_bits())) << what;
      ++plans_with_vector_bits[tp->vector_bits];
      ++(tp->row_bits == tp->q ? forced_rows_only : extra_rows);
    }
  }
  for (int k = 0; k <= 3; ++k) EXPECT_GT(plans_with_vector_bits[k], 0) << "no plan with 2^" << k << "-element lanes";
  EXPECT_GT(forced_rows_only, 0) << "no plan whose rows are all forced by the permutation";
  EXPECT_GT(extra_rows, 0) << "no plan with extra rows";
}

TEST(PlanCheck, OnePassRandomBpcsEveryElementSize) {
  for (int seed = 0; seed < 100; ++seed) {
    const int n = 5 + seed % 14;  // 5..18
    const Bmmc b = random_bpc(n, 77 + seed);
    for (int eb : kElemBytes)
      expect_good(make_plan(b, eb, default_caps()), true, fmt::format("random_bpc({}, {}) eb {}", n, 77 + seed, eb));
  }
}

TEST(PlanCheck, OnePassVectorWidthsAndIters) {
  for (int seed = 0; seed < 40; ++seed) {
    const int n = 9 + seed % 8;
    const Bmmc b = random_bmmc(n, 5000 + seed);
    for (int eb : kElemBytes)
      for (int k = 0; (eb << k) <= 16; ++k)
        for (int ept : {1, 4, 32}) {
          GpuPolicy o;
          o.vector_bits = k;
          o.elems_per_thread = ept;
          o.threads_per_block = seed % 2 ? 128 : 512;
          expect_good(make_plan(b, eb, default_caps(), o), true,
                      fmt::format("seed {} n {} eb {} k {} ept {}", seed, n, eb, k, ept));
        }
  }
}

TEST(PlanCheck, NamedMapsAllVariants) {
  for (int n : {5, 6, 10, 15, 19}) {
    for (auto& [name, b] : named_maps(n)) {
      for (int eb : kElemBytes) {
        for (Variant v : {Variant::Naive, Variant::OnePass, Variant::TwoPass, Variant::Tiled, Variant::TiledBanks,
                          Variant::TiledBanksIters}) {
          const bool tiled_only = v == Variant::Tiled || v == Variant::TiledBanks || v == Variant::TiledBanksIters;
          if (tiled_only && !b.is_tiled(kLaneBits)) {
            EXPECT_THROW(make_plan(b, eb, default_caps(), {v}), std::invalid_argument) << name;
            continue;
          }
          const Plan plan = make_plan(b, eb, default_caps(), {v});
          const bool must_be_clean = v != Variant::Naive && v != Variant::Tiled;
          expect_good(plan, must_be_clean, fmt::format("{} n {} eb {} variant {}", name, n, eb, to_string(v)));
        }
      }
    }
  }
}

TEST(PlanCheck, TwoPassOverRandomBmmcs) {
  for (int seed = 0; seed < 60; ++seed) {
    const int n = 5 + seed % 12;
    const Plan plan = make_plan(random_bmmc(n, 300 + seed), 4, default_caps(), {Variant::TwoPass});
    ASSERT_EQ(plan.passes.size(), 2u);
    expect_good(plan, true, fmt::format("two-pass seed {}", seed));
  }
}

// 1-byte elements on a GPU are packed four to a shared word (TilePass::packed_bytes), which is what lets them
// have 8-byte lanes (256-byte runs) within a block's shared memory: every such plan must still be correct,
// coalesced and conflict-free, hold one byte per element, and differ from the unpacked plan only by π.
TEST(PlanCheck, OnePassPackedBytes) {
  for (int seed = 0; seed < 24; ++seed) {
    const int n = 8 + seed % 12;  // 8..19
    const Bmmc b = seed % 3 ? random_bmmc(n, 2000 + seed) : random_bpc(n, 2000 + seed);
    const std::string what = fmt::format("seed {} n {}", seed, n);
    const Plan plan = make_plan(b, 1, sm_count_unknown());
    expect_good(plan, true, what);
    const TilePass& tp = std::get<TilePass>(plan.passes.at(0));
    EXPECT_TRUE(tp.packed_bytes) << what;
    EXPECT_GE(tp.vector_bits, 3) << what;  // 8-byte lanes at least: 256-byte runs
    EXPECT_EQ(tp.shared_bytes(), std::uint64_t{1} << (tp.segment_bits() + tp.row_bits)) << what;
    // The same options with one element per word: the same pass but for π and four times the bytes.
    PlanOptions o = gpu_plan_options({}, n, default_caps());
    o.max_tile_bytes = std::int64_t{1} << 30;
    const TilePass packed = std::get<TilePass>(make_plan(b, 1, o).passes.at(0));
    o.pack_bytes = false;
    const TilePass unpacked = std::get<TilePass>(make_plan(b, 1, o).passes.at(0));
    ASSERT_TRUE(packed.packed_bytes && !unpacked.packed_bytes) << what;
    EXPECT_EQ(packed_bytes(unpacked), packed) << what;
    EXPECT_EQ(unpacked.shared_bytes(), 4 * packed.shared_bytes()) << what;
  }
  // The worked example of planner.hpp, and what packed_bytes refuses.
  TilePass one = std::get<TilePass>(make_plan(bit_reverse(12), 1, PlanOptions{}).passes.at(0));
  ASSERT_FALSE(one.packed_bytes);
  one.store_row_cols.assign(1, 0b1100101);
  EXPECT_EQ(packed_bytes(one).store_row_cols[0], 0b0010111u);
  EXPECT_THROW(packed_bytes(packed_bytes(one)), std::invalid_argument);
  EXPECT_THROW(packed_bytes(std::get<TilePass>(make_plan(bit_reverse(12), 4).passes.at(0))), std::invalid_argument);
  // A hand-made pass that packs what packing does not define is refused by the checker and the code generator.
  Plan bad_plan = make_plan(bit_reverse(12), 4);
  std::get<TilePass>(bad_plan.passes.at(0)).packed_bytes = true;
  const CheckReport bad = check_plan(bad_plan);
  EXPECT_FALSE(bad.correct);
  EXPECT_NE(bad.first_error.find("packing needs 1-byte elements"), std::string::npos) << bad.first_error;
  PlanOptions narrow;
  narrow.vector_bits = 1;
  EXPECT_THROW(packed_bytes(std::get<TilePass>(make_plan(bit_reverse(12), 1, narrow).passes.at(0))), std::invalid_argument);
}

TEST(PlanCheck, LargeNOnePass) {
  expect_good(make_plan(random_bmmc(24, 1), 4, default_caps()), true, "random_bmmc(24, 1)");
  expect_good(make_plan(bit_reverse(22), 8, default_caps()), true, "bit_reverse(22) eb 8");
}

TEST(PlanCheck, TiledWithoutSwizzleHasBankConflicts) {
  // The paper's plain "tile" reads tile columns in phase 2: a 32-way conflict for a transpose.
  const Plan plan = make_plan(transpose(10, 5), 4, default_caps(), {Variant::Tiled});
  const CheckReport r = check_plan(plan);
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(r.max_bank_conflict, 32);
  EXPECT_EQ(check_plan(make_plan(transpose(10, 5), 4, default_caps(), {Variant::TiledBanks})).max_bank_conflict, 1);
}

TEST(PlanCheck, NaiveScattersWrites) {
  const CheckReport r = check_plan(make_plan(bit_reverse(12), 4, default_caps(), {Variant::Naive}));
  EXPECT_TRUE(r.correct);
  EXPECT_FALSE(r.coalesced);
}

TEST(PlanCheck, SmallNFallsBackToNaive) {
  for (int n = 0; n < 5; ++n) {
    const Plan plan = make_plan(random_bmmc(n, 3), 4, default_caps());
    EXPECT_EQ(plan.variant, Variant::Naive);
    EXPECT_TRUE(check_plan(plan).correct);
  }
}

TEST(PlanCheck, CatchesABrokenPlan) {
  Plan plan = make_plan(random_bmmc(10, 9), 4, default_caps());
  auto& tile = std::get<TilePass>(plan.passes[0]);
  Plan bad_rows = plan;
  std::get<TilePass>(bad_rows.passes[0]).write_rows[0] ^= BitVec{1} << 9;
  EXPECT_FALSE(check_plan(bad_rows).correct);
  Plan bad_shared = plan;
  std::get<TilePass>(bad_shared.passes[0]).load_lane_cols[3] ^= 1;
  EXPECT_FALSE(check_plan(bad_shared).correct);
  Plan bad_swizzle = plan;
  auto& t = std::get<TilePass>(bad_swizzle.passes[0]);
  // Collapse the swizzle on a row bit: phase-1 rows still distinct, but the plan is now wrong or conflicted.
  t.store_row_cols[0] ^= 1;
  const CheckReport r = check_plan(bad_swizzle);
  EXPECT_FALSE(r.correct && r.max_bank_conflict == 1);
  EXPECT_GT(tile.row_bits, 0);
}

TEST(Planner, IsDeterministicAndPrintable) {
  const Bmmc b = random_bmmc(20, 42);
  const Plan p1 = make_plan(b, 4, default_caps()), p2 = make_plan(b, 4, default_caps());
  EXPECT_EQ(p1, p2);
  const std::string d = describe(p1);
  EXPECT_NE(d.find("one-pass"), std::string::npos) << d;
  EXPECT_NE(d.find("shared"), std::string::npos) << d;
}

TEST(Planner, RejectsBadOptions) {
  const Bmmc b = random_bmmc(10, 1);
  EXPECT_THROW(make_plan(b, 3, default_caps()), std::invalid_argument);
  EXPECT_THROW(make_plan(b, 4, default_caps(), {Variant::OnePass, 3}), std::invalid_argument);
  EXPECT_THROW(make_plan(b, 4, default_caps(), {Variant::OnePass, 0, 48}), std::invalid_argument);
  EXPECT_THROW(make_plan(b, 8, default_caps(), {Variant::OnePass, 0, 0, 2}), std::invalid_argument);
  EXPECT_THROW(parse_variant("fast"), std::invalid_argument);
  EXPECT_EQ(parse_variant("tiled-banks-iters"), Variant::TiledBanksIters);
}

TEST(Planner, OnePassOfRandomBmmcHasQEqualToSegmentBits) {
  // A random s-dim A⁻¹L meets L trivially: the tile needs all s extra rows, and one pass still suffices.
  const Plan p = make_plan(random_bmmc(30, 7), 4, default_caps());
  const auto& t = std::get<TilePass>(p.passes[0]);
  EXPECT_EQ(t.q, t.segment_bits());
  EXPECT_EQ(p.passes.size(), 1u);
  EXPECT_EQ(t.blocks() * t.plane_words(), std::uint64_t{1} << 30);
}

}  // namespace
}  // namespace bmmc
