// DigitMap: validation, the index arithmetic, inverse and composition, the canonical form and the Bmmc face.
//
// Per output axis the coordinate map is x ↦ u·x + s (mod d) with u = ±1: no flip is u = 1, s = roll; a flip is
// u = −1, s = d − 1 + roll. Inverse and composition work in that form (two units multiply, offsets combine
// affinely) and convert back, so every result is stored normalised (flip 0/1, roll in [0, d)) and == compares maps
// field by field.
#include "bmmc/core/digit_map.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "bmmc/core/named.hpp"

namespace bmmc {
namespace {

std::string list_to_string(const std::vector<int>& v) { return fmt::format("{}", fmt::join(v, ",")); }

// (a + b) mod d for a, b in [0, d), d ≤ 2^62: no overflow, no division.
Extent add_mod(Extent a, Extent b, Extent d) {
  const Extent s = a + b;
  return s >= d ? s - d : s;
}
Extent neg_mod(Extent a, Extent d) { return a == 0 ? 0 : d - a; }
// Any integer reduced into [0, d).
Extent reduce(Extent r, Extent d) {
  const Extent m = r % d;
  return m < 0 ? m + d : m;
}

// One output axis's coordinate map as x ↦ u·x + s (mod d), and back.
struct Affine {
  bool negate;  // u = −1
  Extent s;
};
Affine to_affine(std::uint8_t flip, Extent roll, Extent d) {
  return flip ? Affine{true, add_mod(d - 1, roll, d)} : Affine{false, roll};
}
// Returns {flip, roll}.
std::pair<std::uint8_t, Extent> from_affine(Affine a, Extent d) {
  return a.negate ? std::pair<std::uint8_t, Extent>{1, add_mod(a.s, 1 % d, d)} : std::pair<std::uint8_t, Extent>{0, a.s};
}

void check_shape(const std::vector<Extent>& shape) {
  Extent total = 1;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] < 1)
      throw std::invalid_argument(fmt::format("extent {} of the shape {} is {}; every extent must be at least 1", a,
                                              fmt::join(shape, "x"), shape[a]));
    if (__builtin_mul_overflow(total, shape[a], &total) || total > kMaxDigitElements)
      throw std::invalid_argument(fmt::format("the shape {} has more than 2^62 elements (the most a DigitMap takes)",
                                              fmt::join(shape, "x")));
  }
}

// Whether the coordinate map of output axis j is the identity on its extent d (on d = 2 a flip is a roll by 1,
// so flip + roll 1 is the identity there).
bool trivial_axis(std::uint8_t flip, Extent roll, Extent d) {
  return d == 1 || (!flip && roll == 0) || (d == 2 && flip && roll == 1);
}

// Small-rank scratch without a heap allocation in apply_linear.
template <class F>
Extent with_digits(int k, F&& f) {
  if (k <= 64) {
    std::array<Extent, 64> buf;
    return f(buf.data());
  }
  std::vector<Extent> buf(static_cast<std::size_t>(k));
  return f(buf.data());
}

}  // namespace

DigitMap::DigitMap(std::vector<Extent> shape, std::vector<int> axes, std::vector<std::uint8_t> flip,
                   std::vector<Extent> roll)
    : shape_(std::move(shape)), axes_(std::move(axes)), flip_(std::move(flip)), roll_(std::move(roll)) {
  const std::size_t k = shape_.size();
  check_shape(shape_);
  if (axes_.size() != k)
    throw std::invalid_argument(fmt::format("axes has {} entries but the shape {} has rank {}; axes must be a "
                                            "permutation of 0..{}",
                                            axes_.size(), shape_to_string(shape_), k, static_cast<int>(k) - 1));
  std::vector<bool> used(k, false);
  for (std::size_t j = 0; j < k; ++j) {
    const int a = axes_[j];
    if (a < 0 || static_cast<std::size_t>(a) >= k || used[static_cast<std::size_t>(a)])
      throw std::invalid_argument(fmt::format("axes ({}) is not a permutation of 0..{}: entry {} is {}{}",
                                              list_to_string(axes_), static_cast<int>(k) - 1, j, a,
                                              (a >= 0 && static_cast<std::size_t>(a) < k) ? " again" : ", out of range"));
    used[static_cast<std::size_t>(a)] = true;
  }
  if (flip_.empty()) flip_.assign(k, 0);
  if (flip_.size() != k)
    throw std::invalid_argument(fmt::format("flip has {} entries but the shape {} has rank {}; give one per output "
                                            "axis or none",
                                            flip_.size(), shape_to_string(shape_), k));
  for (auto& f : flip_) f = f ? 1 : 0;
  if (roll_.empty()) roll_.assign(k, 0);
  if (roll_.size() != k)
    throw std::invalid_argument(fmt::format("roll has {} entries but the shape {} has rank {}; give one shift per "
                                            "output axis or none",
                                            roll_.size(), shape_to_string(shape_), k));
  for (std::size_t j = 0; j < k; ++j) roll_[j] = reduce(roll_[j], shape_[static_cast<std::size_t>(axes_[j])]);
}

