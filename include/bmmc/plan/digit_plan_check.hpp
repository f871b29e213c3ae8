// The digit plan checker: executes a DigitPlan's formulas (bmmc/plan/digit_plan.hpp) element by element on the
// CPU and proves what the kernels rely on.
//
// For every tile: each read lands in a distinct shared slot inside the tile's shared memory, each write loads a
// slot that was read, and no global access leaves the array. Over the whole array: every output element is
// written exactly once, and the plan (its canonical axes, folded or byte-split element) moves every byte of the
// caller's array where the caller's DigitMap sends it, and that a read skew is one the kernel applies. It also
// reports the bank ways of the first warp of each phase (digit_bank_ways, the model the planner chose by) and the
// longest runs of consecutive addresses in each phase, which tests compare with what the planner intended.
// Exhaustive, so for arrays up to a few million plan elements.
#pragma once

#include <cstdint>
#include <string>

#include "bmmc/plan/digit_plan.hpp"

namespace bmmc {

struct DigitPlanReport {
  bool ok = false;
  std::string error;          ///< the first violation, empty when ok
  std::int64_t writes = 0;    ///< output elements written
  int read_conflicts = 0;     ///< worst ways of the first warp's shared stores (1 = none)
  int write_conflicts = 0;    ///< worst ways of the first warp's shared loads
  std::int64_t read_run = 0;  ///< the longest run of consecutive input elements one tile reads
  std::int64_t write_run = 0; ///< the longest run of consecutive output elements one tile writes
};

/// Throws std::invalid_argument when the plan has more than `max_elements` plan elements (the check is exhaustive).
DigitPlanReport check_digit_plan(const DigitPlan& plan, std::int64_t max_elements = std::int64_t{1} << 24);

}  // namespace bmmc
