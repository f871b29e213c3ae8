// The chunked in-place plan across ranks (see staged_swap_plan.hpp).
#include "bmmc/dist/staged_swap_plan.hpp"

#include <fmt/format.h>

#include <vector>

#include "bmmc/dist/dist_plan.hpp"

namespace bmmc {

namespace {

bool fixes(const Bmmc& f, int b) {
  const BitVec e = BitVec{1} << b;
  return f.matrix().col(b) == e && f.matrix().row(b) == e && !((f.complement() >> b) & 1);
}

}  // namespace

int fixed_top_local_bits(const Bmmc& f, int rank_bits) {
  const int m = f.n() - rank_bits;
  int t = 0;
  while (t < m && fixes(f, m - 1 - t)) ++t;
  return t;
}

std::optional<StagedSwapPlan> make_staged_swap_plan(const Bmmc& f, int rank_bits, int elem_bytes,
                                                    std::size_t max_chunk_bytes, int min_chunk_bits) {
  check_dist_geometry(f, rank_bits, elem_bytes);
  const int n = f.n(), m = n - rank_bits;
  const int fixed = fixed_top_local_bits(f, rank_bits);
  int t = 1;
  while (t < fixed && (std::size_t{1} << (m - t)) * static_cast<std::size_t>(elem_bytes) > max_chunk_bytes) ++t;
  if (fixed == 0 || m - t < min_chunk_bits) return std::nullopt;
  // f_c: delete rows and columns m − t … m − 1 (kept positions: local bits below the chunk bits, then the ranks').
  std::vector<int> kept;
  for (int i = 0; i < n; ++i)
    if (i < m - t || i >= m) kept.push_back(i);
  const int nc = static_cast<int>(kept.size());
  std::vector<BitVec> cols(nc);
  BitVec c = 0;
  for (int j = 0; j < nc; ++j) {
    const BitVec col = f.matrix().col(kept[j]);
    for (int i = 0; i < nc; ++i)
      if ((col >> kept[i]) & 1) cols[j] |= BitVec{1} << i;
    if ((f.complement() >> kept[j]) & 1) c |= BitVec{1} << j;
  }
  return StagedSwapPlan{f, rank_bits, m, elem_bytes, t, Bmmc(BitMatrix::from_cols(nc, cols), c)};
}

std::string describe(const StagedSwapPlan& p) {
  return fmt::format("in place across {} ranks in {} chunks of 2^{} elements ({} bytes each, the top {} local bits "
                     "fixed): each chunk pushed into staging and finished back in place by\n{}\n",
                     std::uint64_t{1} << p.rank_bits, p.chunks(), p.local_bits - p.chunk_bits, p.elem_bytes,
                     p.chunk_bits, p.chunk_map.to_string());
}

}  // namespace bmmc
