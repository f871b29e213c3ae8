// TileTables from a TilePass (see tile_tables.hpp).
#include "tile_tables.hpp"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "bmmc/core/subspace.hpp"

namespace bmmc::cpu_detail {

TileTables build_tables(const TilePass& p) {
  const int k = p.vector_bits, s = p.segment_bits(), m = p.row_bits;
  if (k < 0 || m < 0 || p.read_rows.size() != static_cast<size_t>(m) ||
      p.write_rows.size() != static_cast<size_t>(m) || p.store_row_cols.size() != static_cast<size_t>(m) ||
      p.load_row_cols.size() != static_cast<size_t>(m) || p.store_elem_cols.size() != static_cast<size_t>(k) ||
      p.load_lane_cols.size() != static_cast<size_t>(s) || p.block_images.size() != p.block_positions.size() ||
      s + m + static_cast<int>(p.block_positions.size()) != p.n() || s + m > 24 || !p.packing_valid())
    throw std::invalid_argument(fmt::format(
        "execute_plan_cpu: tile pass tables are inconsistent (n = {}, s = {}, m = {}, {} block bits)", p.n(), s,
        m, p.block_positions.size()));
  // Values that would move a run outside the arrays: every row offset, block image and the complement must be
  // an index (< 2^n) with its low s bits clear where it is added to a run start; block positions are
  // distinct bits in [s, n). A hand-made plan that breaks this is refused before anything is touched.
  const int n = p.n();
  const BitVec index_mask = low_mask(n), run_mask = low_mask(s);
  auto bad = [&](const char* what, BitVec v) {
    return std::invalid_argument(fmt::format(
        "execute_plan_cpu: tile pass {} {:#x} is not an index of 2^{} elements with its low {} bits clear", what, v,
        n, s));
  };
  for (BitVec r : p.read_rows)
    if ((r & ~index_mask) != 0 || (r & run_mask) != 0) throw bad("read row", r);
  for (BitVec r : p.write_rows)
    if ((r & ~index_mask) != 0 || (r & run_mask) != 0) throw bad("write row", r);
  for (BitVec v : p.block_images)
    if ((v & ~index_mask) != 0) throw bad("block image", v);
  if ((p.bmmc.complement() & ~index_mask) != 0) throw bad("complement", p.bmmc.complement());
  BitVec seen = 0;
  for (int pos : p.block_positions) {
    if (pos < s || pos >= n || ((seen >> pos) & 1))
      throw std::invalid_argument(fmt::format(
          "execute_plan_cpu: tile pass block position {} must be a distinct bit in [{}, {})", pos, s, n));
    seen |= BitVec{1} << pos;
  }
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
