// Subspaces of F2^n: span, sum, intersection, annihilator, coordinates and coordinate complements.
//
// A Subspace keeps a reduced echelon basis whose pivot of each vector is its LOWEST set bit, sorted by
// pivot, and no other basis vector has that bit set. So "reduce v" (clear every pivot bit of v by adding
// basis vectors) is a canonical representative of v modulo the subspace, and the one-pass planner
// (docs/DESIGN.md §4) relies on this: for a subspace V ⊇ L = span(e_0..e_{s-1}) the basis is e_0..e_{s-1}
// followed by vectors whose low s bits are clear. Example: span{0b110, 0b011} in F2^3 has basis
// {0b101, 0b110} with pivots 0 and 1; its coordinate complement is {e_2}.
#pragma once

#include <optional>
#include <vector>

#include "bmmc/core/bit_matrix.hpp"

namespace bmmc {

class Subspace {
 public:
  /// The zero subspace of F2^n.
  explicit Subspace(int n = 0);
  /// span(vectors) in F2^n; vectors with bits at or above n are an error.
  static Subspace span(int n, const std::vector<BitVec>& vectors);
  /// span(e_0 .. e_{k-1}).
  static Subspace low_bits(int n, int k);
  static Subspace whole(int n) { return low_bits(n, n); }

  int n() const noexcept { return n_; }
  int dim() const noexcept { return static_cast<int>(basis_.size()); }
  /// Reduced echelon basis, sorted by pivot (lowest set bit).
  const std::vector<BitVec>& basis() const noexcept { return basis_; }
  /// Bitmask of the pivot positions.
  BitVec pivots() const noexcept { return pivots_; }

  /// v with every pivot bit cleared by adding basis vectors: zero exactly when v is in the subspace.
  BitVec reduce(BitVec v) const noexcept;
  bool contains(BitVec v) const noexcept { return reduce(v) == 0; }
  /// Adds v; returns false when v was already inside.
  bool insert(BitVec v);

  /// Subspace spanned by the columns of m·(this subspace): image under a linear map.
  Subspace image(const BitMatrix& m) const;
  /// {w : <w, v> = 0 for every v in the subspace}.
  Subspace annihilator() const;
  /// Coordinate directions e_j for j not a pivot: together with this subspace they span F2^n and the sum
  /// is direct (every x = w ⊕ v uniquely, w supported on the complement's positions).
  std::vector<int> coordinate_complement() const;

  friend Subspace operator+(const Subspace& a, const Subspace& b);  // sum
  friend Subspace intersect(const Subspace& a, const Subspace& b);
  friend bool operator==(const Subspace& a, const Subspace& b) {
    return a.n_ == b.n_ && a.basis_ == b.basis_;
  }

 private:
  int n_;
  std::vector<BitVec> basis_;
  BitVec pivots_ = 0;
};

/// Coefficients k with v = XOR of basis[i] for the set bits i of k, or nothing when v is outside their
/// span. `basis` must be linearly independent (checked: std::invalid_argument otherwise).
std::optional<BitVec> coordinates(const std::vector<BitVec>& basis, BitVec v);

}  // namespace bmmc
