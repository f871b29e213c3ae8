// Launch orders for the pipelined exchange's local passes (see piece_pass.hpp).
#include "bmmc/dist/piece_pass.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "bmmc/core/subspace.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {

std::vector<BitVec> pack_atom_rows(const DistPlan& plan) {
  return std::vector<BitVec>(plan.spread_rows.end() - plan.piece_bits, plan.spread_rows.end());
}

std::vector<BitVec> unpack_atom_rows(const DistPlan& plan) {
  std::vector<BitVec> rows;
  for (int i = 0; i < plan.piece_bits; ++i) rows.push_back(BitVec{1} << (plan.chunk_bits() - plan.piece_bits + i));
  return rows;
}

BitVec atom_of(const std::vector<BitVec>& rows, BitVec x) noexcept {
  BitVec a = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) a |= static_cast<BitVec>(parity(rows[i] & x)) << i;
  return a;
}

std::vector<std::uint64_t> piece_launch_order(const TilePass& pass, const std::vector<BitVec>& rows) {
  const int q = static_cast<int>(rows.size());
  const int b = static_cast<int>(pass.block_positions.size());
  const Subspace tiles = tile_space(pass);
  for (BitVec row : rows)
    for (BitVec v : tiles.basis())
      if (parity(row & v))
        throw std::invalid_argument(fmt::format(
            "piece pass: the atom row {:#x} changes along the tile direction {:#x}: a tile would straddle two atoms",
            row, v));
  // The atom of block β: the rows at its origin (plan.hpp's block_origin).
  const auto atom_of_block = [&](std::uint64_t beta) { return atom_of(rows, block_origin(pass, beta).x0); };
  std::vector<std::uint64_t> base(pass.block_order);
  if (base.empty())
    for (int i = 0; i < b; ++i) base.push_back(std::uint64_t{1} << i);
  // Elimination over pairs (block vector, its atom): each kept atom has a distinct lowest set bit, its pivot.
  std::vector<std::pair<std::uint64_t, BitVec>> pivots;
  const auto reduce = [&pivots](std::uint64_t& beta, BitVec& a) {
    for (const auto& [pb, pa] : pivots)
      if (a & (pa & (~pa + 1))) {
        beta ^= pb;
        a ^= pa;
      }
  };
  for (std::uint64_t c : base) {
    std::uint64_t beta = c;
    BitVec a = atom_of_block(c);
    reduce(beta, a);
    if (a) pivots.push_back({beta, a});
  }
  if (static_cast<int>(pivots.size()) != q)
    throw std::invalid_argument(fmt::format(
        "piece pass: the {} atom rows take only {} independent values on the {} block bits", q, pivots.size(), b));
  // unit[a]: a block vector with atom e_a (reducing e_a to zero collects the combination that makes it).
  std::vector<std::uint64_t> unit(q, 0);
  for (int a = 0; a < q; ++a) {
    BitVec want = BitVec{1} << a;
    reduce(unit[a], want);  // want ends at 0: the pivots span F2^q
  }
  // The kernel of the atom map, in the base order: each base column with its atom cancelled by the units.
  std::vector<std::uint64_t> order;
  Subspace taken(b);
  for (std::uint64_t c : base) {
    std::uint64_t kappa = c;
    const BitVec a = atom_of_block(c);
    for (int i = 0; i < q; ++i)
      if ((a >> i) & 1) kappa ^= unit[i];
    if (static_cast<int>(order.size()) < b - q && taken.insert(kappa)) order.push_back(kappa);
  }
  for (int i = 0; i < q; ++i) {
    if (!taken.insert(unit[i])) throw std::logic_error("piece pass: the launch order is not a bijection");
    order.push_back(unit[i]);
  }
  return order;
}

GpuPolicy piece_policy(GpuPolicy policy, int elem_bytes) {
  policy.variant = Variant::OnePass;
  policy.longer_runs = RunSide::Read;
  if (elem_bytes == 1 && policy.vector_bits < 0) policy.vector_bits = 2;
  return policy;
}

}  // namespace bmmc
