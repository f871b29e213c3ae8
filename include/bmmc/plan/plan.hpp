// Plans: what a permutation kernel does, as plain printable data (no CUDA, no code).
//
// A Plan is a list of passes over memory; each pass moves every element of the array once. Two shapes:
//  - NaivePass: one element per thread, out[A·x ⊕ c] = in[x] (the paper's naive kernel).
//  - TilePass: the coset-tile kernel of docs/DESIGN.md §4. It covers the paper's tiled kernels (§4, §5.1: V is
//    coordinate-aligned; swizzle off = "tile", on = "tile+banks", more rows per warp = "iters") and our
//    one-pass plan for ANY BMMC. Notation: k = vector bits (a lane moves 2^k consecutive elements in one
//    access), s = k + 5 (a warp access covers 2^s consecutive elements: 32 lanes), m = row bits (the tile
//    has 2^m rows of 2^s elements), so a block owns the coset x0 ⊕ V' with dim V' = s + m.
//    Block b:  x0 = b's bits deposited at `block_positions`;  z = c ⊕ Σ_i b_i·block_images[i]  (block_origin);
//              the i-th block launched is b = M·i (`block_order`, the launch order; empty M = identity).
//              y0 = z with the low s bits cleared, δ = the low s bits of z.
//    Phase 1:  warp row ρ (warp w handles ρ = w + j·2^warp_bits), lane ℓ, element e < 2^k reads
//              x = x0 ⊕ R·ρ ⊕ (ℓ·2^k + e)  and stores it at shared address  Λρ·ρ ⊕ Λe·e ⊕ ℓ  (ℓ·4 when packed).
//    Phase 2:  warp row σ, lane ℓ, element e writes  y = y0 ⊕ U·σ ⊕ (ℓ·2^k + e)  with the shared address
//              Gσ·σ ⊕ Gτ·((ℓ·2^k + e) ⊕ δ).
//    All maps are XORs of the listed columns (linear over F2); elements wider than 4 bytes use
//    elem_bytes/4 planes of `plane_words` 32-bit words, narrower ones one word each — except packed 1-byte
//    tiles (`packed_bytes`), whose addresses are bytes, four elements to a word — so banks are always counted
//    on 32-bit words.
// The plan checker (plan_check.hpp) executes exactly these formulas and proves each plan correct,
// coalesced and bank-conflict free; the code generator emits exactly these formulas.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/host_device.hpp"

namespace bmmc {

/// A warp has 2^5 lanes, and 32 lanes of 4-byte elements fill one 128-byte line: the low kLaneBits index bits
/// (times 2^vector_bits) are what every tile row holds contiguously.
inline constexpr int kLaneBits = 5;

/// Kernel variants, named as on the CLI. Auto resolves to one-pass (naive below 32 elements).
enum class Variant { Naive, Tiled, TiledBanks, TiledBanksIters, TwoPass, OnePass, Auto };

/// Which blocks of a tile pass run at the same time (plan/block_order.hpp): the launch order decides which
/// DRAM pages are open together, not what is moved. Coordinate: block bits in the order of the coordinate
/// complement W (the paper's); Input: consecutive launches read neighbouring runs; Output: they write
/// neighbouring runs; Balanced: both sides as low as they can be together.
enum class BlockOrder { Coordinate, Input, Output, Balanced };

/// Which runs the tile rows beyond those the permutation forces (the "iters" rows) lengthen: Read adds the unit
/// directions e_s, e_(s+1), … (a block reads longer contiguous runs; the paper's choice), Write adds A⁻¹e_s, … (it
/// writes longer runs), Both alternates, write side first. DRAM charges less for longer runs on either side
/// (BENCHMARKS.md "The copy limit"); which side pays more depends on the launch order.
enum class RunSide { Read, Write, Both };

const char* to_string(Variant v) noexcept;
/// Parses "naive", "tiled", "tiled-banks", "tiled-banks-iters", "two-pass", "one-pass", "auto";
/// throws std::invalid_argument listing the names otherwise.
Variant parse_variant(std::string_view name);

const char* to_string(BlockOrder o) noexcept;
/// Parses "input", "output", "balanced"; throws std::invalid_argument listing the names otherwise.
BlockOrder parse_block_order(std::string_view name);

const char* to_string(RunSide s) noexcept;
/// Parses "read", "write", "both"; throws std::invalid_argument listing the names otherwise.
RunSide parse_run_side(std::string_view name);

struct NaivePass {
  Bmmc bmmc;
  int elem_bytes = 4;
  int threads_per_block = 256;

