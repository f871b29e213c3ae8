// PlanOptions in plan terms, and the two policies mapped onto them (GpuPolicy here; CpuPolicy in
// tests/cpu): what each knob does to the plan, and the errors for knobs out of range.
#include <gtest/gtest.h>

#include "bmmc/core/named.hpp"
#include "bmmc/core/spec.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "bmmc/plan/plan_check.hpp"
#include "dist/error_message.hpp"

namespace bmmc {
namespace {

const TilePass& tile(const Plan& p, std::size_t i = 0) { return std::get<TilePass>(p.passes.at(i)); }

TEST(PlanOptions, TileBitsAddRowsBeyondTheForcedOnes) {
  const Bmmc b = random_bpc(20, 3);
  PlanOptions o;
  o.vector_bits = 1;  // s = 6
  const Plan forced = make_plan(b, 4, o);  // tile_bits -1: only the q forced rows
  EXPECT_EQ(tile(forced).row_bits, tile(forced).q);
  for (int tile_bits : {6, 12, 14}) {
    o.tile_bits = tile_bits;
    const Plan plan = make_plan(b, 4, o);
    const TilePass& t = tile(plan);
    EXPECT_EQ(t.row_bits, std::max(t.q, tile_bits - 6)) << tile_bits;
    EXPECT_EQ(t.segment_bits() + t.row_bits + static_cast<int>(t.block_positions.size()), 20);
  }
}

// The rows beyond the forced ones lengthen the read runs, the write runs or both (alternately, write first); the
// plan stays correct, coalesced and conflict-free whichever side. Worked case from planner.hpp: random-bmmc:1 at
// n = 30, 8-byte lanes, 2^14 tiles: runs of 2^8 / 2^6 (read), 2^6 / 2^8 (write), 2^7 / 2^7 (both).
TEST(PlanOptions, LongerRunsOnEitherSide) {
  const Bmmc worked = random_bmmc(30, 1);
  PlanOptions o;
  o.vector_bits = 1;
  o.tile_bits = 14;
  const std::pair<RunSide, std::pair<int, int>> expected[] = {
      {RunSide::Read, {8, 6}}, {RunSide::Write, {6, 8}}, {RunSide::Both, {7, 7}}};
  for (const auto& [side, runs] : expected) {
    o.longer_runs = side;
    const Plan plan = make_plan(worked, 4, o);
    const TilePass& t = tile(plan);
    EXPECT_EQ(std::pair(read_run_bits(t), write_run_bits(t)), runs) << to_string(side);
    EXPECT_EQ(t.row_bits, 8);
  }
  for (int seed = 0; seed < 40; ++seed) {
    const int n = 12 + seed % 9;
    const Bmmc b = seed % 2 ? random_bmmc(n, 500 + seed) : random_bpc(n, 500 + seed);
    for (RunSide side : {RunSide::Read, RunSide::Write, RunSide::Both}) {
      o.longer_runs = side;
      o.tile_bits = 6 + (seed % 4) + (n > 16 ? 4 : 0);
      const Plan plan = make_plan(b, 4, o);
      const TilePass& t = tile(plan);
      const CheckReport r = check_plan(plan);
      EXPECT_TRUE(r.correct && r.coalesced && r.max_bank_conflict == 1) << to_string(side) << " seed " << seed << ": " << r.first_error;
      EXPECT_EQ(t.row_bits, std::min(std::max(t.q, o.tile_bits - 6), n - 6));
      // The extra rows go to the asked side first: it gets at least as long runs as the other choice gives it.
      RunSide other = side == RunSide::Write ? RunSide::Read : RunSide::Write;
      o.longer_runs = other;
      const Plan other_plan = make_plan(b, 4, o);
      const TilePass& u = tile(other_plan);
      if (side == RunSide::Write) EXPECT_GE(write_run_bits(t), write_run_bits(u)) << seed;
      if (side == RunSide::Read) EXPECT_GE(read_run_bits(t), read_run_bits(u)) << seed;
    }
  }
  EXPECT_EQ(parse_run_side("write"), RunSide::Write);
  EXPECT_THROW(parse_run_side("left"), std::invalid_argument);
}

TEST(PlanOptions, WarpBitsAndTheTileLimit) {
  const Bmmc b = random_bmmc(18, 2);
  PlanOptions o;
  o.tile_bits = 12;
  o.warp_bits = 2;
  const Plan p = make_plan(b, 4, o);
  EXPECT_EQ(tile(p).threads_per_block(), 128);
  EXPECT_TRUE(check_plan(p).correct);
  // A tight limit first drops the extra rows, then narrows the lane accesses, then refuses.
  const Plan forced = make_plan(b, 4, PlanOptions{Variant::OnePass, 1});
  o.max_tile_bytes = std::int64_t{4} << (6 + tile(forced).q);
  const Plan fitted_plan = make_plan(b, 4, o);
  const TilePass& fitted = tile(fitted_plan);
  EXPECT_LE(static_cast<std::int64_t>(fitted.shared_bytes()), o.max_tile_bytes);
  o.max_tile_bytes = 64;
  EXPECT_THROW(make_plan(b, 4, o), std::invalid_argument);
}

TEST(PlanOptions, OutOfRangeKnobsAreRefused) {
  const Bmmc b = random_bmmc(12, 1);
  EXPECT_THROW(make_plan(b, 4, PlanOptions{Variant::OnePass, 3}), std::invalid_argument);  // 32-byte lanes
  EXPECT_THROW(make_plan(b, 4, PlanOptions{Variant::OnePass, -2}), std::invalid_argument);
  EXPECT_THROW(make_plan(b, 4, PlanOptions{Variant::OnePass, -1, 41}), std::invalid_argument);
  EXPECT_THROW(make_plan(b, 4, PlanOptions{Variant::OnePass, -1, -1, 6}), std::invalid_argument);  // 64 warps
  EXPECT_THROW(make_plan(b, 4, PlanOptions{Variant::OnePass, -1, -1, -1, {}, 0}), std::invalid_argument);
  EXPECT_THROW(make_plan(identity(4), 4, PlanOptions{Variant::OnePass}), std::invalid_argument);  // n < 5
  // Enumerations filled from integers (a binding, a configuration file): refused by value, not defaulted.
  PlanOptions o;
  o.variant = static_cast<Variant>(7);
  EXPECT_NE(test::error_message([&] { make_plan(b, 4, o); }).find("variant holds 7, which names no variant"),
            std::string::npos);
  o = {};
  o.block_order = static_cast<BlockOrder>(4);
  EXPECT_NE(test::error_message([&] { make_plan(b, 4, o); }).find("block_order holds 4"), std::string::npos);
  o = {};
  o.longer_runs = static_cast<RunSide>(-1);
  EXPECT_NE(test::error_message([&] { make_plan(b, 4, o); }).find("longer_runs holds -1"), std::string::npos);
}

TEST(PlanOptions, ResolveVariant) {
  EXPECT_EQ(resolve_variant(Variant::Auto, 4), Variant::Naive);
  EXPECT_EQ(resolve_variant(Variant::Auto, 5), Variant::OnePass);
  EXPECT_EQ(resolve_variant(Variant::TwoPass, 3), Variant::TwoPass);
}

TEST(GpuPolicy, MapsLaunchTermsOntoPlanTerms) {
  const DeviceCaps caps = default_caps();
  const PlanOptions one = gpu_plan_options(GpuPolicy{}, 20, caps);
  EXPECT_EQ(one.tile_bits, 8 + 4);  // 256 threads x 16 elements
  EXPECT_EQ(one.warp_bits, 3);
  EXPECT_EQ(one.max_tile_bytes, std::min<std::int64_t>(caps.max_shared_per_block, caps.max_shared_per_sm / 2));
  const PlanOptions tiled = gpu_plan_options(GpuPolicy{Variant::Tiled, 0, 1024}, 20, caps);
  EXPECT_EQ(tiled.tile_bits, 10);  // one element per thread
  EXPECT_EQ(tiled.warp_bits, -1);  // one warp per row
  EXPECT_EQ(gpu_plan_options(GpuPolicy{Variant::TwoPass}, 20, caps).tile_bits, 8 + 2);
  EXPECT_EQ(one.block_order, BlockOrder::Coordinate);  // make_plan(…, GpuPolicy) applies the element-size default
  EXPECT_EQ(default_gpu_block_order(4), BlockOrder::Input);
  EXPECT_EQ(default_gpu_block_order(1), BlockOrder::Coordinate);
  EXPECT_EQ(one.longer_runs, RunSide::Read);
  GpuPolicy writes;
  writes.longer_runs = RunSide::Write;
  EXPECT_EQ(gpu_plan_options(writes, 20, caps).longer_runs, RunSide::Write);
  GpuPolicy ordered;
  ordered.block_order = BlockOrder::Balanced;
  EXPECT_EQ(gpu_plan_options(ordered, 20, caps).block_order, BlockOrder::Balanced);
  EXPECT_THROW(gpu_plan_options(GpuPolicy{Variant::Auto, 0, 48}, 20, caps), std::invalid_argument);
  EXPECT_THROW(gpu_plan_options(GpuPolicy{Variant::Auto, 0, 2048}, 20, caps), std::invalid_argument);
  EXPECT_THROW(gpu_plan_options(GpuPolicy{Variant::Auto, 3}, 20, caps), std::invalid_argument);
  DeviceCaps small = caps;
  small.max_threads_per_block = 512;
  EXPECT_THROW(gpu_plan_options(GpuPolicy{Variant::Auto, 0, 1024}, 20, small), std::invalid_argument);
}


TEST(GpuPolicy, KeepsLowBits) {
  EXPECT_TRUE(keeps_low_bits(identity(20), 20));
  EXPECT_FALSE(keeps_low_bits(identity(6), 7));
  // A 2^3 x 2^7 x 2^10 int32 array with its first two axes swapped moves whole rows of 2^10 elements.
  const Bmmc rows = parse_spec("axes:8x128x1024:1,0,2");
  EXPECT_TRUE(keeps_low_bits(rows, 10));
  EXPECT_FALSE(keeps_low_bits(rows, 11));
  // A permutation inside the low bits still keeps them (as a set).
  EXPECT_TRUE(keeps_low_bits(parse_spec("bit-reverse", 7) , 7));
  EXPECT_FALSE(keeps_low_bits(bit_reverse(20), 1));
}

TEST(Planner, ForcedTileSpace) {
  // L_s + A⁻¹L_s: s dimensions for maps that keep the low s bits, 2s for bit-reverse and (almost surely) a random
  // map, and always inside every one-pass tile the planner builds.
  EXPECT_EQ(forced_tile_space(identity(24), 8).dim(), 8);
  EXPECT_EQ(forced_tile_space(bit_reverse(24), 8).dim(), 16);
  EXPECT_EQ(forced_tile_space(random_bmmc(30, 1), 8).dim(), 16);
  for (int seed = 0; seed < 8; ++seed) {
    const Bmmc b = random_bmmc(20, seed);
    const TilePass t = std::get<TilePass>(make_plan(b, 4).passes.at(0));
    const Subspace forced = forced_tile_space(b, t.segment_bits());
    EXPECT_TRUE(forced + tile_space(t) == tile_space(t)) << seed;
    EXPECT_EQ(forced.dim() - t.segment_bits(), t.q) << seed;
  }
}

TEST(GpuPolicy, DefaultGeometry) {
  const DeviceCaps caps = default_caps();
  // Whole runs of >= 128 int32 (512 bytes): 16-byte lanes, one vector per thread, 4 KiB tiles that read one
  // contiguous piece (rows 0x80, 0x100, 0x200) and, since the map keeps 10 bits, write one too.
  const Bmmc rows = parse_spec("axes:8x128x1024:1,0,2");
  const GpuPolicy g = default_gpu_geometry(rows, 4, GpuPolicy{});
  EXPECT_EQ(g.vector_bits, 2);
  EXPECT_EQ(g.elems_per_thread, 4);
  const Plan p = make_plan(rows, 4, caps);
  const TilePass& t = tile(p);
  EXPECT_EQ(t.vector_bits, 2);
  EXPECT_EQ(t.elems_per_thread(), 4);
  EXPECT_EQ(t.q, 0);
  EXPECT_EQ(t.read_rows, (std::vector<BitVec>{0x80, 0x100, 0x200}));
  EXPECT_EQ(t.write_rows, t.read_rows);
  EXPECT_TRUE(check_plan(p).correct);
  // int64: the same for whole runs of 64 elements; random BMMCs keep the planner's default (8-byte lanes).
  EXPECT_EQ(default_gpu_geometry(rows, 8, GpuPolicy{}).elems_per_thread, 2);
  for (int eb : {4, 8}) {
    EXPECT_EQ(default_gpu_geometry(random_bmmc(24, 1), eb, GpuPolicy{}), GpuPolicy{});
    EXPECT_EQ(tile(make_plan(random_bmmc(24, 1), eb, caps)).vector_bytes(), 8);
  }
  // 1-byte elements: 1024 threads, so a packed 2^16 tile of a random map is 64 elements a thread (not 256).
  EXPECT_EQ(default_gpu_geometry(random_bmmc(24, 1), 1, GpuPolicy{}).threads_per_block, 1024);
  const Plan bytes = make_plan(random_bmmc(26, 1), 1, caps);
  EXPECT_TRUE(tile(bytes).packed_bytes);
  EXPECT_EQ(tile(bytes).vector_bytes(), 8);
  EXPECT_EQ(tile(bytes).threads_per_block(), 1024);
  EXPECT_EQ(tile(bytes).elems_per_thread(), 64);
  GpuPolicy named;
  named.threads_per_block = 256;
  EXPECT_EQ(default_gpu_geometry(random_bmmc(24, 1), 1, named), named);
  // Small 1-byte arrays: where 2^(n − 16) blocks are less than two per SM, 4-byte lanes (tiles of at most 2^14).
  // n = 24 on 132 SMs: 256 blocks of 2^16, so 4-byte lanes; n = 25: 512 blocks, the packed 8-byte default.
  EXPECT_EQ(default_gpu_geometry(random_bmmc(24, 1), 1, GpuPolicy{}, 132).vector_bits, 2);
  EXPECT_EQ(default_gpu_geometry(random_bmmc(25, 1), 1, GpuPolicy{}, 132).vector_bits, -1);
  EXPECT_EQ(default_gpu_geometry(random_bmmc(24, 1), 1, GpuPolicy{}).vector_bits, -1);  // SMs unknown
  // Lanes set to the default 8 bytes (an 8-byte-aligned view through the front door) keep the 1-byte thread
  // count, not 256 threads with 256 elements each; other widths set by the caller keep the policy as it is.
  GpuPolicy eight;
  eight.vector_bits = 3;
  EXPECT_EQ(default_gpu_geometry(random_bmmc(24, 1), 1, eight, 132).threads_per_block, 1024);
  EXPECT_EQ(default_gpu_geometry(random_bmmc(24, 1), 1, eight, 132).vector_bits, 3);
  GpuPolicy sixteen;  // 16-byte lanes named for 1-byte elements: the planner narrows them, the threads still follow
  sixteen.vector_bits = 4;
  EXPECT_EQ(default_gpu_geometry(random_bmmc(24, 1), 1, sixteen, 132).threads_per_block, 1024);
  GpuPolicy four;
  four.vector_bits = 2;
  EXPECT_EQ(default_gpu_geometry(random_bmmc(24, 1), 1, four, 132), four);
  GpuPolicy push;  // the multi-GPU push pass sizes its runs for the default lanes: off there
  push.small_byte_lanes = false;
  EXPECT_EQ(default_gpu_geometry(random_bmmc(22, 1), 1, push, 132).vector_bits, -1);
  // A map whose 8-byte lanes' tile is at most 2^14 would not gain blocks: unchanged (here L_8 + A⁻¹L_8 = L_8 + e_19).
  const Bmmc narrow_tile = parse_spec("bits:0,1,2,3,4,5,6,7,19,9,10,11,12,13,14,15,16,17,18,8");
  EXPECT_EQ(default_gpu_geometry(narrow_tile, 1, GpuPolicy{}, 132), GpuPolicy{});
  // The 2^14 boundary of the 1-byte rules: six low output bits from high input bits give L_8 + A⁻¹L_8 of
  // dimension exactly 14 (no change, even with few blocks per SM); seven give 15, so threads for 2^6 elements each.
  const Bmmc tile14 = parse_spec("bits:8,9,10,11,12,13,6,7,0,1,2,3,4,5,14,15,16,17,18,19");
  ASSERT_EQ(forced_tile_space(tile14, 8).dim(), 14);
  EXPECT_EQ(default_gpu_geometry(tile14, 1, GpuPolicy{}, 132), GpuPolicy{});
  const Bmmc tile15 = parse_spec("bits:8,9,10,11,12,13,14,7,0,1,2,3,4,5,6,15,16,17,18,19");
  ASSERT_EQ(forced_tile_space(tile15, 8).dim(), 15);
  EXPECT_EQ(default_gpu_geometry(tile15, 1, GpuPolicy{}).threads_per_block, 512);
  EXPECT_EQ(default_gpu_geometry(tile15, 1, GpuPolicy{}).vector_bits, -1);
  DeviceCaps h100 = caps;
  h100.sm_count = 132;
  for (const Bmmc& small : {random_bmmc(22, 3), bit_reverse(22), parse_spec("axes:16x256x1024:2,0,1")}) {
    const Plan sp = make_plan(small, 1, h100);
    EXPECT_EQ(tile(sp).vector_bytes(), 4);
    EXPECT_TRUE(tile(sp).packed_bytes);
    EXPECT_GE(tile(sp).blocks(), 256u);
    EXPECT_TRUE(check_plan(sp).correct);
  }
  // Bit-reverse's L_8 + A⁻¹L_8 has 16 dimensions, as a random map's: 1024 threads. A map that keeps the low 8
  // bits but moves bit 8 (so not the 16-byte-lane branch above) has a tile of 8 and keeps 256 threads.
  EXPECT_EQ(default_gpu_geometry(bit_reverse(24), 1, GpuPolicy{}).threads_per_block, 1024);
  EXPECT_EQ(default_gpu_geometry(parse_spec("bits:0,1,2,3,4,5,6,7,19,9,10,11,12,13,14,15,16,17,18,8"), 1, GpuPolicy{}),
            GpuPolicy{});
  // Too small for a 4 KiB tile of 256 threads, a set lane width, other variants: unchanged.
  EXPECT_EQ(default_gpu_geometry(identity(14), 4, GpuPolicy{}), GpuPolicy{});
  GpuPolicy set;
  set.vector_bits = 1;
  EXPECT_EQ(default_gpu_geometry(rows, 4, set), set);
  EXPECT_EQ(default_gpu_geometry(rows, 8, GpuPolicy{Variant::TwoPass}), GpuPolicy{Variant::TwoPass});
  GpuPolicy ept;
  ept.elems_per_thread = 8;
  EXPECT_EQ(default_gpu_geometry(rows, 4, ept), ept);
}

// Small arrays: fewer elements per thread until every SM has a block (the 2 MiB int64 axis permutation of the
// PyTorch sweep: 64 blocks of 2^12 → 256 of 2^10 on 132 SMs); large arrays, set knobs, other variants unchanged.
TEST(GpuPolicy, FillTheDevice) {
  const DeviceCaps caps = default_caps();  // 132 SMs
  EXPECT_EQ(fill_the_device(GpuPolicy{}, 18, caps).elems_per_thread, 4);
  EXPECT_EQ(fill_the_device(GpuPolicy{}, 19, caps).elems_per_thread, 8);
  EXPECT_EQ(fill_the_device(GpuPolicy{}, 20, caps), GpuPolicy{});  // 256 blocks already
  EXPECT_EQ(fill_the_device(GpuPolicy{}, 14, caps).elems_per_thread, 1);  // 64 blocks of 2^8: as far as it goes
  GpuPolicy small_device;
  DeviceCaps few = caps;
  few.sm_count = 16;
  EXPECT_EQ(fill_the_device(small_device, 18, few), GpuPolicy{});  // 64 blocks fill 16 SMs
  GpuPolicy set;
  set.elems_per_thread = 16;
  EXPECT_EQ(fill_the_device(set, 18, caps), set);
  EXPECT_EQ(fill_the_device(GpuPolicy{Variant::TwoPass}, 18, caps), GpuPolicy{Variant::TwoPass});
  const Bmmc axes = parse_spec("axes:2x16x4x1024x2:0,4,2,1,3");
  const Plan p = make_plan(axes, 8, caps);
  EXPECT_EQ(tile(p).blocks(), 256u);
  EXPECT_TRUE(check_plan(p).correct);
  EXPECT_TRUE(check_plan(p).coalesced);
}

}  // namespace
}  // namespace bmmc
