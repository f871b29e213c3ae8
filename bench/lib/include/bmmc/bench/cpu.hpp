// The CPU benchmark behind `bmmc bench --backend cpu`: the fast executor against memcpy and the naive loop,
// measured in the same run on the same buffers.
//
// Variants (rows, in this order): "memcpy" (std::memcpy of the same bytes on the executor's worker pool
// and on exactly as many threads as "one-pass" runs on — one thread, without the pool, where the array is
// too small for more — so the comparison is fair at every n), "memcpy-1t" (one std::memcpy call), "naive"
// (permute_reference: the single-threaded scatter loop out[A·x ⊕ c] = in[x]) and "one-pass" (a CpuPermuter
// with the given CpuPolicy, prepared once), and, where the other phase loop applies (see executor.hpp),
// "one-pass-gather" or "one-pass-transpose" (the same plan through the loop this CPU did not choose). Each
// variant runs once as a warm-up into a poisoned output that is then verified (memcpy against the input,
// the others against the reference permutation), then `reps` timed samples; the samples of all variants
// are interleaved round by round so that a noisy machine disturbs them alike. A sample is a batch of calls
// lasting ~50 µs (one call for arrays that take longer), so that the clock does not dominate small arrays;
// times are per call. Buffers are 2 MiB-aligned and, on Linux, advised for transparent huge pages. The
// input is random with no zero byte. Nothing is printed; a wrong output throws std::runtime_error naming
// the variant.
#pragma once

#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cpu/inplace.hpp"

namespace bmmc {

struct BenchRow {
  std::string variant;
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double gbps = 0;        ///< (bytes read + bytes written) / median time, in 10^9 bytes per second
  double pct_memcpy = 0;  ///< 100 × median time of "memcpy" / median time of this variant
};

/// Benchmarks the permutation of 2^n elements of elem_bytes bytes. reps ≥ 1 timed runs per variant (after
/// one warm-up); threads ≤ 0 means std::thread::hardware_concurrency(). Throws std::invalid_argument for bad
/// arguments and std::bad_alloc when the three buffers (input, output, reference) do not fit in memory.
std::vector<BenchRow> bench_cpu(const Bmmc& bmmc, int elem_bytes, int reps, int threads);
/// The same with every CPU option (threads, tile size, register transposes) applied to "one-pass";
/// naive = false leaves out the (slow) "naive" row, for tile sweeps; in_place = true adds "in-place-K-pass"
/// (a CpuInPlacePermuter on the output buffer, which the warm-up fills with the input first).
std::vector<BenchRow> bench_cpu(const Bmmc& bmmc, int elem_bytes, int reps, CpuPolicy options, bool naive = true,
                                bool in_place = false);

}  // namespace bmmc
