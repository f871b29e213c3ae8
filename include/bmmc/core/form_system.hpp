// Systems of linear equations over F2 in the form "parity(form & z) = b": which vectors z a family of linear
// forms sends to given values. The fused kernel's planner (codegen/fused_plan.hpp) asks it for block origins
// and thread vectors on which the orientation forms of a pass's columns vanish. Up to 64 right-hand sides are
// solved at once (bit k of `rhs` is system k's value), all with the same forms: an equation is taken only when
// it contradicts none of them.
//
// Worked example, z in F2^3 (support 0b111): add(0b011, 1) says z_0 ⊕ z_1 = 1, add(0b110, 0) says z_1 = z_2.
// The solution with the free coordinate z_2 = 0 is 0b001; the kernel (both forms 0) is spanned by 0b111.
// add(0b101, 0) would then contradict (0b011 ⊕ 0b110 = 0b101 with value 1): refused, system unchanged.
#pragma once

#include <cstdint>
#include <vector>

#include "bmmc/core/bit_matrix.hpp"

namespace bmmc {

class FormSystem {
 public:
  /// Unknowns z with bits only in `support` (forms are read on those bits alone).
  explicit FormSystem(BitVec support) : support_(support) {}

  /// Adds parity(form & z) = bit k of rhs, for every system k. Returns false, leaving the system as it was,
  /// when some system k contradicts it; an equation the others imply is accepted and changes nothing.
  bool add(BitVec form, std::uint64_t rhs = 0);
  /// Rank of the accepted forms (on the support).
  int rank() const noexcept { return static_cast<int>(rows_.size()); }
  /// A solution of system k, 0 ≤ k < 64 (its free coordinates 0): bits only in the support. Throws
  /// std::invalid_argument for k outside 0..63.
  BitVec solution(int k = 0) const;
  /// A basis of {z in the support : every accepted form vanishes on z}.
  std::vector<BitVec> kernel() const;

 private:
  struct Row {
    BitVec form;
    std::uint64_t rhs;
  };
  BitVec support_;
  std::vector<Row> rows_;  // fully reduced: a row's pivot (lowest bit) is set in no other row
};

}  // namespace bmmc