DigitMap DigitMap::identity(std::vector<Extent> shape) {
  std::vector<int> axes(shape.size());
  std::iota(axes.begin(), axes.end(), 0);
  return DigitMap(std::move(shape), std::move(axes));
}

DigitMap DigitMap::transpose(std::vector<Extent> shape, std::vector<int> axes) {
  if (axes.empty() && !shape.empty()) {
    axes.resize(shape.size());
    for (std::size_t j = 0; j < axes.size(); ++j) axes[j] = static_cast<int>(axes.size() - 1 - j);
  }
  return DigitMap(std::move(shape), std::move(axes));
}

DigitMap DigitMap::flip(std::vector<Extent> shape, const std::vector<int>& flip_axes) {
  const int k = static_cast<int>(shape.size());
  std::vector<std::uint8_t> flip(static_cast<std::size_t>(k), 0);
  for (const int given : flip_axes) {
    const int a = given < 0 ? given + k : given;
    if (a < 0 || a >= k)
      throw std::invalid_argument(
          fmt::format("flip axis {} is out of range for the rank-{} shape {} (expected -{}..{})", given, k,
                      shape_to_string(shape), k, k - 1));
    if (flip[static_cast<std::size_t>(a)])
      throw std::invalid_argument(fmt::format("flip names axis {} twice (flip axes: {}); each axis at most once", a,
                                              list_to_string(flip_axes)));
    flip[static_cast<std::size_t>(a)] = 1;
  }
  std::vector<int> axes(shape.size());
  std::iota(axes.begin(), axes.end(), 0);
  return DigitMap(std::move(shape), std::move(axes), std::move(flip));
}

DigitMap DigitMap::roll(std::vector<Extent> shape, std::vector<Extent> shifts) {
  if (shifts.size() != shape.size())
    throw std::invalid_argument(fmt::format("roll has {} shifts but the shape {} has rank {}; give one per axis",
                                            shifts.size(), shape_to_string(shape), shape.size()));
  std::vector<int> axes(shape.size());
  std::iota(axes.begin(), axes.end(), 0);
  return DigitMap(std::move(shape), std::move(axes), {}, std::move(shifts));
}

std::vector<Extent> DigitMap::out_shape() const {
  std::vector<Extent> out(shape_.size());
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = shape_[static_cast<std::size_t>(axes_[j])];
  return out;
}

Extent DigitMap::size() const noexcept {
  Extent n = 1;
  for (const Extent d : shape_) n *= d;
  return n;
}

std::vector<Extent> DigitMap::apply(const std::vector<Extent>& in) const {
  std::vector<Extent> out(shape_.size());
  for (std::size_t j = 0; j < out.size(); ++j) {
    const auto a = static_cast<std::size_t>(axes_[j]);
    const Extent d = shape_[a];
    const Extent g = flip_[j] ? d - 1 - in[a] : in[a];
    out[j] = add_mod(g, roll_[j], d);
  }
  return out;
}

Extent DigitMap::apply_linear(Extent x) const {
  const int k = rank();
  return with_digits(k, [&](Extent* digit) {
    for (int a = k - 1; a >= 0; --a) {  // one divmod per axis, lowest digit first
      const Extent d = shape_[static_cast<std::size_t>(a)];
      const Extent q = x / d;
      digit[a] = x - q * d;
      x = q;
    }
    Extent y = 0;
    for (int j = 0; j < k; ++j) {
      const auto a = static_cast<std::size_t>(axes_[static_cast<std::size_t>(j)]);
      const Extent d = shape_[a];
      const Extent g = flip_[static_cast<std::size_t>(j)] ? d - 1 - digit[a] : digit[a];
      y = y * d + add_mod(g, roll_[static_cast<std::size_t>(j)], d);
    }
    return y;
  });
}

