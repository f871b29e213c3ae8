// Internal to the combinators: removing and inserting index bits, the two halves of "a sub-array's index
// inside the whole array". remove_bit gives the parm sub-index (the interpreter); deposit_around turns a
// leaf chunk's representative number into its index (LeafGeometry, the CPU leaf passes). The tests include
// this header to check both against their definitions.
#pragma once

#include "bmmc/core/bit_matrix.hpp"

namespace bmmc {

/// i with bit `bit` removed (the bits above it move down one): the parm sub-index.
constexpr BitVec remove_bit(BitVec i, int bit) noexcept {
  return (i & low_mask(bit)) | ((i >> (bit + 1)) << bit);
}

/// t with zeros inserted at the ascending pivot positions.
inline BitVec deposit_around(BitVec t, const int* pivots, int count) {
  for (int i = 0; i < count; ++i) {
    const int p = pivots[i];
    t = (t & low_mask(p)) | ((t >> p) << (p + 1));
  }
  return t;
}

}  // namespace bmmc
