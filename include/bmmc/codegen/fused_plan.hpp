// The plan of a fused compare-swap pass (docs/DESIGN.md §10): which keys a block owns, which a thread holds in
// which register, and where the keys go through shared memory. It is pure data computed from a FusedTileSpec
// (plain index terms: the tile space V' and, per column, the pair direction, the row that gives a key's logical
// bit 0 and the bit that says which member of a pair is the "first" one), so it needs nothing from the
// combinators and nothing from CUDA; fused_source.hpp prints it as a kernel, and the tests check its proofs
// (every pair inside one thread's registers, lanes on 32 banks, layouts invertible) on the CPU.
//
// Orientation: a pair's orientation (which member takes the min) is parity(row & x) — a linear form of the
// key's index. The plan picks the block origins (a complement of the tile, chosen inside the forms' kernel) and
// each window's thread vectors (inside the kernel of its columns' forms) so that, wherever the linear algebra
// allows, the orientation depends on the register slot alone: known when the kernel is generated, one min and
// one max a pair instead of a compare and two selects on a runtime bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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
  /// Empty: every key goes back to its own position. Else the columns of an invertible n × n matrix A: the key
  /// at x is written at A·x ⊕ out_xor of the other buffer — a permutation that followed the pass, folded into
  /// its store (the pass is then out of place; the registers kernels only).
  std::vector<BitVec> out_cols;
  BitVec out_xor = 0;
  friend bool operator==(const FusedTileSpec&, const FusedTileSpec&) = default;
};

enum class FusedKernelKind { Shared, Registers, Pipelined };
const char* to_string(FusedKernelKind k) noexcept;

struct FusedCodegenOptions {
  int tile_bits = 13;  ///< the kernel's tile has min(n, max(tile_bits, dim(V' + lines))) dimensions (see run_bits)
  int reg_bits = 5;    ///< Registers: 2^reg_bits keys per thread (1..6; raised to T − 10 so a block has ≤ 1024 threads)
  FusedKernelKind kind = FusedKernelKind::Registers;
  int key_bytes = 4;   ///< Pipelined: two tiles of 2^T keys of this size must fit a block's shared memory
  /// Floating keys: the "first member" bit (FusedColumn::first_bit) is evaluated at run time too, so its forms
  /// are made to vanish on block and thread vectors after the orientation forms (set by generate_fused).
  bool floating_keys = false;
  /// Choose block origins and thread vectors so that pair orientations are known when the kernel is generated
  /// (the header's "Orientation"); off: block bits at the non-pivot positions and the plain window layouts, every
  /// orientation computed at run time.
  bool fixed_orientation = true;
  /// A pass whose V' has runs of fewer than 2^run_bits keys gets a larger tile: it grows by line bits until its
  /// runs have 2^run_bits keys, where that tile still fits (2^20 keys; the pipelined kernel's two tiles in shared
  /// memory, the others' one); 0: never.
  int run_bits = 0;
  /// The kernel reads its tiles from a second array (bmmc_fused(src, data)) and writes them at the same
  /// positions of data (or through the spec's folded permutation, which requires this): a program with an odd
  /// number of moves between its buffers ends in its own buffer with no copy.
  bool out_of_place = false;
  friend bool operator==(const FusedCodegenOptions&, const FusedCodegenOptions&) = default;
};

/// A register layout in tile coordinates: tile coordinate i = ⊕ θ_m·threads[m] ⊕ ⊕ r_k·regs[k] for thread θ
/// and register slot r. threads[0..4] are the lane vectors (any vectors: the round trips' swizzles put them on
/// distinct banks; a layout the block loads or stores straight from has lanes e_0 … e_4, whole runs).
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
  std::vector<int> outside;    ///< K's non-pivot positions: block index bit k is deposited at outside[k] …
  /// … and block index bit k adds the global vector block[k] = e_outside[k] ⊕ (a vector of K) to the block's
  /// coset origin x0: the K part is chosen so that the columns' forms vanish on block[k] (orientation_forms),
  /// as many of them as agree. Block b owns x0(b) ⊕ K with x0(b) = XOR of block[k] over the set bits k of b.
  std::vector<BitVec> block;
  std::vector<BitVec> deltas;  ///< per column: its direction in tile coordinates
  /// Registers: the layouts of the global load and store (lanes = coordinates 0 … 4; with a folded permutation the
  /// store's lanes are the preimages of the output's low bits, see store_runs)
  FusedLayout load, store;
  FusedLayout plain;           ///< Registers: lanes e_0 … e_4, registers on the lowest other coordinates (the cp.async prefetch)
  /// With out_cols: the store's lanes 0 … store_runs − 1 are the tile coordinates of A⁻¹·e_0 …, so a warp
  /// writes whole runs of 2^store_runs output keys (K takes in A⁻¹·e_0 … A⁻¹·e_4 where the tile has room).
  int store_runs = 0;
  std::vector<FusedWindow> windows;  ///< Registers: in order, covering every column
  /// Registers: 2^(T − R); Shared: min(2^(T−1), 256).
  int threads_per_block() const noexcept;
  std::uint64_t blocks() const noexcept { return std::uint64_t{1} << (n - tile_dim); }
  /// Shared-memory round trips (store all keys, load all keys) one block makes.
  int transitions() const noexcept;
};

