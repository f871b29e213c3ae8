// CpuDigitPermuter: runs a DigitPlan (bmmc/plan/digit_plan.hpp) on the CPU, tile by tile over the thread pool.
//
// A tile is moved one of three ways, chosen once per plan. Where the innermost input and output axes differ, each
// coordinate of the tile's other axes is a 2-D block of those two axes, transposed through registers in squares
// of 8 × 8 (4 × 4 for 8 bytes; rows of 2 to 4 elements as de-interleaves and interleaves). Where the innermost
// output axis is short, each output run made of the innermost output axes is gathered through one offset table.
// Otherwise (the innermost axis stays innermost) rows are copied, or reversed in registers for a flip. Full tiles
// that no roll wraps take their rows from offset tables computed once per plan, and the next such tile's input
// runs are prefetched; edge tiles and tiles a roll wraps compute each row's coordinates and cut blocks where a
// roll wraps. In place (in == out) runs for involutions only, by swapping each element with its image (no
// scratch). Errors: std::invalid_argument (null, partially overlapping pointers, in place for a map that is not an
// involution) before anything is written.
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
