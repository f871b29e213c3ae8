#include "bmmc/core/bmmc.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace bmmc {

const char* to_string(BmmcClass c) noexcept {
  switch (c) {
    case BmmcClass::BP: return "BP";
    case BmmcClass::BPC: return "BPC";
    case BmmcClass::Tiled: return "tiled";
    case BmmcClass::General: return "general";
  }
  return "general";
}

Bmmc::Bmmc(BitMatrix a, BitVec c) : a_(std::move(a)), c_(c) {
  if (!a_.square())
    throw std::invalid_argument(
        fmt::format("a BMMC matrix must be square (n x n); got {}x{}", a_.rows(), a_.cols()));
  if (c_ & ~low_mask(a_.rows()))
    throw std::invalid_argument(fmt::format(
        "complement {:#x} has bits at or above n = {}; it must be below 2^{}", c_, a_.rows(), a_.rows()));
  if (!a_.invertible())
    throw std::invalid_argument(fmt::format(
        "the {}x{} matrix is singular (rank {} < {}), so it defines no permutation; a BMMC needs an "
        "invertible matrix",
        a_.rows(), a_.rows(), a_.rank(), a_.rows()));
}

Bmmc Bmmc::inverse() const {
  // x = A⁻¹·(y ⊕ c) = A⁻¹·y ⊕ A⁻¹·c.
  BitMatrix inv = a_.inverse();
  const BitVec d = inv.apply(c_);
  return Bmmc(std::move(inv), d);
}

std::optional<std::vector<int>> Bmmc::tiled_columns(int t) const {
  const int n = this->n();
  if (t < 0 || t > n) return std::nullopt;
  // Columns i with A·e_i inside L_t = span(e_0..e_{t-1}) and A·span(e_i) = L_t exist exactly when
  // A⁻¹·L_t is spanned by t coordinate vectors; those are the columns.
  const BitMatrix inv = a_.inverse();
  BitMatrix span(t, n);
  for (int j = 0; j < t; ++j) span.set_row(j, inv.col(j));
  const BitMatrix e = span.echelon();
  std::vector<int> cols;
  for (int j = 0; j < t; ++j) {
    const BitVec r = e.row(j);
    if (__builtin_popcountll(r) != 1) return std::nullopt;
    cols.push_back(__builtin_ctzll(r));
  }
  return cols;  // echelon() orders rows by pivot, so ascending
}

BmmcClass Bmmc::classify(int tile_bits) const {
  if (is_bp()) return BmmcClass::BP;
  if (is_bpc()) return BmmcClass::BPC;
  if (is_tiled(tile_bits < n() ? tile_bits : n())) return BmmcClass::Tiled;
  return BmmcClass::General;
}

std::string Bmmc::to_string() const { return a_.to_string() + fmt::format("c = {:#x}\n", c_); }

Bmmc compose(const Bmmc& f, const Bmmc& g) {
  if (f.n() != g.n())
    throw std::invalid_argument(
        fmt::format("cannot compose BMMCs of different sizes: n = {} and n = {}", f.n(), g.n()));
  return Bmmc(f.matrix() * g.matrix(), f.matrix().apply(g.complement()) ^ f.complement());
}

}  // namespace bmmc

std::size_t std::hash<bmmc::Bmmc>::operator()(const bmmc::Bmmc& b) const noexcept {
  // splitmix64-style mixing of each word: rows that differ in one bit land far apart.
  auto mix = [](std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 29);
  };
  std::uint64_t h = mix(static_cast<std::uint64_t>(b.n()), b.complement());
  for (int i = 0; i < b.n(); ++i) h = mix(h, b.matrix().row(i));
  return static_cast<std::size_t>(h);
}
