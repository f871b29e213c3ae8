// The push planner (see push_plan.hpp and docs/DESIGN.md §9.5 for the algebra).
#include "bmmc/dist/push_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "bmmc/core/subspace.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {

namespace {

// U = span(e_0 … e_(m−1)) ∩ A·span(e_0 … e_(m−1)) on N = m + g bits: the output directions whose preimages
// are local, i.e. the runs one source rank can fill.
Subspace local_and_image(const Bmmc& bmmc, int m) {
  const Subspace local = Subspace::low_bits(bmmc.n(), m);
  return intersect(local, local.image(bmmc.matrix()));
}

// Q's columns: the first L in U (e_j itself wherever e_j ∈ U, so Q = I when A already keeps the low L output
// bits local), the rest completed by unit vectors (e_j itself wherever still independent). Q is then a bit
// permutation whenever U has enough unit vectors, as for every BPC.
BitMatrix choose_finish(const Subspace& u, int m, int line_bits) {
  std::vector<BitVec> cols(m, 0);
  Subspace chosen(m);
  for (int j = 0; j < line_bits; ++j)
    if (u.contains(BitVec{1} << j)) {
      cols[j] = BitVec{1} << j;
      chosen.insert(cols[j]);
    }
  std::vector<BitVec> candidates;
  for (int i = 0; i < m; ++i)
    if (u.contains(BitVec{1} << i)) candidates.push_back(BitVec{1} << i);
  candidates.insert(candidates.end(), u.basis().begin(), u.basis().end());
  for (int j = 0; j < line_bits; ++j) {
    if (cols[j]) continue;
    for (BitVec v : candidates)
      if (chosen.insert(v)) {
        cols[j] = v;
        break;
      }
    if (!cols[j]) throw std::logic_error("push plan: U has fewer directions than the checked line bits");
  }
  for (int j = line_bits; j < m; ++j)
    if (chosen.insert(BitVec{1} << j)) cols[j] = BitVec{1} << j;
  for (int j = line_bits, i = 0; j < m; ++j) {
    if (cols[j]) continue;
    while (!chosen.insert(BitVec{1} << i)) ++i;
    cols[j] = BitVec{1} << i;
  }
  return BitMatrix::from_cols(m, cols);
}

// diag(Q, I) on N bits.
BitMatrix embed_local(const BitMatrix& q, int n) {
  const int m = q.rows();
  std::vector<BitVec> cols(n);
  for (int j = 0; j < n; ++j) cols[j] = j < m ? q.col(j) : BitVec{1} << j;
  return BitMatrix::from_cols(n, cols);
}

}  // namespace

int max_push_line_bits(const Bmmc& bmmc, int rank_bits) {
  return local_and_image(bmmc, bmmc.n() - rank_bits).dim();
}

PushPlan make_push_plan(const Bmmc& bmmc, int rank_bits, int elem_bytes, int line_bits) {
  check_dist_geometry(bmmc, rank_bits, elem_bytes);
  const int n = bmmc.n(), g = rank_bits, m = n - g;
  const Subspace u = local_and_image(bmmc, m);
  if (line_bits < 0 || line_bits > u.dim())
    throw std::invalid_argument(fmt::format(
        "push plan: runs of 2^{} elements are not possible for this permutation over 2^{} ranks of 2^{} elements: "
        "at most 2^{} (the dimension of local ∩ A·local, at least m − g = {})",
        line_bits, g, m, u.dim(), m - g));
  PushPlan p;
  p.bmmc = bmmc;
  p.rank_bits = g;
  p.local_bits = m;
  p.elem_bytes = elem_bytes;
  p.line_bits = line_bits;
  const BitMatrix q = choose_finish(u, m, line_bits);
  p.finish = Bmmc(q);
  const BitMatrix qinv = embed_local(q.inverse(), n);
  p.push = Bmmc(qinv * bmmc.matrix(), qinv.apply(bmmc.complement()));
  // The property the pass relies on, checked rather than assumed: F⁻¹ of every low output bit is local.
  const BitMatrix finv = p.push.matrix().inverse();
  for (int j = 0; j < line_bits; ++j)
    if (finv.col(j) >> m)
      throw std::logic_error(fmt::format("push plan: F⁻¹·e_{} = {:#x} leaves the local bits", j, finv.col(j)));
  return p;
}

PushPlan make_gpu_push_plan(const Bmmc& bmmc, int rank_bits, int elem_bytes, int vector_bits) {
  check_dist_geometry(bmmc, rank_bits, elem_bytes);
  const int k = vector_bits >= 0 ? vector_bits : default_vector_bits(elem_bytes);
  return make_push_plan(bmmc, rank_bits, elem_bytes, std::min(kLaneBits + k, max_push_line_bits(bmmc, rank_bits)));
}

std::string describe(const PushPlan& p) {
  std::string s = fmt::format("push plan: N = {} bits over {} ranks of 2^{} elements ({} bytes each)\n", p.n(),
                              p.ranks(), p.local_bits, p.elem_bytes);
  s += fmt::format(" runs of 2^{} elements cross to their destination rank whole; {}\n", p.line_bits,
                   p.one_pass() ? "one pass (Q = I): the push writes the final positions"
                                : "two passes: push into each rank's scratch, then Q locally (scratch → out)");
  s += " push F:\n" + p.push.to_string() + "\n";
  if (!p.one_pass()) s += " finish Q:\n" + p.finish.to_string() + "\n";
  return s;
}

std::vector<std::uint64_t> push_launch_order(const TilePass& p, int m) {
  const int b = static_cast<int>(p.block_positions.size()), g = p.n() - m, low = b - g;
  if (g < 0 || low < 0) throw std::invalid_argument(fmt::format("push launch order: {} local bits of a pass of {} block bits "
                                                                "on {} bits", m, b, p.n()));
  // A basis of the destination-rank changes, kept reduced by leading bit: a block bit whose change is new
  // modulo the earlier ones takes the next launch bit.
  std::vector<BitVec> by_lead(64, 0);
  std::vector<std::uint64_t> cols;
  std::vector<bool> taken(static_cast<std::size_t>(low), false);
  for (int i = 0; i < low; ++i) {
    BitVec v = p.block_images[i] >> m;
    while (v && by_lead[63 - __builtin_clzll(v)]) v ^= by_lead[63 - __builtin_clzll(v)];
    if (!v) continue;
    by_lead[63 - __builtin_clzll(v)] = v;
    cols.push_back(std::uint64_t{1} << i);
    taken[i] = true;
  }
  for (int i = 0; i < b; ++i)
    if (i >= low || !taken[i]) cols.push_back(std::uint64_t{1} << i);
  for (int i = 0; i < b; ++i)
    if (cols[i] != std::uint64_t{1} << i) return cols;
  return {};
}

}  // namespace bmmc