DigitMap DigitMap::inverse() const {
  const std::size_t k = shape_.size();
  std::vector<int> axes(k);
  std::vector<std::uint8_t> flip(k);
  std::vector<Extent> roll(k);
  // Output axis j of this map takes input axis a; the inverse's output axis a takes its input axis j.
  for (std::size_t j = 0; j < k; ++j) {
    const auto a = static_cast<std::size_t>(axes_[j]);
    const Extent d = shape_[a];
    const Affine f = to_affine(flip_[j], roll_[j], d);
    // x ↦ u·x + s inverts to x ↦ u·x − u·s.
    const Affine inv{f.negate, f.negate ? f.s : neg_mod(f.s, d)};
    axes[a] = static_cast<int>(j);
    std::tie(flip[a], roll[a]) = from_affine(inv, d);
  }
  return DigitMap(out_shape(), std::move(axes), std::move(flip), std::move(roll));
}

DigitMap compose(const DigitMap& f, const DigitMap& g) {
  if (f.shape() != g.out_shape())
    throw std::invalid_argument(fmt::format("compose(f, g): f takes the shape {} but g produces {}; f's shape must "
                                            "equal g's output shape",
                                            shape_to_string(f.shape()), shape_to_string(g.out_shape())));
  const std::size_t k = f.shape().size();
  std::vector<int> axes(k);
  std::vector<std::uint8_t> flip(k);
  std::vector<Extent> roll(k);
  for (std::size_t j = 0; j < k; ++j) {
    const auto b = static_cast<std::size_t>(f.axes()[j]);  // f's output axis j reads g's output axis b
    const Extent d = f.shape()[b];
    const Affine af = to_affine(f.flips()[j], f.rolls()[j], d);
    const Affine ag = to_affine(g.flips()[b], g.rolls()[b], d);
    // u_f·(u_g·x + s_g) + s_f.
    const Affine c{af.negate != ag.negate, add_mod(af.negate ? neg_mod(ag.s, d) : ag.s, af.s, d)};
    axes[j] = g.axes()[b];
    std::tie(flip[j], roll[j]) = from_affine(c, d);
  }
  return DigitMap(g.shape(), std::move(axes), std::move(flip), std::move(roll));
}

DigitMap DigitMap::canonical() const {
  // Work on parallel lists indexed by output axis j: the input axis (renumbered as axes drop out), its extent,
  // the flip and the roll.
  std::vector<Extent> shape;
  std::vector<int> in_index(shape_.size(), -1);
  for (std::size_t a = 0; a < shape_.size(); ++a)
    if (shape_[a] > 1) {
      in_index[a] = static_cast<int>(shape.size());
      shape.push_back(shape_[a]);
    }
  std::vector<int> axes;
  std::vector<std::uint8_t> flip;
  std::vector<Extent> roll;
  for (std::size_t j = 0; j < axes_.size(); ++j) {
    const int a = in_index[static_cast<std::size_t>(axes_[j])];
    if (a < 0) continue;
    // On an extent of 2 a flip is a roll by 1: flip + roll 1 is no change at all.
    const bool cancels = shape[static_cast<std::size_t>(a)] == 2 && flip_[j] && roll_[j] == 1;
    axes.push_back(a);
    flip.push_back(cancels ? 0 : flip_[j]);
    roll.push_back(cancels ? 0 : roll_[j]);
  }
  // Fuse input axes a, a+1 that sit at output positions j, j+1 with equal flips and no roll on the inner one.
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t j = 0; j + 1 < axes.size(); ++j) {
      const int a = axes[j];
      if (axes[j + 1] != a + 1 || flip[j] != flip[j + 1] || roll[j + 1] != 0) continue;
      const Extent inner = shape[static_cast<std::size_t>(a + 1)];
      shape[static_cast<std::size_t>(a)] *= inner;
      roll[j] *= inner;
      shape.erase(shape.begin() + a + 1);
      axes.erase(axes.begin() + static_cast<std::ptrdiff_t>(j + 1));
      flip.erase(flip.begin() + static_cast<std::ptrdiff_t>(j + 1));
      roll.erase(roll.begin() + static_cast<std::ptrdiff_t>(j + 1));
      for (int& b : axes)
        if (b > a) --b;
      changed = true;
      break;
    }
  }
  return DigitMap(std::move(shape), std::move(axes), std::move(flip), std::move(roll));
}

