// DigitMap: the any-shape index class (docs/DESIGN.md §11) — an axis permutation of a C-order array of any
// extents, with a flip and a roll on each output axis.
//
// An index of shape (d_0, …, d_{k−1}) is a mixed-radix number (the last axis is the lowest digit). The map sends
// the element at input coordinates (i_0, …, i_{k−1}) to the output coordinates o with, for every output axis j,
//   a = axes[j],   g = flip[j] ? d_a − 1 − i_a : i_a,   o_j = (g + roll[j]) mod d_a,
// so out.shape[j] = shape[axes[j]], and the whole map is NumPy's
//   np.roll(np.flip(np.transpose(x, axes), flip_axes), roll, axis=range(k)).
// Composition and inverse stay in the class. The canonical form (canonical()) is the same map on the fewest
// axes: extent-1 axes dropped, and input axes a, a+1 fused where they stay adjacent and in order in the output
// with the same flip and no roll on the inner one (a roll of the outer one becomes a roll of the fused axis by
// s·d_{a+1}). A map whose canonical form is F2-affine on an array of 2^n elements (every extent a power of two,
// every roll 0 or half the extent) is a Bmmc (as_bmmc()): the bit planner runs it; every other map runs on the
// digit planner (plan/digit_plan.hpp). Worked examples (tested verbatim):
//   DigitMap::transpose({2, 3}, {1, 0}).apply_linear(1) == 2     (x[0][1] → out[1][0], out shape (3, 2))
//   DigitMap::flip({5}, {0}).apply_linear(0) == 4;  DigitMap::roll({5}, {2}).apply_linear(4) == 1
//   DigitMap::transpose({4, 8}, {1, 0}).as_bmmc() == axes_permutation({4, 8}, {1, 0})
// Errors: std::invalid_argument saying what was wrong and what was expected (axes that are not a permutation,
// a flip or roll of a missing axis, extents < 1, a shape whose element count overflows 2^62).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"

namespace bmmc {

using Extent = std::int64_t;

/// Largest element count a DigitMap's shape may have (so that any element size up to 16 B stays below 2^63 B
/// only where the caller also checks the byte count; the index arithmetic itself never overflows).
inline constexpr Extent kMaxDigitElements = Extent{1} << 62;

class DigitMap {
 public:
  /// The identity on a rank-0 array (one element).
  DigitMap() = default;
  /// The general map: out axis j takes input axis axes[j] (a permutation of 0..k−1), flipped when flip[j] is
  /// nonzero, rolled by roll[j] (any integer; reduced mod the extent). flip and roll are per OUTPUT axis and
  /// either empty (none) or of length k.
  DigitMap(std::vector<Extent> shape, std::vector<int> axes, std::vector<std::uint8_t> flip = {},
           std::vector<Extent> roll = {});

  static DigitMap identity(std::vector<Extent> shape);
  /// numpy.transpose(x, axes); empty axes reverses them (NumPy's default).
  static DigitMap transpose(std::vector<Extent> shape, std::vector<int> axes);
  /// numpy.flip(x, flip_axes): the listed axes reversed (each at most once; negative axes count from the end).
  static DigitMap flip(std::vector<Extent> shape, const std::vector<int>& flip_axes);
  /// numpy.roll(x, shifts, axis=range(k)): one shift per axis.
  static DigitMap roll(std::vector<Extent> shape, std::vector<Extent> shifts);

  int rank() const noexcept { return static_cast<int>(shape_.size()); }
  /// The input shape.
  const std::vector<Extent>& shape() const noexcept { return shape_; }
  /// The output shape: shape()[axes()[j]].
  std::vector<Extent> out_shape() const;
  const std::vector<int>& axes() const noexcept { return axes_; }
  /// Per output axis, 0 or 1 (always of length rank()).
  const std::vector<std::uint8_t>& flips() const noexcept { return flip_; }
  /// Per output axis, in [0, extent) (always of length rank()).
  const std::vector<Extent>& rolls() const noexcept { return roll_; }
  /// The number of elements (1 for rank 0; 0 when an extent is 0 is not representable: extents are ≥ 1).
  Extent size() const noexcept;

  /// The output coordinates of the input coordinates `in` (each in range; not checked).
  std::vector<Extent> apply(const std::vector<Extent>& in) const;
  /// The linear (C-order) output index of the linear input index x.
  Extent apply_linear(Extent x) const;

  DigitMap inverse() const;
  /// The same map on the fewest axes (see the header comment). canonical().apply_linear == apply_linear.
  DigitMap canonical() const;
  /// The map as a Bmmc on n = log2(size()) bits, when it is one (see the header comment); else nothing.
  std::optional<Bmmc> as_bmmc() const;

  /// Every linear index stays where it is (exact: extent-1 axes may move, and flip + roll 1 on extent 2 cancels).
  bool is_identity() const;
  /// f ∘ f = identity (such maps run in place in one pass). Exact for Bmmcs and for maps whose canonical input
  /// and output shapes agree; false for any other (a conservative answer: an involution between two different
  /// shapes, such as "roll:0,1,0*flip:0,2*axes:2,0,1" on 2x3x6, is not recognised).
  bool is_involution() const;

  /// The spec text of this map (parse_digit_spec(to_string(), shape()) == *this), e.g.
  /// "roll:0,5,0*flip:0*axes:2,0,1".
  std::string to_string() const;

  friend bool operator==(const DigitMap&, const DigitMap&) = default;

 private:
  std::vector<Extent> shape_;
  std::vector<int> axes_;
  std::vector<std::uint8_t> flip_;
  std::vector<Extent> roll_;
};

/// f ∘ g: apply g first, then f. Requires f.shape() == g.out_shape().
DigitMap compose(const DigitMap& f, const DigitMap& g);

/// "2x3x5" for {2, 3, 5}; "scalar" for rank 0.
std::string shape_to_string(const std::vector<Extent>& shape);

}  // namespace bmmc

/// \cond STD_HASH_SPECIALISATION
template <>
struct std::hash<bmmc::DigitMap> {
  std::size_t operator()(const bmmc::DigitMap& m) const noexcept;
};
/// \endcond
