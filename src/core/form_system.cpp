// Linear systems of forms over F2 (see form_system.hpp): Gauss–Jordan on (form, right-hand sides) rows.
#include "bmmc/core/form_system.hpp"

#include <fmt/format.h>

#include <bit>
#include <stdexcept>

namespace bmmc {

bool FormSystem::add(BitVec form, std::uint64_t rhs) {
  BitVec f = form & support_;
  for (const Row& r : rows_)
    if (f & (r.form & -r.form)) {
      f ^= r.form;
      rhs ^= r.rhs;
    }
  if (f == 0) return rhs == 0;  // implied by the others, or contradicting one of the systems
  const BitVec pivot = f & -f;
  for (Row& r : rows_)
    if (r.form & pivot) {
      r.form ^= f;
      r.rhs ^= rhs;
    }
  rows_.push_back({f, rhs});
  return true;
}

BitVec FormSystem::solution(int k) const {
  if (k < 0 || k >= 64) throw std::invalid_argument(fmt::format("FormSystem::solution: system {}; expected 0..63", k));
  // Rows are fully reduced: with the free coordinates 0, row r reads only its pivot, so z_pivot = its value.
  BitVec z = 0;
  for (const Row& r : rows_)
    if ((r.rhs >> k) & 1) z |= r.form & -r.form;
  return z;
}

std::vector<BitVec> FormSystem::kernel() const {
  BitVec pivots = 0;
  for (const Row& r : rows_) pivots |= r.form & -r.form;
  std::vector<BitVec> out;
  for (BitVec free = support_ & ~pivots; free; free &= free - 1) {
    const BitVec m = free & -free;
    BitVec z = m;  // e_m, and each pivot whose row reads m, so every row sees two ones
    for (const Row& r : rows_)
      if (r.form & m) z |= r.form & -r.form;
    out.push_back(z);
  }
  return out;
}

}  // namespace bmmc
