// The bytes an in-place permutation must move (see moved_bytes.hpp).
#include "bmmc/plan/moved_bytes.hpp"

#include <algorithm>
#include <bit>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/core/subspace.hpp"

namespace bmmc {

namespace {

// The bound's frame after validation: the sector-index bits k (a sector holds the 2^k elements that agree above
// bit k; k = n when the whole array fits in one sector) and the empty count.
struct Frame {
  int k = 0;
  MovedBytes none;
};

Frame frame(const Bmmc& f, int eb, BitVec mask_bits, BitVec mask_value) {
  const std::uint64_t total = array_bytes(f.n(), eb);  // the element size and n, checked
  check_inplace_mask(f, mask_bits, mask_value);
  const int k = std::min(f.n(), std::countr_zero(static_cast<unsigned>(kSectorBytes / eb)));
  return {k, {0, (std::uint64_t{1} << k) * static_cast<std::uint64_t>(eb), total}};
}

// Sector-index positions outside the mask: each sector with matching elements is one choice of these bits.
int free_sector_bits(int n, int k, BitVec mask_bits) {
  return std::popcount(low_mask(n) & ~low_mask(k) & ~mask_bits);
}

}  // namespace

MovedBytes moved_bytes(const Bmmc& f, int eb, BitVec mask_bits, BitVec mask_value) {
  const Frame fr = frame(f, eb, mask_bits, mask_value);
  const int n = f.n(), k = fr.k;
  const BitMatrix& a = f.matrix();
  // x moves iff M·x ≠ c with M = A ⊕ I. A sector's matching elements are x = h ⊕ mask_value ⊕ l, with h on the
  // free sector-index bits and l on the free low bits; it is untouched iff M·l = 0 for every l (M's free low
  // columns are zero) and M·h = c ⊕ M·mask_value: 2^(free − rank) solutions h when consistent, none otherwise.
  const int free = free_sector_bits(n, k, mask_bits);
  MovedBytes r = fr.none;
  r.sectors = std::uint64_t{1} << free;  // sectors holding matching elements
  for (int i = 0; i < k; ++i)
    if (!((mask_bits >> i) & 1) && (a.col(i) ^ (BitVec{1} << i)) != 0) return r;  // every one holds a mover
  std::vector<BitVec> cols;
  for (int i = k; i < n; ++i)
    if (!((mask_bits >> i) & 1)) cols.push_back(a.col(i) ^ (BitVec{1} << i));
  const Subspace image = Subspace::span(n, cols);
  const BitVec target = f.complement() ^ a.apply(mask_value) ^ mask_value;
  if (image.contains(target)) r.sectors -= std::uint64_t{1} << (free - image.dim());
  return r;
}

MovedBytes moved_bytes(const InPlacePlan& plan) {
  return moved_bytes(plan.bmmc, plan.elem_bytes, plan.mask_bits, plan.mask_value);
}

MovedBytes swap_moved_bytes(int n, const std::vector<std::pair<int, int>>& pairs, int eb, BitVec mask_bits,
                            BitVec mask_value) {
  const Bmmc f = swap_index_bits(n, pairs);  // the pairs, checked
  const Frame fr = frame(f, eb, mask_bits, mask_value);
  MovedBytes r = fr.none;
  if (pairs.empty()) return r;
  // The mask never names a swapped bit, so every pair's bits are free. A pair with a bit below k: each sector
  // holds elements on both sides of it. Otherwise a sector is untouched iff its bits agree on every pair.
  const int free = free_sector_bits(n, fr.k, mask_bits);
  r.sectors = std::uint64_t{1} << free;
  const bool inside = std::any_of(pairs.begin(), pairs.end(),
                                  [&](const std::pair<int, int>& p) { return std::min(p.first, p.second) < fr.k; });
  if (!inside) r.sectors -= std::uint64_t{1} << (free - static_cast<int>(pairs.size()));
  return r;
}

}  // namespace bmmc
