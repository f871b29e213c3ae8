// Code generation for the kernels that reach into other ranks' memory: the push pass of a PushPlan (bmmc/dist/push_plan.hpp, docs/DESIGN.md §9.5): the one-pass
// tile kernel of F with its input restricted to one rank and its output spread over every rank's buffer.
//
// The tile pass of F (plan.hpp) reads cosets x0 ⊕ V' and writes whole warp rows of 2^s output elements. When V'
// lies in the local bits (m of them), the rank bits of x are block bits — the top g block bits, since the block
// index is deposited at the free positions in ascending order — so rank r runs exactly blocks
// [r·2^(B−g), (r+1)·2^(B−g)) over its own input, and every warp row, 2^s ≤ 2^m consecutive output elements,
// lands on one destination rank. The kernel is `bmmc_push(const vec_t* in, const bmmc_targets out,
// block_base)`: `in` is the rank's own buffer, `out.p[d]` rank d's destination (a peer pointer), block_base =
// r·2^(B−g); the targets travel as a __grid_constant__ parameter, so selecting one costs a constant-bank load.
// Example: a random BMMC of 2^31 int32 over 2 ranks: check_push_pass accepts its tile pass whenever the plan's
// F keeps output runs of 2^s on one rank, which make_push_plan guarantees for its line bits L ≥ s.
#pragma once

#include "bmmc/codegen/cuda_source.hpp"

namespace bmmc {

/// Throws std::invalid_argument unless `pass` can run as a push over 2^(n − local_bits) ranks: its tile space
/// (the low s bits and the read rows) lies in the local bits and the block positions end with the rank bits
/// m … n−1 in order (then the rank's blocks are one contiguous range).
void check_push_pass(const TilePass& pass, int local_bits);

/// The in-place kernel across ranks of a RankSwapPlan's direct map f' (bmmc/dist/rank_swap_plan.hpp,
/// docs/DESIGN.md §9.6): `bmmc_rank_swap(const bmmc_targets data, rank_base)`. Rank r's threads walk its vectors
/// x (rank_base = r·2^(m−k)); when it owns the pair (rank_swap_owns with `owner_bit`) the thread loads vector x
/// and vector f'(x), wherever their ranks are, and stores each at the other's place, so every pair is swapped
/// once. `grid` is the blocks of one rank.
KernelSource generate_rank_swap(const Bmmc& direct, int local_bits, int elem_bytes, int vector_bits, int owner_bit);

/// The push kernel of `pass` (checked with check_push_pass). `grid` is the blocks of ONE rank.
KernelSource generate_push(const TilePass& pass, int local_bits, const CodegenOptions& options = {});

}  // namespace bmmc