  int n() const { return bmmc.n(); }
  std::uint64_t blocks() const;
  friend bool operator==(const NaivePass&, const NaivePass&) = default;
};

struct TilePass {
  Bmmc bmmc;                 ///< the permutation this pass performs
  int elem_bytes = 4;
  int vector_bits = 0;       ///< k: a lane access moves 2^k consecutive elements
  int row_bits = 0;          ///< m: tile rows
  int warp_bits = 0;         ///< log2(warps per block)
  int q = 0;                 ///< dim(L + A⁻¹L) − s: rows forced by the permutation (the rest are "iters")
  bool swizzle = true;       ///< XOR swizzle of shared addresses (off = the paper's plain "tile")
  /// 1-byte elements four to a shared 32-bit word (k ≥ 2): the Λ/G columns below are then byte addresses, the
  /// word layout with its element bits 0, 1 moved to address bits 0, 1 and its bank bits 0 … 4 to 2 … 6 (so
  /// each access hits the banks the word layout hits). A 2^16-element tile takes 64 KiB instead of 256, which
  /// lets 1-byte elements have 8-byte lanes and 256-byte runs.
  bool packed_bytes = false;
  std::vector<BitVec> read_rows{};        ///< R: m vectors, low s bits clear
  std::vector<BitVec> write_rows{};       ///< U: m vectors, low s bits clear
  std::vector<int> block_positions{};     ///< W: bit positions that the block index is deposited at
  std::vector<BitVec> block_images{};     ///< A·e_w for w in W
  /// M: the i-th block launched is block M·i (column j = the block bits of launch bit j). Empty = identity.
  /// A bijection of the block indices, so it changes which cosets run together, never what a block does.
  std::vector<std::uint64_t> block_order{};
  std::vector<std::uint32_t> store_row_cols{};   ///< Λρ: shared address (word, or byte when packed) of row vector i
  std::vector<std::uint32_t> store_elem_cols{};  ///< Λe: shared address of element bit i (k of them)
  std::vector<std::uint32_t> load_row_cols{};    ///< Gσ: m columns
  std::vector<std::uint32_t> load_lane_cols{};   ///< Gτ: s columns (element bits first, then lane bits)

  int n() const { return bmmc.n(); }
  int segment_bits() const { return vector_bits + kLaneBits; }  ///< s
  int iters() const { return 1 << (row_bits - warp_bits); }  ///< rows per warp in each phase
  int threads_per_block() const { return 1 << (kLaneBits + warp_bits); }
  int elems_per_thread() const { return iters() << vector_bits; }
  std::uint64_t blocks() const { return std::uint64_t{1} << block_positions.size(); }
  int planes() const { return elem_bytes > 4 ? elem_bytes / 4 : 1; }
  std::uint32_t plane_words() const { return std::uint32_t{1} << (row_bits + segment_bits()); }
  std::uint64_t shared_bytes() const { return std::uint64_t{plane_words()} * (packed_bytes ? 1 : 4 * planes()); }
  /// Phase 1's shared address of lane l's element 0 in row 0 (the lane bits of the word layout, moved up two
  /// bits when packed), and the 32-bit word an address falls in.
  std::uint32_t lane_address(std::uint32_t l) const { return packed_bytes ? l << 2 : l; }
  std::uint32_t word_of(std::uint32_t address) const { return packed_bytes ? address >> 2 : address; }
  /// Packing is only defined for 1-byte elements whose lanes move at least 4 of them (the kernels, the
  /// checker and the CPU tables refuse a hand-made pass that packs anything else).
  bool packing_valid() const { return !packed_bytes || (elem_bytes == 1 && vector_bits >= 2); }
  int vector_bytes() const { return elem_bytes << vector_bits; }
  friend bool operator==(const TilePass&, const TilePass&) = default;
};

/// Where block b of a tile pass starts: x0 in the input, z = A·x0 ⊕ c in the output (y0 and δ follow from z).
struct BlockOrigin {
  std::uint64_t x0 = 0;
  std::uint64_t z = 0;
};

/// The one definition of the block origin (the "Block b" line above): x0 = b's bits deposited at
/// `positions`, z = c ⊕ Σ_i b_i·images[i]. On raw arrays and BMMC_HOST_DEVICE so that the plan checker, the
/// CPU tables and the precompiled GPU kernel all call this; the code generator emits its columns
/// (cuda_source.cpp evaluates it on b = 0 and b = 2^i).
BMMC_HOST_DEVICE constexpr BlockOrigin block_origin(const int* positions, const std::uint64_t* images, int count,
                                                    std::uint64_t complement, std::uint64_t b) noexcept {
  BlockOrigin o{0, complement};
  for (int i = 0; i < count; ++i)
    if ((b >> i) & 1) {
      o.x0 |= std::uint64_t{1} << positions[i];
      o.z ^= images[i];
    }
  return o;
}
inline BlockOrigin block_origin(const TilePass& p, std::uint64_t b) noexcept {
  return block_origin(p.block_positions.data(), p.block_images.data(), static_cast<int>(p.block_positions.size()),
                      p.bmmc.complement(), b);
}

/// The block that launch index i runs: M·i (i itself when block_order is empty).
inline std::uint64_t launched_block(const TilePass& p, std::uint64_t i) noexcept {
  return p.block_order.empty() ? i : xor_of_columns(p.block_order, i);
}

using Pass = std::variant<NaivePass, TilePass>;

struct Plan {
  Variant variant = Variant::OnePass;  ///< resolved: never Auto
  Bmmc bmmc;                           ///< the whole permutation (composition of the passes)
  int elem_bytes = 4;
  std::vector<Pass> passes;            ///< applied in order; more than one needs a temporary buffer

  int n() const { return bmmc.n(); }
  bool needs_temp() const { return passes.size() > 1; }
  /// Bytes of the temporary buffer the passes ping-pong through (an array of 2^n elements), 0 for one pass.
  std::size_t temp_bytes() const { return needs_temp() ? (std::size_t{1} << n()) * static_cast<std::size_t>(elem_bytes) : 0; }
  friend bool operator==(const Plan&, const Plan&) = default;
};

/// Human-readable description: variant, geometry, V basis, rows, swizzle, blocks, threads, shared bytes.
std::string describe(const Plan& plan);
/// 64-bit element indices are needed when 2^n does not fit in 32 bits.
inline bool needs_64bit_index(int n) { return n > 32; }

}  // namespace bmmc