std::optional<Bmmc> DigitMap::as_bmmc() const {
  const DigitMap c = canonical();
  const std::size_t k = c.shape_.size();
  std::vector<int> bits(k);
  for (std::size_t a = 0; a < k; ++a) {
    const Extent d = c.shape_[a];
    if (d & (d - 1)) return std::nullopt;
    bits[a] = __builtin_ctzll(static_cast<unsigned long long>(d));
  }
  for (std::size_t j = 0; j < k; ++j) {
    const Extent d = c.shape_[static_cast<std::size_t>(c.axes_[j])];
    if (c.roll_[j] != 0 && c.roll_[j] != d / 2) return std::nullopt;
  }
  // C order: the last axis holds the lowest bits, on both sides.
  std::vector<int> in_off(k), out_off(k);
  int n = 0;
  for (std::size_t a = k; a-- > 0;) in_off[a] = n, n += bits[a];
  for (std::size_t j = k, off = 0; j-- > 0;) {
    out_off[j] = static_cast<int>(off);
    off += static_cast<std::size_t>(bits[static_cast<std::size_t>(c.axes_[j])]);
  }
  std::vector<int> p(static_cast<std::size_t>(n));
  BitVec comp = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const auto a = static_cast<std::size_t>(c.axes_[j]);
    for (int b = 0; b < bits[a]; ++b) p[static_cast<std::size_t>(in_off[a] + b)] = out_off[j] + b;
    // A flip complements every bit of the axis, a roll by d/2 its top bit; both together XOR.
    if (c.flip_[j]) comp ^= low_mask(bits[a]) << out_off[j];
    if (c.roll_[j]) comp ^= BitVec{1} << (out_off[j] + bits[a] - 1);
  }
  return Bmmc(bit_permutation(p).matrix(), comp);
}

bool DigitMap::is_identity() const {
  int last = -1;
  for (std::size_t j = 0; j < axes_.size(); ++j) {
    const int a = axes_[j];
    const Extent d = shape_[static_cast<std::size_t>(a)];
    if (d == 1) continue;
    if (a < last || !trivial_axis(flip_[j], roll_[j], d)) return false;
    last = a;
  }
  return true;
}

bool DigitMap::is_involution() const {
  if (const auto b = as_bmmc()) return compose(*b, *b).is_identity();
  const DigitMap c = canonical();
  // Maps whose canonical input and output shapes differ are answered "no" unless they are Bmmcs (above).
  if (c.shape_ != c.out_shape()) return false;
  return compose(c, c).is_identity();
}

std::string DigitMap::to_string() const {
  const std::size_t k = shape_.size();
  std::vector<std::string> terms;
  if (std::any_of(roll_.begin(), roll_.end(), [](Extent r) { return r != 0; }))
    terms.push_back(fmt::format("roll:{}", fmt::join(roll_, ",")));
  std::vector<int> flipped;
  for (std::size_t j = 0; j < k; ++j)
    if (flip_[j]) flipped.push_back(static_cast<int>(j));
  if (!flipped.empty()) terms.push_back("flip:" + list_to_string(flipped));
  bool plain = true;
  for (std::size_t j = 0; j < k; ++j) plain = plain && axes_[j] == static_cast<int>(j);
  if (!plain) terms.push_back("axes:" + list_to_string(axes_));
  if (terms.empty()) return "identity";
  return fmt::format("{}", fmt::join(terms, "*"));
}

std::string shape_to_string(const std::vector<Extent>& shape) {
  if (shape.empty()) return "scalar";
  return fmt::format("{}", fmt::join(shape, "x"));
}

}  // namespace bmmc

std::size_t std::hash<bmmc::DigitMap>::operator()(const bmmc::DigitMap& m) const noexcept {
  std::size_t h = std::hash<std::size_t>{}(m.shape().size());
  const auto mix = [&h](std::uint64_t v) { h ^= std::hash<std::uint64_t>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (std::size_t j = 0; j < m.shape().size(); ++j) {
    mix(static_cast<std::uint64_t>(m.shape()[j]));
    mix(static_cast<std::uint64_t>(m.axes()[j]));
    mix(m.flips()[j]);
    mix(static_cast<std::uint64_t>(m.rolls()[j]));
  }
  return h;
}
