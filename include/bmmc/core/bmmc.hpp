// The Bmmc type: an affine permutation y = A·x ⊕ c of the indices of an array of 2^n elements.
//
// The element at input index x goes to output index y = A·x ⊕ c, i.e. out[A x ^ c] = in[x] (docs/DESIGN.md §1).
// Composition is function composition: compose(f, g) = f ∘ g applies g first, and
// (A, c) ∘ (B, d) = (A·B, A·d ⊕ c). Classification follows the paper: BP (permutation matrix, c = 0),
// BPC (permutation matrix, any c), tiled (the §5.1 condition for a tile of width t), general.
// Example: the bit-reverse of n = 4 maps 7 = 0b0111 to 14 = 0b1110.
#pragma once

#include <cstddef>
#include <optional>  // also declares std::hash, specialised below
#include <string>
#include <vector>

#include "bmmc/core/bit_matrix.hpp"

namespace bmmc {

enum class BmmcClass { BP, BPC, Tiled, General };

/// "BP", "BPC", "tiled" or "general" — the names the CLI's --json output uses.
const char* to_string(BmmcClass c) noexcept;

class Bmmc {
 public:
  /// The identity on n = 0 bits (a single element); lets plans and containers default-construct.
  Bmmc() : Bmmc(BitMatrix()) {}
  /// Throws std::invalid_argument when A is not square, is singular, or c has bits at or above n.
  Bmmc(BitMatrix a, BitVec c = 0);

  int n() const noexcept { return a_.rows(); }
  const BitMatrix& matrix() const noexcept { return a_; }
  BitVec complement() const noexcept { return c_; }

  /// y = A·x ⊕ c.
  BitVec apply(BitVec x) const noexcept { return a_.apply(x) ^ c_; }
  Bmmc inverse() const;

  /// A = I and c = 0: every element stays where it is (what fusion cancels to and executors skip).
  bool is_identity() const { return c_ == 0 && a_ == BitMatrix::identity(n()); }
  bool is_bp() const { return c_ == 0 && a_.is_permutation(); }
  bool is_bpc() const { return a_.is_permutation(); }
  /// The paper's §5.1 condition: columns i_1..i_t of A whose top t rows form an invertible block and whose
  /// bottom n - t rows are zero. Returns those columns (ascending) or nothing; t > n is never tiled.
  std::optional<std::vector<int>> tiled_columns(int tile_bits) const;
  bool is_tiled(int tile_bits) const { return tiled_columns(tile_bits).has_value(); }
  /// BP, BPC, tiled (tile width `tile_bits`, 5 by default: 32-element tiles, plan.hpp's kLaneBits, which
  /// core cannot include) or general.
  BmmcClass classify(int tile_bits = 5) const;

  friend bool operator==(const Bmmc& a, const Bmmc& b) { return a.a_ == b.a_ && a.c_ == b.c_; }

  /// Matrix in the docs/DESIGN.md text format followed by "c = 0x…".
  std::string to_string() const;

 private:
  BitMatrix a_;
  BitVec c_;
};

/// f ∘ g: apply g first, then f. Both must have the same n.
Bmmc compose(const Bmmc& f, const Bmmc& g);
inline Bmmc operator*(const Bmmc& f, const Bmmc& g) { return compose(f, g); }

}  // namespace bmmc

/// Hash over n, the rows and c, consistent with ==: the one way a Bmmc becomes a hash key (plan caches, the
/// Python __hash__). Not stable across library versions; kernel caches on disk hash the generated source.
/// \cond STD_HASH_SPECIALISATION
template <>
struct std::hash<bmmc::Bmmc> {
  std::size_t operator()(const bmmc::Bmmc& b) const noexcept;
};
/// \endcond
