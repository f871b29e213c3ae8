// Code generation for the fused leaf pass (docs/DESIGN.md §10): ONE kernel that runs a run of consecutive
// compare-swap columns of a combinator program in one pass over memory, in place.
//
// The pass is described in plain index terms (FusedTileSpec: the tile space V' and, per column, the pair
// direction, the row that gives a key's logical bit 0, and the bit that says which member of a pair is the
// "first" one), so this layer needs nothing from the combinators; cuda/program_gpu.hpp builds the spec from a
// combinators FusedLeafPass. Block b owns the coset x0(b) ⊕ K of the array, where K ⊇ V' is the kernel's
// tile: V' widened to tile_bits dimensions with the lowest unit vectors it lacks, when n allows (x0 at K's
// non-pivot positions). A key of the coset has tile coordinates i (x = x0 ⊕ K·i for a basis of K that starts
// with the vectors e_0 … e_(c−1) K contains: every coset is whole aligned runs of 2^c keys). A warp's load or store puts tile coordinates
// 0 … 4 on its 32 lanes: 2^c consecutive keys per run (c = 3: 32-byte sectors of 4-byte keys, all bytes used),
// 2^(5−c) runs per access. The block applies every column in order and writes the coset back in place.
//
// Two kernels (FusedKernelKind):
//  - Shared: the tile lives in shared memory; per column every thread compare-swaps 2^(T−1)/threads pairs,
//    then __syncthreads(). Simple; also the kernel for tiles too small for Registers (T < reg_bits + 5).
//  - Registers (default): every thread keeps 2^R keys (R = reg_bits) in registers. A *layout* says which tile
//    coordinate i a thread θ holds in register slot r: i = U·θ ⊕ W·r (F2-linear, FusedLayout). The columns are
//    cut greedily into *windows* whose pair directions span at most R dimensions; window w uses a layout whose
//    W contains them, so each of its columns pairs slots r and r ⊕ ρ of ONE thread and runs on registers. Between
//    windows the tile goes through shared memory once (every key stored by the old layout, __syncthreads(),
//    loaded by the new one). Shared memory is indexed by the tile coordinate itself, and every layout's lane
//    vectors u_0 … u_4 have low five coordinates e_0 … e_4, so the 32 lanes of any access hit 32 distinct
//    banks (16 distinct 8-byte slots per half-warp for 8-byte keys): no swizzle is needed.
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

#include <cstddef>
#include <string>
#include <vector>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/core/bit_matrix.hpp"

