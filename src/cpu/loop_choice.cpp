// Per-CPU choice between the register-transpose and gather loops (see loop_choice.hpp).
#include "loop_choice.hpp"

#include "tuning.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <mutex>

namespace bmmc::cpu_detail {

namespace {

// The gathers must take less than kGatherMargin of the transposes' time to be chosen; kRounds interleaved
// rounds per loop, the best of each compared (the least disturbed by other work). Values: tuning.hpp.
using cpu_tuning::kGatherMargin;
constexpr int kRounds = cpu_tuning::kLoopChoiceRounds;

// One slot per (log2 element size 0..4, bpc): 0 not yet measured, 1 gathers, 2 transposes.
std::atomic<int> g_choice[5 * 2] = {};
std::mutex g_calibrating;

}  // namespace

bool transposes_win(int elem_bytes, bool bpc, const LoopTimer& time) {
  const int slot = std::countr_zero(static_cast<unsigned>(elem_bytes)) * 2 + (bpc ? 1 : 0);
  if (const int known = g_choice[slot].load(std::memory_order_acquire); known != 0) return known == 2;
  // One calibration at a time: two at once would time each other.
  const std::lock_guard lock(g_calibrating);
  if (const int known = g_choice[slot].load(std::memory_order_acquire); known != 0) return known == 2;
  double transpose = 1e300, gather = 1e300;
  time(true), time(false);  // warm: tables, tile and arrays into cache, code paged in
  for (int r = 0; r < kRounds; ++r) {
    transpose = std::min(transpose, time(true));
    gather = std::min(gather, time(false));
  }
  const bool win = !(gather < kGatherMargin * transpose);
  g_choice[slot].store(win ? 2 : 1, std::memory_order_release);
  return win;
}

}  // namespace bmmc::cpu_detail
