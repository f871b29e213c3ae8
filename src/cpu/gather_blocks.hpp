// Internal to the CPU backend: the gather block loops of a tile pass — the executor's first loop, kept where
// the register transposes (transpose_blocks.hpp) do not apply or measured slower (loop_choice.hpp), and as the
// `one-pass-gather` comparison of `bmmc bench --backend cpu`.
//
// Per block (a coset of the tile space), phase 1 copies the 2^m input runs x0 ⊕ R·ρ into the tile rows;
// phase 2 writes each output run y0 ⊕ U·σ by gathering its 2^s elements from the tile through the
// tables' index vectors (nsig, ntau) — one scalar load per element, or one vpgather per 8 (4) elements on
// CPUs with AVX2 — while prefetching the next block's input row σ into L2. Output runs of at least a cache
// line may be written with non-temporal stores (arrays that cannot stay in any cache). Example: a random
// BMMC of 2^26 int32 with the default 2^15-element tile: 2^11 blocks of 2^10 runs of 32 elements.
#pragma once

#include <cstdint>

#include "tile_tables.hpp"

namespace bmmc::cpu_detail {

/// An element of B bytes, copied as a whole.
template <int B>
struct Elem {
  unsigned char b[B];
};

/// A block loop: blocks [begin, end) of a tile pass with tables t, through `tile` (scratch of the pass's
/// tile size, 64-byte aligned).
using BlockKernel = void (*)(const TileTables& t, const unsigned char* in, unsigned char* out, std::uint64_t begin,
                             std::uint64_t end, unsigned char* tile);

/// The gather loop for runs of `run_bytes` (32 elements up to 512 bytes) of `elem_bytes`-byte elements, with
/// non-temporal stores when `stream` (and the CPU and run length allow them). Throws std::invalid_argument
/// for an element size or run length the loops do not cover.
BlockKernel gather_block_kernel(int elem_bytes, int run_bytes, bool stream);

}  // namespace bmmc::cpu_detail