namespace bmmc {

/// One compare-swap column, in global index terms (see the header comment).
struct FusedColumn {
  BitVec dir = 0;
  BitVec row = 0;
  int c0 = 0;
  bool descending = false;
  int first_bit = 0;
  friend bool operator==(const FusedColumn&, const FusedColumn&) = default;
};

/// A fused pass on 2^n keys: the tile space V' (any basis; its span must contain the directions) and the
/// columns in execution order.
struct FusedTileSpec {
  int n = 0;
  std::vector<BitVec> tile;
  std::vector<FusedColumn> columns;
  friend bool operator==(const FusedTileSpec&, const FusedTileSpec&) = default;
};

enum class FusedKernelKind { Shared, Registers, Pipelined };
const char* to_string(FusedKernelKind k) noexcept;

struct FusedCodegenOptions {
  int tile_bits = 13;  ///< the kernel's tile has min(n, max(tile_bits, dim(V' + lines))) dimensions
  int reg_bits = 5;    ///< Registers: 2^reg_bits keys per thread (1..6; raised to T − 10 so a block has ≤ 1024 threads)
  FusedKernelKind kind = FusedKernelKind::Registers;
  int key_bytes = 4;   ///< Pipelined: two tiles of 2^T keys of this size must fit a block's shared memory
  /// The kernel reads its tiles from a second array (bmmc_fused(src, data)) and writes them at the same
  /// positions of data: a program with an odd number of permutation passes ends in its own buffer with no copy.
  bool out_of_place = false;
  friend bool operator==(const FusedCodegenOptions&, const FusedCodegenOptions&) = default;
};

/// A register layout in tile coordinates: tile coordinate i = ⊕ θ_m·threads[m] ⊕ ⊕ r_k·regs[k] for thread θ
/// and register slot r. threads[0..4] are the lane vectors (their low five coordinates are e_0 … e_4).
struct FusedLayout {
  std::vector<BitVec> threads;
  std::vector<BitVec> regs;
  friend bool operator==(const FusedLayout&, const FusedLayout&) = default;
};

/// Columns [first, last) run on registers in `layout`.
struct FusedWindow {
  std::size_t first = 0, last = 0;
  FusedLayout layout;
  friend bool operator==(const FusedWindow&, const FusedWindow&) = default;
};

/// Everything the kernel computes, as data (what the tests check and the generator prints).
struct FusedKernelPlan {
  int n = 0;
  int tile_dim = 0;            ///< T: 2^T keys per block
  FusedKernelKind kind = FusedKernelKind::Shared;
  int reg_bits = 0;            ///< R (Registers)
  /// A basis of K (global vectors): the runs e_0 … e_(c−1) first, then the other lane coordinates, then (when
  /// possible) a basis of the first and last windows' directions, so those windows load and store directly.
  std::vector<BitVec> tile;
  std::vector<int> outside;    ///< block index bit k → global bit outside[k] (the non-pivot positions)
  std::vector<BitVec> deltas;  ///< per column: its direction in tile coordinates
  FusedLayout load, store;     ///< Registers: the layouts of the global load and store (lanes = coordinates 0 … 4)
  std::vector<FusedWindow> windows;  ///< Registers: in order, covering every column
  /// Registers: 2^(T − R); Shared: min(2^(T−1), 256).
  int threads_per_block() const noexcept;
  std::uint64_t blocks() const noexcept { return std::uint64_t{1} << (n - tile_dim); }
  /// Shared-memory round trips (store all keys, load all keys) one block makes.
  int transitions() const noexcept;
};

/// Throws std::invalid_argument unless the spec is a pass this generator runs: 0 ≤ n ≤ 40, the tile vectors
/// inside n bits, every direction non-zero and inside span(tile), first_bit below n with the two members of
/// each pair differing there, at least one column.
void check_fused_tile(const FusedTileSpec& spec);

/// The kernel's plan: the tile K, the windows and their layouts (greedy: a window grows while its directions
/// span at most R dimensions). R = max(reg_bits, T − 10) (at most 1024 threads); Registers falls back to Shared
/// when T < R + 5 or R > 6.
FusedKernelPlan plan_fused_kernel(const FusedTileSpec& spec, const FusedCodegenOptions& options = {});

/// Registers a thread of a fused kernel is given: 4 per 32-bit word of the keys it holds (2^R keys; the keys,
/// their partners and masks, as ncu measured 128 for 32 int32 keys), at least 64. Shared: 64.
unsigned fused_registers_per_thread(const FusedKernelPlan& plan, int key_bytes);
/// Blocks per SM that `registers` a thread (of the 64 K an SM has) and an H100 SM's 228 KiB of shared memory
/// allow (1..8): the kernels' __launch_bounds__ minimum, and the persistent grid of Pipelined kernels (times the
/// SM count). Worked example: a 2^13 tile of int32, 32 keys a thread, two tiles of shared memory: 256 threads,
/// 64 KiB — 3 blocks by shared memory, but 2 by 128 registers a thread (asking for 3 left the compiler 85 registers
/// for 32 keys, and the pass ran 32% slower on an H100).
std::uint64_t fused_blocks_per_sm(unsigned threads, std::uint64_t shared_bytes, unsigned registers = 64);

/// The CUDA source of `bmmc_fused(fkey_t* data)` (out_of_place: `bmmc_fused(const fkey_t* src, fkey_t* data)`,
/// reading each tile from src and writing it at the same positions of data) for keys of C type `key_type` ("int", "unsigned int", "float",
/// "long long", "unsigned long long" or "double"; std::invalid_argument otherwise). grid/block/shared_bytes
/// give the launch; the source opens with a comment naming the pass and the geometry.
KernelSource generate_fused(const FusedTileSpec& spec, const std::string& key_type,
                            const FusedCodegenOptions& options = {});

}  // namespace bmmc
