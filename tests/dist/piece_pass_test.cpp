// The pipelined exchange's local passes (piece_pass.hpp) on the CPU: under piece_launch_order, every launch of
// the GPU plan's pack (pre-pass) and unpack (post-pass) tile passes moves elements of exactly the atom its top
// launch bits name — the property the NCCL engine relies on when it launches one piece's atoms at a time.
#include "bmmc/dist/piece_pass.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/core/subspace.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/plan/block_order.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {
namespace {

TilePass gpu_tile_pass(const Bmmc& b, int eb) {
  GpuPolicy policy;
  policy.variant = Variant::OnePass;
  const Plan p = make_plan(b, eb, DeviceCaps{}, policy);
  EXPECT_EQ(p.passes.size(), 1u);
  return std::get<TilePass>(p.passes.at(0));
}

// Every launch's block: its origin's atom is the launch's top bits, and the atom rows vanish on the tile, so
// every element of the block is in that atom; the launch order is a bijection of the blocks.
void check_atoms_are_launch_ranges(TilePass pass, const std::vector<BitVec>& rows, const std::string& what) {
  pass.block_order = piece_launch_order(pass, rows);
  const int b = static_cast<int>(pass.block_positions.size()), q = static_cast<int>(rows.size());
  ASSERT_TRUE(is_block_order(pass.block_order, b)) << what;
  const Subspace tiles = tile_space(pass);  // kept: a range-for over a temporary's basis() would dangle
  for (BitVec v : tiles.basis()) ASSERT_EQ(atom_of(rows, v), 0u) << what << ": a tile straddles atoms";
  for (std::uint64_t launch = 0; launch < pass.blocks(); ++launch) {
    const BlockOrigin o = block_origin(pass, launched_block(pass, launch));
    ASSERT_EQ(atom_of(rows, o.x0), launch >> (b - q)) << what << ": launch " << launch;
  }
}

TEST(PiecePass, EveryAtomIsOneRangeOfLaunches) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    for (int g : {1, 2, 3})
      for (int eb : {4, 8}) {
        // m = 26: big enough for the widest piece rows; the GPUs run m = 30..33.
        const Bmmc global = seed % 2 ? random_bmmc(26 + g, seed) : random_bpc(26 + g, seed);
        const DistPlan plan = make_dist_plan(global, g, eb);
        ASSERT_EQ(plan.piece_bits, kPieceBits);
        const std::string what = global.to_string() + ", " + std::to_string(eb) + "-byte elements";
        check_atoms_are_launch_ranges(gpu_tile_pass(plan.pre, eb), pack_atom_rows(plan), "pack of " + what);
        for (BitVec d = 0; d < plan.ranks(); ++d)
          check_atoms_are_launch_ranges(gpu_tile_pass(post_for_rank(plan, d), eb), unpack_atom_rows(plan),
                                        "unpack of " + what);
      }
}

// The atoms of the pack and the unpack agree: an element in atom a of its sender's pre-pass input lands at offsets
// of atom a in its chunk (the top piece_bits of u are φ·x_l), which is atom a of the receiver's post-pass input.
TEST(PiecePass, PackAndUnpackAtomsAgree) {
  const DistPlan plan = make_dist_plan(random_bmmc(14, 5), 2, 4);
  const std::vector<BitVec> pack = pack_atom_rows(plan), unpack = unpack_atom_rows(plan);
  ASSERT_EQ(pack.size(), static_cast<std::size_t>(plan.piece_bits));
  for (BitVec x = 0; x < plan.local_elems(); ++x) {
    const BitVec p = plan.pre.apply(x);  // (u, t)
    ASSERT_EQ(atom_of(pack, x), atom_of(unpack, p & low_mask(plan.chunk_bits()))) << x;
  }
}

TEST(PiecePass, ARowAlongTheTileIsRefused) {
  const TilePass pass = gpu_tile_pass(random_bmmc(20, 3), 4);
  EXPECT_THROW(piece_launch_order(pass, {BitVec{1}}), std::invalid_argument);  // bit 0 is inside every tile
}

}  // namespace
}  // namespace bmmc
