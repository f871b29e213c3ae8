// Internal to the CPU backend: a TilePass turned into the lookup tables its block loops index, built once
// per pass. Shared by the gather loops (executor.cpp) and the register-transpose loop (transpose_blocks.cpp).
//
// Natural tile index. A CPU has no banks, so the executor relabels the plan's shared tile to the natural
// row-major order p = ρ·2^s + ℓ: phase 1 copies input run ρ (the 2^s consecutive elements at x0 ⊕ R·ρ)
// to p = ρ·2^s .. ρ·2^s + 2^s − 1, and output element j of output row σ is tile[Nσ[σ] ⊕ Nτ[δ] ⊕ Nτ[j]]
// (δ = the low s bits of z = A·x0 ⊕ c). The plan's shared-memory maps G are translated through the inverse
// of its store map Λ; Λ and G are linear, so their columns suffice.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc::cpu_detail {

// XOR of the columns selected by the bits of every index 0..2^cols.size()-1, built by the Gray-code rule
// t[i] = t[i with its lowest bit cleared] ⊕ cols[lowest bit of i]. Example: cols {1, 6} → {0, 1, 6, 7}.
template <class T>
std::vector<T> xor_table(const std::vector<T>& cols) {
  std::vector<T> t(std::size_t{1} << cols.size());
  t[0] = 0;
  for (std::size_t i = 1; i < t.size(); ++i) t[i] = t[i & (i - 1)] ^ cols[__builtin_ctzll(i)];
  return t;
}

struct TileTables {
  int s = 0, m = 0;
  std::uint64_t blocks = 0;
  BitVec complement = 0;
  std::vector<int> block_positions;
  std::vector<BitVec> block_images;
  std::vector<BitVec> rtab;          // R·ρ, 2^m entries
  std::vector<BitVec> utab;          // U·σ, 2^m entries
  std::vector<std::uint32_t> nsig;   // natural tile index of the plan's shared word Gσ·σ, 2^m entries
  std::vector<std::uint32_t> ntau;   // natural tile index of Gτ·j, 2^s entries
  // Each block prefetches the next block's input rows while it writes; the last block of a call prefetches the
  // rows of this input origin, when set (the in-place loop names the next pair's coset: cpu/inplace.cpp).
  std::optional<BitVec> prefetch_after;

  // Block b's origin (plan.hpp's block_origin): x0 = first input index, z = A·x0 ⊕ c. The loops that need
  // only one of them ask for it alone; inlined, the other half of block_origin is dead code.
  BlockOrigin origin(std::uint64_t b) const {
    return block_origin(block_positions.data(), block_images.data(), static_cast<int>(block_positions.size()),
                        complement, b);
  }
  std::uint64_t x0(std::uint64_t b) const { return origin(b).x0; }
  std::uint64_t z(std::uint64_t b) const { return origin(b).z; }
};

// The tables of a pass whose plan require_consistent_plan accepted (plan/plan_consistency.hpp; CpuPermuter
// checks every plan before it builds them).
TileTables build_tables(const TilePass& p);

}  // namespace bmmc::cpu_detail
