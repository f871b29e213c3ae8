// The local passes of the pipelined exchange, one piece at a time (schedule.hpp, docs/DESIGN.md §9.4): which
// functionals name a pass's atom, and a launch order of its tile pass under which every atom is one contiguous
// range of launches. Pure functions of plain data; the NCCL engine runs what they return, tests/dist/ checks it
// block by block on the CPU.
//
// The pack runs the pre-pass x_l ↦ (u, t) over the launches of a piece's atoms; the atom of x_l is φ·x_l, the
// piece rows (the top piece_bits rows of S). The unpack runs a post-pass q = (u, j) ↦ y_l; the atom of q is u's top
// piece_bits bits. A tile pass moves cosets x0 ⊕ V'; when every atom functional vanishes on V' the atom is a
// function of the block index, and re-numbering the blocks so that it becomes the top launch bits makes atom a
// the launches [a·2^(B−q), (a+1)·2^(B−q)). Worked example: a pre-pass of m = 16 bits whose tiles are the
// cosets of span(e_0 … e_11) (block bits at positions 12 … 15) and one piece row φ = e_15 ⊕ e_12: the order keeps
// launch bits 0 … 2 on block bits 0 … 2 and maps launch bit 3 to block bit 3 (position 15) — φ of block
// M·launch is launch bit 3 — while position 12's block bit alone is in φ's kernel only together with bit 3.
#pragma once

#include <cstdint>
#include <vector>

#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc {

/// The atom of an element of the pack (pre-pass input x_l): the piece rows φ, q = plan.piece_bits functionals.
std::vector<BitVec> pack_atom_rows(const DistPlan& plan);
/// The atom of an element of the unpack (post-pass input q = (u, j)): e_(m−k−q) … e_(m−k−1).
std::vector<BitVec> unpack_atom_rows(const DistPlan& plan);

/// The atom (q bits, bit i = parity(rows[i] & x)) of index x.
BitVec atom_of(const std::vector<BitVec>& rows, BitVec x) noexcept;

/// Columns of a launch order M (TilePass::block_order) for `pass` under which block M·i has atom i >> (B − q):
/// the top q launch bits are the atom, the others follow the pass's own order (its block_order, or the identity)
/// as far as they can. Throws std::invalid_argument when a row does not vanish on the tile space (the atom would
/// change inside a tile) or the rows are not independent on the blocks.
std::vector<std::uint64_t> piece_launch_order(const TilePass& pass, const std::vector<BitVec>& rows);

/// The GPU policy of a piece pass's tiles (pack and unpack) from the caller's: one pass; rows beyond the forced
/// ones lengthen the reads only (longer write runs could straddle two atoms); and 1-byte elements keep 4-byte
/// lanes unless the caller names a width, because 8-byte lanes put L_8 + A⁻¹L_8 into the tile and an atom row
/// need not vanish on it (L_7 + A⁻¹L_7, the tile 1-byte pieces always had, is what the dist plans keep whole).
GpuPolicy piece_policy(GpuPolicy policy, int elem_bytes);

}  // namespace bmmc
