// Plan consistency by linear algebra (see plan_consistency.hpp).
#include "bmmc/plan/plan_consistency.hpp"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "bmmc/core/involution.hpp"
#include "bmmc/core/subspace.hpp"

namespace bmmc {

namespace {

// Whether the vectors are linearly independent (all of them inside F2^n).
bool independent(int n, const std::vector<BitVec>& vectors) {
  Subspace s(n);
  for (BitVec v : vectors)
    if (!s.insert(v)) return false;
  return true;
}

// Shape and ranges: what the executors index with. Everything an executor adds to a run start is an index below
// 2^n with the run's low s bits clear; block positions are distinct bits of [s, n).
std::string shape_inconsistency(const TilePass& p) {
  const int n = p.n(), k = p.vector_bits, m = p.row_bits;
  if (k < 0 || k > 4 || m < 0 || p.warp_bits < 0 || p.warp_bits > m)
    return fmt::format("vector bits {}, row bits {}, warp bits {}: expected 0..4 vector bits and 0 <= warp bits <= row bits",
                       k, m, p.warp_bits);
  const int s = p.segment_bits();
  const auto um = static_cast<std::size_t>(m);
  if (p.read_rows.size() != um || p.write_rows.size() != um || p.store_row_cols.size() != um ||
      p.load_row_cols.size() != um || p.store_elem_cols.size() != static_cast<std::size_t>(k) ||
      p.load_lane_cols.size() != static_cast<std::size_t>(s) || p.block_images.size() != p.block_positions.size())
    return fmt::format("table sizes disagree with s = {}, m = {} (read rows {}, write rows {}, store rows {}, load rows {}, "
                       "store element columns {}, load lane columns {}, block images {} for {} block positions)",
                       s, m, p.read_rows.size(), p.write_rows.size(), p.store_row_cols.size(), p.load_row_cols.size(),
                       p.store_elem_cols.size(), p.load_lane_cols.size(), p.block_images.size(), p.block_positions.size());
  if (s + m + static_cast<int>(p.block_positions.size()) != n)
    return fmt::format("s {} + m {} + {} block bits != n = {}", s, m, p.block_positions.size(), n);
  if (s + m > 24) return fmt::format("a tile of 2^{} elements: at most 2^24", s + m);
  if (!p.packing_valid()) return "packed bytes need 1-byte elements and at least 4 of them a lane access";
  if (p.elem_bytes != 1 && p.elem_bytes != 2 && p.elem_bytes != 4 && p.elem_bytes != 8 && p.elem_bytes != 16)
    return fmt::format("element size {} bytes: expected 1, 2, 4, 8 or 16", p.elem_bytes);
  const BitVec index = low_mask(n), run = low_mask(s);
  for (BitVec r : p.read_rows)
    if ((r & ~index) != 0 || (r & run) != 0)
      return fmt::format("read row {:#x} is not an index of 2^{} elements with its low {} bits clear", r, n, s);
  for (BitVec r : p.write_rows)
    if ((r & ~index) != 0 || (r & run) != 0)
      return fmt::format("write row {:#x} is not an index of 2^{} elements with its low {} bits clear", r, n, s);
  for (BitVec v : p.block_images)
    if ((v & ~index) != 0) return fmt::format("block image {:#x} is not an index of 2^{} elements", v, n);
  BitVec seen = 0;
  for (int pos : p.block_positions) {
    if (pos < s || pos >= n || ((seen >> pos) & 1))
      return fmt::format("block position {} must be a distinct bit in [{}, {})", pos, s, n);
    seen |= BitVec{1} << pos;
  }
  // The launch order M: empty, or one column per block bit forming a bijection of the block indices.
  const int w = static_cast<int>(p.block_positions.size());
  if (!p.block_order.empty() && (p.block_order.size() != static_cast<std::size_t>(w) ||
                                 !independent(w, std::vector<BitVec>(p.block_order.begin(), p.block_order.end()))))
    return fmt::format("the launch order has {} columns for {} block bits, or is not a bijection of the blocks",
                       p.block_order.size(), w);
  return {};
}

}  // namespace

std::string tile_pass_inconsistency(const TilePass& p) {
  if (std::string e = shape_inconsistency(p); !e.empty()) return e;
  const int n = p.n(), k = p.vector_bits, s = p.segment_bits(), m = p.row_bits;
  const BitMatrix& a = p.bmmc.matrix();
  // The input side: e_0 … e_(s−1), R, e_W a basis of F2^n (each element of the array read by one block once).
  std::vector<BitVec> input;
  for (int j = 0; j < s; ++j) input.push_back(BitVec{1} << j);
  input.insert(input.end(), p.read_rows.begin(), p.read_rows.end());
  for (int pos : p.block_positions) input.push_back(BitVec{1} << pos);
  if (!independent(n, input))
    return "the read rows and block positions do not complete the run bits to a basis: some elements would be read "
           "twice and others never";
  // Blocks: z(b) = A·x0(b) ⊕ c, i.e. images[i] = A·e_(W_i).
  for (std::size_t i = 0; i < p.block_positions.size(); ++i)
    if (p.block_images[i] != a.apply(BitVec{1} << p.block_positions[i]))
      return fmt::format("block image {} is {:#x} but A·e_{} = {:#x}", i, p.block_images[i], p.block_positions[i],
                         a.apply(BitVec{1} << p.block_positions[i]));
  // Λ: the store basis (position bits, then rows), a bijection onto the tile's addresses.
  std::vector<BitVec> store(static_cast<std::size_t>(s + m));
  for (int b = 0; b < s; ++b) store[b] = b < k ? p.store_elem_cols[b] : p.lane_address(1u << (b - k));
  for (int i = 0; i < m; ++i) store[s + i] = p.store_row_cols[i];
  if (!independent(32, store)) return "the shared store addresses (Λ) are not independent: tile elements would collide";
  // Each load basis vector: its natural index N (coordinates in Λ), whose input offset p ⊕ R·ρ must map under A
  // to the output offset the load writes (τ_j: e_j; σ_i: U_i). The load map must be a bijection too.
  std::vector<BitVec> naturals;
  auto check_load = [&](std::uint32_t address, BitVec out_offset, const char* what, int index) -> std::string {
    const std::optional<BitVec> c = coordinates(store, address);
    if (!c) return fmt::format("load {} {} reads shared address {:#x}, outside the tile", what, index, address);
    naturals.push_back(*c);
    BitVec in_offset = *c & low_mask(s);
    for (int i = 0; i < m; ++i)
      if ((*c >> (s + i)) & 1) in_offset ^= p.read_rows[i];
    if (a.apply(in_offset) != out_offset)
      return fmt::format("load {} {} takes the element of input offset {:#x} to output offset {:#x}, but A sends it to {:#x}",
                         what, index, in_offset, out_offset, a.apply(in_offset));
    return {};
  };
  for (int j = 0; j < s; ++j)
    if (std::string e = check_load(p.load_lane_cols[j], BitVec{1} << j, "lane column", j); !e.empty()) return e;
  for (int i = 0; i < m; ++i)
    if (std::string e = check_load(p.load_row_cols[i], p.write_rows[i], "row", i); !e.empty()) return e;
  if (!independent(s + m, naturals))
    return "the shared loads (G) are not independent: some tile elements would be written twice and others never";
  return {};
}

void require_consistent_plan(const Plan& plan, const char* who) {
  if (plan.passes.empty()) throw std::invalid_argument(fmt::format("{}: the plan has no passes", who));
  Bmmc product = Bmmc(BitMatrix::identity(plan.n()));
  for (std::size_t i = 0; i < plan.passes.size(); ++i) {
    const Pass& pass = plan.passes[i];
    const Bmmc& f = std::visit([](const auto& q) -> const Bmmc& { return q.bmmc; }, pass);
    const int eb = std::visit([](const auto& q) { return q.elem_bytes; }, pass);
    if (f.n() != plan.n() || eb != plan.elem_bytes)
      throw std::invalid_argument(
          fmt::format("{}: pass {} has n = {} and {}-byte elements but the plan has n = {} and {}-byte elements", who,
                      i + 1, f.n(), eb, plan.n(), plan.elem_bytes));
    if (const auto* t = std::get_if<TilePass>(&pass))
      if (std::string e = tile_pass_inconsistency(*t); !e.empty())
        throw std::invalid_argument(fmt::format("{}: pass {} is inconsistent: {}", who, i + 1, e));
    product = compose(f, product);
  }
  if (!(product == plan.bmmc))
    throw std::invalid_argument(fmt::format(
        "{}: the passes compose to another permutation than the plan's (plan.bmmc must be the product of the "
        "passes, the first applied first)",
        who));
}

void require_consistent_plan(const InPlacePlan& plan, const char* who) {
  Bmmc product = Bmmc(BitMatrix::identity(plan.n()));
  const BitVec index = low_mask(plan.n());
  for (std::size_t i = 0; i < plan.passes.size(); ++i) {
    const InPlacePass& pass = plan.passes[i];
    const Bmmc& f = pass_bmmc(pass);
    auto fail = [&](const std::string& what) {
      return std::invalid_argument(fmt::format("{}: in-place pass {} is inconsistent: {}", who, i + 1, what));
    };
    if (f.n() != plan.n()) throw fail(fmt::format("it has n = {} but the plan has n = {}", f.n(), plan.n()));
    if (!is_involution(f)) throw fail("it is not an involution, so it cannot run in place");
    // A mask names bits that f leaves alone (rows e_j, complement bit 0), so masked-out elements stay put.
    auto check_mask = [&](BitVec bits, BitVec value) {
      // A masked pass moves part of the array only: that is the plan's own mask (swap_index_bits), one pass.
      if ((bits != 0 || plan.mask_bits != 0) &&
          (plan.passes.size() != 1 || bits != plan.mask_bits || value != plan.mask_value))
        throw fail(fmt::format("mask {:#x} / value {:#x}: a pass's mask must be the plan's ({:#x} / {:#x}), in a plan "
                               "of one pass",
                               bits, value, plan.mask_bits, plan.mask_value));
      if ((bits & ~index) != 0 || (value & ~bits) != 0)
        throw fail(fmt::format("mask {:#x} / value {:#x}: expected mask bits below 2^{} and the value inside them",
                               bits, value, plan.n()));
      for (int j = 0; j < plan.n(); ++j)
        if (((bits >> j) & 1) && (f.matrix().row(j) != (BitVec{1} << j) || ((f.complement() >> j) & 1)))
          throw fail(fmt::format("mask bit {} is a bit the involution changes", j));
    };
    if (const auto* t = std::get_if<InvolutionPass>(&pass)) {
      const int eb = t->tile.elem_bytes;
      if (eb != plan.elem_bytes) throw fail(fmt::format("its tile has {}-byte elements, the plan {}", eb, plan.elem_bytes));
      if (std::string e = tile_pass_inconsistency(t->tile); !e.empty()) throw fail(e);
      // V' = the run bits and the read rows; A·V' = V', and the partner of block b is the block whose coset
      // holds z(b) (affine in b: checked at b = 0 and on every block bit).
      std::vector<BitVec> v;
      for (int j = 0; j < t->tile.segment_bits(); ++j) v.push_back(BitVec{1} << j);
      v.insert(v.end(), t->tile.read_rows.begin(), t->tile.read_rows.end());
      const Subspace vs = Subspace::span(plan.n(), v);
      for (BitVec x : v) {
        if (!vs.contains(f.matrix().apply(x))) throw fail(fmt::format("A maps the tile vector {:#x} out of the tile", x));
        if (t->tile_fixed && f.matrix().apply(x) != x)
          throw fail(fmt::format("tile_fixed is set but A moves the tile vector {:#x}", x));
      }
      const std::size_t w = t->tile.block_positions.size();
      if (t->partner_cols.size() != w || (t->partner_base >> w) != 0)
        throw fail(fmt::format("the partner map has {} columns and base {:#x} for {} block bits", t->partner_cols.size(),
                               t->partner_base, w));
      for (std::size_t b = 0; b <= w; ++b) {  // b = w: the block 0; else block bit b alone
        const std::uint64_t block = b == w ? 0 : std::uint64_t{1} << b;
        if ((t->partner(block) >> w) != 0) throw fail(fmt::format("partner of block {} is outside the blocks", block));
        const BlockOrigin o = block_origin(t->tile, block), po = block_origin(t->tile, t->partner(block));
        // Linear part for a block bit: images[b] ⊕ x0(partner(e_b)) ⊕ x0(partner(0)) ∈ V'.
        const BitVec drift = b == w ? o.z ^ po.x0
                                    : o.z ^ t->tile.bmmc.complement() ^ po.x0 ^ block_origin(t->tile, t->partner(0)).x0;
        if (!vs.contains(drift))
          throw fail(fmt::format("the partner map sends block {} to a block whose coset does not hold its output", block));
      }
      if (t->mask_bits != 0) {
        BitVec block_bits = 0;
        for (int pos : t->tile.block_positions) block_bits |= BitVec{1} << pos;
        if ((t->mask_bits & ~block_bits) != 0) throw fail(fmt::format("mask {:#x} names bits inside the tile", t->mask_bits));
      }
      check_mask(t->mask_bits, t->mask_value);
    } else {
      const auto& q = std::get<NaiveInvolutionPass>(pass);
      if (q.elem_bytes != plan.elem_bytes)
        throw fail(fmt::format("it has {}-byte elements, the plan {}", q.elem_bytes, plan.elem_bytes));
      if (q.vector_bits < 0 || q.vector_bits > carried_low_bits(f) || (q.mask_bits & low_mask(q.vector_bits)) != 0)
        throw fail(fmt::format("vector bits {}: the involution must carry them and the mask name none of them",
                               q.vector_bits));
      check_mask(q.mask_bits, q.mask_value);
    }
    product = compose(f, product);
  }
  if (!(product == plan.bmmc))
    throw std::invalid_argument(fmt::format(
        "{}: the in-place passes compose to another permutation than the plan's (plan.bmmc must be their product)",
        who));
}

}  // namespace bmmc
