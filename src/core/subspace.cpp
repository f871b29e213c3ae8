#include "bmmc/core/subspace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace bmmc {

namespace {
int lowest_bit(BitVec v) { return __builtin_ctzll(v); }
}  // namespace

Subspace::Subspace(int n) : n_(n) {
  if (n < 0 || n > 64) throw std::invalid_argument(fmt::format("subspace dimension n must be 0..64, got {}", n));
}

Subspace Subspace::span(int n, const std::vector<BitVec>& vectors) {
  Subspace s(n);
  for (BitVec v : vectors) {
    if (v & ~low_mask(n))
      throw std::invalid_argument(fmt::format("vector {:#x} has bits at or above n = {}", v, n));
    s.insert(v);
  }
  return s;
}

Subspace Subspace::low_bits(int n, int k) {
  if (k < 0 || k > n) throw std::invalid_argument(fmt::format("low_bits needs 0 <= k <= n, got k = {}, n = {}", k, n));
  Subspace s(n);
  for (int i = 0; i < k; ++i) s.basis_.push_back(BitVec{1} << i);
  s.pivots_ = low_mask(k);
  return s;
}

BitVec Subspace::reduce(BitVec v) const noexcept {
  for (BitVec b : basis_)
    if (v & (b & -b)) v ^= b;
  return v;
}

bool Subspace::insert(BitVec v) {
  v = reduce(v);
  if (v == 0) return false;
  const BitVec p = v & -v;
  // Keep the basis reduced: clear the new pivot from the others.
  for (BitVec& b : basis_)
    if (b & p) b ^= v;
  basis_.insert(std::lower_bound(basis_.begin(), basis_.end(), v,
                                 [](BitVec a, BitVec b) { return lowest_bit(a) < lowest_bit(b); }),
                v);
  pivots_ |= p;
  return true;
}

Subspace Subspace::image(const BitMatrix& m) const {
  if (m.cols() != n_)
    throw std::invalid_argument(fmt::format("cannot map a subspace of F2^{} by a {}x{} matrix", n_, m.rows(), m.cols()));
  Subspace s(m.rows());
  for (BitVec b : basis_) s.insert(m.apply(b));
  return s;
}

Subspace Subspace::annihilator() const {
  // For the reduced basis, each non-pivot position j gives the dual vector e_j + sum over basis vectors b
  // with bit j set of e_{pivot(b)}: it is orthogonal to every b.
  Subspace s(n_);
  for (int j = 0; j < n_; ++j) {
    if ((pivots_ >> j) & 1) continue;
    BitVec w = BitVec{1} << j;
    for (BitVec b : basis_)
      if ((b >> j) & 1) w |= b & -b;
    s.insert(w);
  }
  return s;
}

std::vector<int> Subspace::coordinate_complement() const {
  std::vector<int> out;
  for (int j = 0; j < n_; ++j)
    if (!((pivots_ >> j) & 1)) out.push_back(j);
  return out;
}

Subspace operator+(const Subspace& a, const Subspace& b) {
  if (a.n_ != b.n_) throw std::invalid_argument(fmt::format("cannot add subspaces of F2^{} and F2^{}", a.n_, b.n_));
  Subspace s = a;
  for (BitVec v : b.basis_) s.insert(v);
  return s;
}

Subspace intersect(const Subspace& a, const Subspace& b) {
  if (a.n_ != b.n_)
    throw std::invalid_argument(fmt::format("cannot intersect subspaces of F2^{} and F2^{}", a.n_, b.n_));
  // (A ∩ B)^⊥ = A^⊥ + B^⊥.
  return (a.annihilator() + b.annihilator()).annihilator();
}

std::optional<BitVec> coordinates(const std::vector<BitVec>& basis, BitVec v) {
  if (basis.size() > 64) throw std::invalid_argument("at most 64 basis vectors");
  // Eliminate on (vector, coefficient-tag) pairs.
  std::vector<std::pair<BitVec, BitVec>> rows;
  for (size_t i = 0; i < basis.size(); ++i) {
    BitVec x = basis[i], tag = BitVec{1} << i;
    for (auto& [r, t] : rows)
      if (x & (r & -r)) { x ^= r; tag ^= t; }
    if (x == 0)
      throw std::invalid_argument(fmt::format("basis vector {} = {:#x} depends on the earlier ones", i, basis[i]));
    for (auto& [r, t] : rows)
      if (r & (x & -x)) { r ^= x; t ^= tag; }
    rows.emplace_back(x, tag);
  }
  BitVec k = 0;
  for (auto& [r, t] : rows)
    if (v & (r & -r)) { v ^= r; k ^= t; }
  if (v != 0) return std::nullopt;
  return k;
}

}  // namespace bmmc
