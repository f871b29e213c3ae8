// The planner: a pure function (Bmmc, elem_bytes, DeviceCaps, PlanOptions) → Plan.
//
// It resolves the variant (auto = one-pass, or naive for arrays of fewer than 32 elements), then builds
// the passes: one TilePass for one-pass and the paper's tiled variants (which additionally require the
// BMMC to be tiled for 32-element tiles, else std::invalid_argument), two TilePasses for two-pass (the
// paper's split A = (U·R)(R·L·P), through a temporary buffer), or one NaivePass. How a TilePass is built
// is DESIGN.md §4: V = L + A⁻¹L, extra coordinate directions up to the requested elements per thread,
// a coordinate complement for the block index, and an XOR swizzle f chosen so that phase 2 hits 32
// distinct banks. Example: bit-reverse with n = 15, 4-byte elements plans a tile of 32 rows of 32
// elements (q = 5), 256 threads with 4 rows each, and 2^5 blocks.
#pragma once

#include <optional>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/plan/device_caps.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc {

struct PlanOptions {
  Variant variant = Variant::Auto;
  int elems_per_thread = 0;   ///< 0: the variant's default (one-pass 16, tiled-banks-iters 4, tiled 1)
  int threads_per_block = 0;  ///< 0: the variant's default (256); a power of two from 32 to 1024
  int vector_bits = -1;       ///< -1: default (8-byte lane accesses); else 2^k elements per lane access
  std::optional<bool> swizzle;  ///< default: on, except for the paper's plain "tiled" variant
};

/// Throws std::invalid_argument for an unsupported element size, bad options, or a tiled variant asked
/// for a BMMC that is not tiled.
Plan make_plan(const Bmmc& bmmc, int elem_bytes, const DeviceCaps& caps, const PlanOptions& options = {});

}  // namespace bmmc