/// Per column, the linear forms of the tile coordinate i that the kernel evaluates: the key at x0 ⊕ K·i has
/// logical bit 0 = parity(row & x0) ⊕ c0 ⊕ parity(rho & i) and bit first_bit = bit first_bit of x0 ⊕
/// parity(phi & i). Where rho (phi) vanishes on a layout's thread vectors and on the block vectors, the kernel
/// knows the value for every register slot when it is generated.
struct ColumnForms {
  BitVec rho = 0, phi = 0;
};
ColumnForms column_forms(const FusedKernelPlan& plan, const FusedColumn& column);
/// The restriction of a form on tile coordinates to a family of vectors: bit m = parity(form & vs[m]).
BitVec restrict_form(BitVec form, const std::vector<BitVec>& vs);

/// The storage map of a round trip through shared memory (every key stored by layout `from`, then loaded by
/// `to`): the key with tile coordinate i sits at index a = S·i, row k of S giving bit k of a (apply_rows). S is
/// invertible and puts the 32 lanes of a warp on 32 distinct banks for both layouts (and a half-warp's 16 lanes
/// on 16 distinct 8-byte slots): the identity when both layouts' lanes have low coordinates that do it (lanes
/// e_0 … e_4, the usual case), else five bank forms found by a seeded search, completed by unit forms. Worked
/// example: lanes of `to` with no low coordinates at all (u_l = e_(5+l)) get bank forms that read them.
std::vector<BitVec> shared_swizzle(const FusedLayout& from, const FusedLayout& to, int T);
/// S·v for S given by its rows: bit k = parity(rows[k] & v).
BitVec apply_rows(const std::vector<BitVec>& rows, BitVec v);

/// Throws std::invalid_argument unless the spec is a pass this generator runs: 1 ≤ n ≤ 40, the tile vectors
/// inside n bits, every direction non-zero and inside span(tile), first_bit below n with the two members of
/// each pair differing there, at least one column; out_cols empty (and out_xor 0) or n independent columns of
/// n bits with out_xor below 2^n.
void check_fused_tile(const FusedTileSpec& spec);

/// The kernel's plan: the tile K, the block origins, the windows and their layouts (greedy: a window grows while
/// its directions span at most R dimensions; each window's thread vectors are taken inside the kernel of as many
/// of its columns' orientation forms as a layout allows, first to last, keeping its lanes e_0 … e_4 where the
/// block loads or stores straight from it). R = max(reg_bits, T − 10) (at most 1024 threads); Registers falls back to Shared
/// when T < R + 5 or R > 6.
FusedKernelPlan plan_fused_kernel(const FusedTileSpec& spec, const FusedCodegenOptions& options = {});

/// Registers a thread of a fused kernel is given: 4 per 32-bit word of the keys it holds (2^R keys; the keys,
/// their partners and masks), at least 64. Shared: 64. src/codegen/tuning.hpp gives the measurement.
unsigned fused_registers_per_thread(const FusedKernelPlan& plan, int key_bytes);
/// Blocks per SM that `registers` a thread (of the 64 K an SM has) and an SM's 228 KiB of shared memory
/// allow (1..8): the kernels' __launch_bounds__ minimum, and the persistent grid of Pipelined kernels (times the
/// SM count). Worked example: a 2^13 tile of int32, 32 keys a thread, two tiles of shared memory: 256 threads,
/// 64 KiB — 3 blocks by shared memory, but 2 by 128 registers a thread.
std::uint64_t fused_blocks_per_sm(unsigned threads, std::uint64_t shared_bytes, unsigned registers = 64);

}  // namespace bmmc
