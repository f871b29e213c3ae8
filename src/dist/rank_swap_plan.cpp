// The in-place plan across ranks (see rank_swap_plan.hpp and docs/DESIGN.md §9.6).
#include "bmmc/dist/rank_swap_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "bmmc/core/involution.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {

namespace {

// log2 of the elements in a 16-byte vector.
int widest_vector_bits(int elem_bytes) { return std::countr_zero(16u / static_cast<unsigned>(elem_bytes)); }

// Widest vector (≤ 16 bytes, ≤ the rank's size) whose run of 2^(k+5) elements f carries; k = 0 otherwise.
int vector_bits_for(const Bmmc& f, int m, int elem_bytes) {
  const int carried = carried_low_bits(f);
  for (int k = widest_vector_bits(elem_bytes); k > 0; --k)
    if (carried >= k + kLaneBits && k <= m) return k;
  return 0;
}

bool fixes_bit(const Bmmc& f, int bit) { return f.matrix().col(bit) == (BitVec{1} << bit); }

}  // namespace

int rank_swap_owner_bit(const Bmmc& direct, int m, int k) {
  for (int j = m - 1; j >= k + kLaneBits; --j)
    if (fixes_bit(direct, j)) return j;
  for (int j = std::min(m, k + kLaneBits) - 1; j >= k; --j)
    if (fixes_bit(direct, j)) return j;
  return m - 1 >= k ? m - 1 : -1;
}

RankSwapPlan make_rank_swap_plan(const Bmmc& f, int rank_bits, int elem_bytes) {
  check_dist_geometry(f, rank_bits, elem_bytes);
  if (!is_involution(f))
    throw std::invalid_argument(
        "in place across ranks runs involutions (f∘f = id: bit swaps, reversals, ...); this permutation is not one: "
        "permute out of place instead (a DistributedPermuter without in_place)");
  const int n = f.n(), g = rank_bits, m = n - g;
  RankSwapPlan p;
  p.bmmc = f;
  p.rank_bits = g;
  p.local_bits = m;
  p.elem_bytes = elem_bytes;
  p.conjugate = Bmmc(BitMatrix::identity(m));
  p.direct = f;
  const int want = std::min(kLaneBits + widest_vector_bits(elem_bytes), m);
  if (carried_low_bits(f) < want && f.is_bpc()) {
    // Swap each low bit f moves (below `want`) with a local bit ≥ want that f fixes and no one else took.
    std::vector<int> perm(m);
    for (int i = 0; i < m; ++i) perm[i] = i;
    int spare = want;
    auto fixed = [&](int bit) { return fixes_bit(f, bit); };
    for (int j = 0; j < want; ++j) {
      if (fixed(j)) continue;
      while (spare < m && !fixed(spare)) ++spare;
      if (spare >= m) break;  // not enough fixed high local bits: keep the vectors narrower
      std::swap(perm[j], perm[spare]);
      ++spare;
    }
    p.conjugate = bit_permutation(perm);
    std::vector<int> wide(n);
    for (int i = 0; i < n; ++i) wide[i] = i < m ? perm[i] : i;
    const Bmmc q = bit_permutation(wide);
    p.direct = q * f * q;
  }
  p.vector_bits = vector_bits_for(p.direct, m, elem_bytes);
  p.owner_bit = rank_swap_owner_bit(p.direct, m, p.vector_bits);
  if (!is_involution(p.direct)) throw std::logic_error("rank swap plan: the conjugate is not an involution");
  return p;
}

std::string describe(const RankSwapPlan& p) {
  std::string s = fmt::format("in place across {} ranks of 2^{} elements ({} bytes each): pairs of 2^{}-element vectors "
                              "swap directly{}; the pair {{lo, hi}} is swapped by the thread of {}\n",
                              p.ranks(), p.local_bits, p.elem_bytes, p.vector_bits,
                              p.conjugated() ? ", between a local swap Q on every rank before and after" : "",
                              p.owner_bit >= 0 ? fmt::format("lo if bit {} of lo is 0, else of hi", p.owner_bit)
                                               : std::string("lo"));
  s += " across ranks f':\n" + p.direct.to_string() + "\n";
  if (p.conjugated()) s += " local Q:\n" + p.conjugate.to_string() + "\n";
  return s;
}

}  // namespace bmmc
