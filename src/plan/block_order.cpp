// Launch orders of tile-pass blocks (see block_order.hpp).
#include "bmmc/plan/block_order.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace bmmc {

namespace {

// The block index whose x0 is congruent to v modulo V': reduce v by V' (what is left lies on W, the
// complement's positions) and gather those bits, block bit i being position W[i].
std::uint64_t block_bits_of(BitVec v, const Subspace& tile_space, const std::vector<int>& w) {
  const BitVec r = tile_space.reduce(v);
  std::uint64_t b = 0;
  for (size_t i = 0; i < w.size(); ++i) b |= ((r >> w[i]) & 1) << i;
  return b;
}

}  // namespace

const char* to_string(BlockOrder o) noexcept {
  switch (o) {
    case BlockOrder::Coordinate: return "coordinate";
    case BlockOrder::Input: return "input";
    case BlockOrder::Output: return "output";
    case BlockOrder::Balanced: return "balanced";
  }
  return "coordinate";
}

BlockOrder parse_block_order(std::string_view name) {
  for (BlockOrder o : {BlockOrder::Coordinate, BlockOrder::Input, BlockOrder::Output, BlockOrder::Balanced})
    if (name == to_string(o)) return o;
  throw std::invalid_argument(
      fmt::format("unknown block order '{}': expected coordinate, input, output or balanced", name));
}

std::vector<std::uint64_t> block_order_columns(const BitMatrix& a, const Subspace& tile_space, BlockOrder order) {
  const int n = tile_space.n();
  if (a.rows() != n || a.cols() != n)
    throw std::invalid_argument(fmt::format("block order: A is {}x{}, the tile space has {} bits", a.rows(), a.cols(), n));
  if (static_cast<unsigned>(order) > static_cast<unsigned>(BlockOrder::Balanced))
    throw std::invalid_argument(fmt::format("block order: {} names no launch order; expected coordinate, input, output "
                                            "or balanced",
                                            static_cast<int>(order)));
  if (order == BlockOrder::Coordinate) return {};
  const std::vector<int> w = tile_space.coordinate_complement();
  const BitMatrix ainv = a.inverse();
  const Subspace out_tile = tile_space.image(a);
  std::vector<std::uint64_t> cols;
  Subspace taken = tile_space;  // V' plus the directions chosen so far
  auto take = [&](BitVec v) {
    if (taken.insert(v)) cols.push_back(block_bits_of(v, tile_space, w));
  };
  if (order == BlockOrder::Input || order == BlockOrder::Output) {
    // The lowest unit directions that are new modulo the tile (and the earlier ones) on the chosen side.
    const bool out = order == BlockOrder::Output;
    Subspace side = out ? out_tile : tile_space;
    for (int j = 0; j < n; ++j)
      if (side.insert(BitVec{1} << j)) take(out ? ainv.apply(BitVec{1} << j) : BitVec{1} << j);
  } else {
    for (int r = 0; r <= n && static_cast<int>(cols.size()) < static_cast<int>(w.size()); ++r) {
      const Subspace low = Subspace::low_bits(n, r);
      const Subspace both = intersect(tile_space + low, (out_tile + low).image(ainv));
      for (BitVec v : both.basis()) take(v);
    }
  }
  if (cols.size() != w.size()) throw std::logic_error("block order: the launch bits do not cover the blocks");
  // The identity is stored as "no order": kernels of coordinate-aligned tiles stay as they were.
  for (size_t j = 0; j < cols.size(); ++j)
    if (cols[j] != std::uint64_t{1} << j) return cols;
  return {};
}

bool is_block_order(const std::vector<std::uint64_t>& columns, int bits) {
  if (columns.empty()) return true;
  if (static_cast<int>(columns.size()) != bits || bits > 64) return false;
  std::vector<BitVec> v;
  for (std::uint64_t c : columns) {
    if (bits < 64 && (c >> bits)) return false;
    v.push_back(c);
  }
  return Subspace::span(bits, v).dim() == bits;
}

}  // namespace bmmc
