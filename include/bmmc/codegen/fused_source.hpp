// Code generation for the fused leaf pass (docs/DESIGN.md §10): ONE kernel that runs a run of consecutive
// compare-swap columns of a combinator program in one pass over memory, in place (or from a second array, and
// then optionally through a folded permutation: FusedTileSpec::out_cols).
//
// The pass is described in plain index terms (FusedTileSpec: the tile space V' and, per column, the pair
// direction, the row that gives a key's logical bit 0, and the bit that says which member of a pair is the
// "first" one), so this layer needs nothing from the combinators; cuda/program_gpu.hpp builds the spec from a
// combinators FusedLeafPass. Block b owns the coset x0(b) ⊕ K of the array, where K ⊇ V' is the kernel's
// tile: V' widened to tile_bits dimensions (more for short runs: run_bits) with the lowest unit vectors it lacks,
// when n allows (x0(b) = XOR of the plan's block vectors: K's non-pivot positions plus tile vectors chosen for the
// orientations, fused_plan.hpp). A key of the coset has tile coordinates i (x = x0 ⊕ K·i for a basis of K that starts
// with the vectors e_0 … e_(c−1) K contains: every coset is whole aligned runs of 2^c keys). A warp's load or store puts tile coordinates
// 0 … 4 on its 32 lanes: 2^c consecutive keys per run (c = 3: 32-byte sectors of 4-byte keys, all bytes used),
// 2^(5−c) runs per access. The block applies every column in order and writes the coset back to the same
// positions (of the second array out of place; at A·x ⊕ out_xor with a folded permutation).
//
// Two kernels (FusedKernelKind):
//  - Shared: the tile lives in shared memory; per column every thread compare-swaps 2^(T−1)/threads pairs,
//    then __syncthreads(). Simple; also the kernel for tiles too small for Registers (T < reg_bits + 5).
//  - Registers (default): every thread keeps 2^R keys (R = reg_bits) in registers. A *layout* says which tile
//    coordinate i a thread θ holds in register slot r: i = U·θ ⊕ W·r (F2-linear, FusedLayout). The columns are
//    cut greedily into *windows* whose pair directions span at most R dimensions; window w uses a layout whose
//    W contains them, so each of its columns pairs slots r and r ⊕ ρ of ONE thread and runs on registers. Between
//    windows the tile goes through shared memory once (every key stored by the old layout, __syncthreads(),
//    loaded by the new one) at index S·i, S the round trip's bank swizzle (shared_swizzle: the identity where
//    both layouts' lanes have low coordinates e_0 … e_4), so the 32 lanes of any access hit 32 distinct banks
//    (16 distinct 8-byte slots per half-warp for 8-byte keys).
//  - Pipelined: Registers with persistent blocks (block g works on tiles g, g + gridDim.x, ...) and a second
//    tile of shared memory: while a block works on one tile, the next one is copied there with cp.async (no
//    registers held), so a block's loads overlap its own compare-swaps; the first window reads the copy. Where
//    two tiles do not fit (227 KiB), Registers runs instead.
//
// Pair semantics (both kernels, exactly those of the CPU executor, execute_cpu.cpp): the pair {x, x ⊕ dir};
// the member whose logical bit 0 (parity(row & x) ⊕ c0) is 0 takes the min (the max when descending); with
// a = the member whose bit `first_bit` is 0 and b the other, the comparison is "b < a" alone, so a pair that
// does not compare (NaN, −0.0 vs 0.0) ends as (a, b) when a should take the min and swapped otherwise.
#pragma once

#include <string>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/codegen/fused_plan.hpp"

namespace bmmc {

/// The CUDA source of `bmmc_fused(fkey_t* data)` (out_of_place: `bmmc_fused(const fkey_t* src, fkey_t* data)`,
/// reading each tile from src and writing it at the same positions of data, or at A·x ⊕ out_xor with a folded
/// permutation, which needs out_of_place) for keys of C type `key_type` ("int", "unsigned int", "float",
/// "long long", "unsigned long long" or "double"; std::invalid_argument otherwise). grid/block/shared_bytes
/// give the launch; the source opens with a comment naming the pass and the geometry.
KernelSource generate_fused(const FusedTileSpec& spec, const std::string& key_type,
                            const FusedCodegenOptions& options = {});

}  // namespace bmmc
