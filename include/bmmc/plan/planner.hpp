// The planner: a pure function (Bmmc, elem_bytes, PlanOptions) → Plan, with PlanOptions in plan terms.
//
// It resolves the variant (auto = one-pass, or naive for arrays of fewer than 32 elements), then builds
// the passes: one TilePass for one-pass and the paper's tiled variants (which additionally require the
// BMMC to be tiled for 32-element tiles, else std::invalid_argument), two TilePasses for two-pass (the
// paper's split A = (U·R)(R·L·P), through a temporary buffer), or one NaivePass. How a TilePass is built
// is docs/DESIGN.md §4: V = L + A⁻¹L, extra coordinate directions up to the requested tile size, a
// coordinate complement for the block index, and an XOR swizzle f chosen so that phase 2 hits 32
// distinct banks. Example: bit-reverse with n = 15, 4-byte elements, vector_bits 1, tile_bits 12 plans a
// tile of 2^6 rows of 2^6 elements (q = 6), 8 warps with 8 rows each, and 2^3 blocks.
//
// PlanOptions speak only of the plan (vector bits, tile bits, warp bits, swizzle, a tile size limit). What a
// backend wants is a policy mapped onto them: GpuPolicy (threads per block, elements per thread, the device's
// shared memory; plan/gpu_policy.hpp) and CpuPolicy (a cache-sized tile; cpu/executor.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/subspace.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc {

struct PlanOptions {
  Variant variant = Variant::Auto;
  /// k: a lane access moves 2^k consecutive elements; -1 = the default for the element size (8-byte
  /// accesses). Clamped to n − 5, then narrowed while the tile does not fit max_tile_bytes.
  int vector_bits = -1;
  /// log2 of the elements a tile (one block's coset) should hold; the tile gets max(q, tile_bits − s) rows
  /// (s = k + 5). -1 = one row per warp's worth of the forced rows only (row_bits = q).
  int tile_bits = -1;
  /// log2 of the warps per block; -1 = one warp per tile row, up to 32 warps. Never more than the rows.
  int warp_bits = -1;
  /// XOR swizzle of the tile; default: on, except for the paper's plain "tiled" variant.
  std::optional<bool> swizzle;
  /// The tile (shared memory on a GPU) may not exceed this; rows beyond q are dropped first, then the lane
  /// accesses narrowed. A NaivePass launches 2^warp_bits warps per block (capped at the array).
  std::int64_t max_tile_bytes = std::numeric_limits<std::int64_t>::max();
  /// The launch order of the blocks (block_order.hpp): which cosets run together. Input = the paper's.
  BlockOrder block_order = BlockOrder::Coordinate;
  /// Which side the rows beyond q lengthen (plan.hpp's RunSide): Read = e_s, e_(s+1), … (longer read runs),
  /// Write = A⁻¹e_s, … (longer write runs), Both = alternately. A direction already in V' is skipped (either
  /// side alone can always complete V': the e_j and the A⁻¹e_j each span the whole space).
  RunSide longer_runs = RunSide::Read;
  /// One-pass tiles of 1-byte elements hold four elements per shared 32-bit word (TilePass::packed_bytes) when
  /// their lanes move at least 4 elements; set by gpu_plan_options (the JIT kernels, the checker and the CPU
  /// tables read the packed layout; the precompiled generic kernel, whose lanes move one element, never gets it).
  bool pack_bytes = false;

  friend bool operator==(const PlanOptions&, const PlanOptions&) = default;
};

/// The variant make_plan runs for `requested` on n index bits: Auto becomes naive below 32 elements
/// (n < kLaneBits) and one-pass otherwise; every other variant is returned as is.
Variant resolve_variant(Variant requested, int n) noexcept;

/// Throws std::invalid_argument when options.variant, block_order or longer_runs holds a value outside its
/// enumeration (an integer cast by a binding or a configuration file); make_plan and the in-place planner call it.
void check_plan_options(const PlanOptions& options);

/// Throws std::invalid_argument for an unsupported element size, bad options, or a tiled variant asked
/// for a BMMC that is not tiled.
Plan make_plan(const Bmmc& bmmc, int elem_bytes, const PlanOptions& options = {});

/// The lane width make_plan picks when PlanOptions::vector_bits is -1: 8-byte lane accesses (k = log2(8 / eb),
/// 0 for elements of 8 bytes or more).
int default_vector_bits(int elem_bytes);

/// V = L_s + A⁻¹L_s, the space a one-pass tile must contain for runs of 2^s elements on both sides (its
/// dimension minus s is q, the rows the permutation forces). Example: a random A on n = 30 bits, s = 8: 2^16.
Subspace forced_tile_space(const Bmmc& bmmc, int s);

/// The coset-tile pass of docs/DESIGN.md §4 steps 2–5 on a given tile space V' (which must contain the
/// low k + 5 directions and A⁻¹ of them): block positions, rows, swizzle. `q` is recorded as given (the
/// rows the permutation forces). make_plan builds V' = L + A⁻¹L plus coordinate directions; the in-place
/// planner (inplace_plan.hpp) builds an A-invariant V' and calls this.
/// V' of a tile pass: span(e_0 … e_(s−1), read rows R).
Subspace tile_space(const TilePass& p);

/// log2 of the contiguous runs a block reads (the largest r with e_0 … e_(r−1) in V') and writes (the same for
/// A·V'). Example: random-bmmc:1 at n = 30, int32, 8-byte lanes, 2^12 tiles: 6 and 6 (runs of 256 bytes); with
/// 2^14 tiles and RunSide::Write: 6 and 8.
int read_run_bits(const TilePass& p);
int write_run_bits(const TilePass& p);

TilePass make_tile_pass_on(const Bmmc& bmmc, int elem_bytes, int vector_bits, const Subspace& tile_space, int q,
                           int warp_bits, bool swizzle);

/// The same pass with its 1-byte elements packed four to a shared word (TilePass::packed_bytes): every shared
/// address column gets the bit permutation π that moves word-layout bits 5, 6 (element bits 0, 1) to 0, 1 and
/// bits 0 … 4 (the bank) to 2 … 6, leaving the rest. π keeps each access's banks, so the checker's proofs carry
/// over. Example: the word 0b1100101 (bank 5, element 3, row bits 0) becomes the byte 0b0010111 (word 5, byte 3).
/// Throws std::invalid_argument unless elem_bytes is 1, the lanes move at least 4 elements and it is unpacked.
TilePass packed_bytes(const TilePass& pass);

}  // namespace bmmc
