// TileTables from a TilePass (see tile_tables.hpp).
#include "tile_tables.hpp"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "bmmc/core/subspace.hpp"

namespace bmmc::cpu_detail {

TileTables build_tables(const TilePass& p) {
  // The pass comes from a plan that require_consistent_plan accepted (CpuPermuter's constructor): its shapes,
  // ranges and the bijections below are proved there, before any table is built.
  const int k = p.vector_bits, s = p.segment_bits(), m = p.row_bits;
  TileTables t;
  t.s = s;
  t.m = m;
  t.blocks = p.blocks();
  t.complement = p.bmmc.complement();
  t.block_positions = p.block_positions;
  t.block_images = p.block_images;
  t.rtab = xor_table(p.read_rows);
  t.utab = xor_table(p.write_rows);
  // The plan stores lane ℓ, element e of tile row ρ at shared address Λρ·ρ ⊕ Λe·e ⊕ lane_address(ℓ) (row
  // position p = ℓ·2^k + e; a word, or a byte of packed 1-byte tiles); the natural index of an address is its
  // coordinates in the basis (Λ of p's bits, Λ of ρ's), so packed and unpacked plans give the same tables.
  std::vector<BitVec> store(static_cast<size_t>(s + m));
  for (int b = 0; b < s; ++b) store[b] = b < k ? p.store_elem_cols[b] : p.lane_address(1u << (b - k));
  for (int i = 0; i < m; ++i) store[s + i] = p.store_row_cols[i];
  auto natural = [&](std::uint32_t word) {
    const std::optional<BitVec> c = coordinates(store, word);  // throws if Λ is singular
    if (!c) throw std::invalid_argument(fmt::format("execute_plan_cpu: shared word {:#x} is outside the tile", word));
    return static_cast<std::uint32_t>(*c);
  };
  std::vector<std::uint32_t> sig_cols, tau_cols;
  for (std::uint32_t g : p.load_row_cols) sig_cols.push_back(natural(g));
  for (std::uint32_t g : p.load_lane_cols) tau_cols.push_back(natural(g));
  t.nsig = xor_table(sig_cols);
  t.ntau = xor_table(tau_cols);
  return t;
}

}  // namespace bmmc::cpu_detail
