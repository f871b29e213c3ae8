// The plan checker: a CPU interpreter that executes a Plan block by block, warp by warp, lane by lane,
// both phases, exactly as the generated kernel does, and reports what it saw.
//
// For each pass it proves (by exhaustive execution, so keep n ≲ 24):
//  - correct: every output index is written exactly once, with the element y = A·x ⊕ c demands, and no
//    shared word is written twice or read before it is written;
//  - coalesced: every warp access to global memory covers exactly 32·2^k consecutive elements aligned to
//    their size, each lane 2^k consecutive elements (one vector). Per element size that is, for 2^k
//    elements per lane: 32·2^k·elem_bytes contiguous aligned bytes, i.e. whole 32-byte sectors for every
//    size and whole 128-byte lines whenever 2^k·elem_bytes ≥ 4 (the default: 4-byte or wider lane
//    accesses). Naive passes read coalesced but usually scatter their writes, so they report false;
//  - max_bank_conflict: the worst number of distinct 32-bit words one bank serves in a single warp
//    shared-memory access (1 = conflict-free). Elements narrower than 4 bytes occupy one word each and
//    wider ones elem_bytes/4 planes, so this one rule covers every element size.
// The whole plan is correct when every pass is and the passes compose to the plan's BMMC.
#pragma once

#include <cstdint>
#include <string>

#include "bmmc/plan/plan.hpp"

namespace bmmc {

struct CheckReport {
  bool correct = true;
  bool coalesced = true;
  int max_bank_conflict = 1;       ///< 0 when no pass uses shared memory
  std::uint64_t warp_accesses = 0;  ///< global warp accesses examined
  std::string first_error;         ///< empty when correct
};

CheckReport check_pass(const Pass& pass);
CheckReport check_plan(const Plan& plan);

}  // namespace bmmc
