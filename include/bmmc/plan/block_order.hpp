// The launch order of a tile pass's blocks: which cosets run at the same time.
//
// A tile pass moves every coset x0 ⊕ V' once, whatever the order; but the blocks that run together (about a
// thousand on an H100: 132 SMs × 8 blocks) decide which DRAM pages are open together, and DRAM charges for
// that: BENCHMARKS.md "The copy limit". The block index is deposited at the coordinate complement W of V'
// (plan.hpp); the launch order M (TilePass::block_order) re-numbers the blocks — launch i runs block M·i — so
// that the low launch bits step through chosen directions modulo V':
//  - Coordinate (M = identity): the directions e_w, w ∈ W ascending. For random-bmmc:1 at n = 30 (8-byte lanes)
//    V' has its pivots at 0..11, so W = 12..29 and consecutive launches read runs 16 KiB apart;
//  - Input: the lowest unit directions e_j that are new modulo V' — there e_6, e_7, …: e_6 is not in V' (only
//    e_6 plus high bits is), so consecutive launches read the 256-byte runs next to each other's;
//  - Output: the same on the output side (A⁻¹e_j for the lowest e_j new modulo A·V');
//  - Balanced: in order of the least r with the direction inside (V' + span(e_0..e_(r−1))) ∩
//    A⁻¹(A·V' + span(e_0..e_(r−1))): as low as both sides can be together.
// Worked example (Output): n = 3, V' = span(e_0), A = the cyclic shift e_0→e_1→e_2→e_0, W = {1, 2}.
// A·V' = span(e_1), so the lowest new output directions are e_0 and e_2, whose preimages are e_2 (block bit 1)
// and e_1 (block bit 0): M = [0b10, 0b01].
#pragma once

#include <cstdint>
#include <vector>

#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/subspace.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc {

/// The columns of M (plan.hpp's TilePass::block_order) for a tile pass of `a` with tile space V' =
/// `tile_space` and block positions W = tile_space.coordinate_complement(), for the orders above: empty for
/// Coordinate; for Input (Output) launch bit j moves the input (output) by e_(u_j) modulo V' (A·V'), u_0 < u_1 <
/// … the positions whose unit vector is new modulo the tile side and the earlier ones. Always invertible (each
/// column is new modulo the earlier ones); an identity M is returned empty. Pure function.
std::vector<std::uint64_t> block_order_columns(const BitMatrix& a, const Subspace& tile_space, BlockOrder order);

/// True when `columns` is empty or `bits` columns below 2^bits that are linearly independent (a bijection
/// of the block indices).
bool is_block_order(const std::vector<std::uint64_t>& columns, int bits);

}  // namespace bmmc
