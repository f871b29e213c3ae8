// CpuDigitPermuter: runs a DigitPlan (bmmc/plan/digit_plan.hpp) on the CPU, tile by tile over the thread pool.
//
// A tile is written in output order from reads gathered inside it, through two offset tables shared by every
// full tile that no roll wraps (computed once per plan); edge tiles and tiles a roll wraps compute each
// element's coordinates. In place (in == out) runs for involutions only, by swapping each element with its image
// (no scratch). Errors: std::invalid_argument (null, partially overlapping pointers, in place for a map that is
// not an involution) before anything is written.
#pragma once

#include <cstddef>
#include <vector>

#include "bmmc/cpu/executor.hpp"
#include "bmmc/plan/digit_plan.hpp"

namespace bmmc {

class CpuDigitPermuter {
 public:
  CpuDigitPermuter(const DigitMap& map, int elem_bytes, const CpuPolicy& policy = {});
  explicit CpuDigitPermuter(DigitPlan plan, const CpuPolicy& policy = {});

  /// out = the map applied to in (host memory, map.size() elements each). in == out runs in place (involutions).
  void operator()(const void* in, void* out) const;

  const DigitPlan& plan() const noexcept { return plan_; }
  int threads() const noexcept { return threads_; }
  /// "cpu-digit-tile" (or "cpu-digit-inplace" when run in place).
  static const char* kernel_name() noexcept { return "cpu-digit-tile"; }

 private:
  DigitPlan plan_;
  int threads_ = 1;
  bool involution_ = false;
  std::vector<std::ptrdiff_t> in_off_, out_off_;  // per row of a full unwrapped tile (see digit_executor.cpp)
  std::vector<std::ptrdiff_t> gather_;            // per element of a gathered output run (empty: no gathers)
  std::ptrdiff_t gather_out0_ = 0;                // the run's first image, relative to its row's
  int gather_outer_ = -1;                         // write-order axes before the gathered ones, when every tile gathers
  std::vector<std::ptrdiff_t> prefetch_;          // the input runs of a full tile, relative to its input base
  Extent prefetch_bytes_ = 0;                     // the bytes of each
};

}  // namespace bmmc
