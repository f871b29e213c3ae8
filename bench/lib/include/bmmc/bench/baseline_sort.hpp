// Baselines for the sorting network's benchmark: CUB's DeviceRadixSort::SortKeys and thrust::sort on the same
// device data, timed with CUDA events in the same process (so `bmmc sort --compare-cub` compares like with
// like). Compiled by nvcc from the toolkit's CCCL headers (bench/lib/baseline_sort.cu).
#pragma once

#include <cstddef>
#include <vector>

#include "bmmc/combinators/dtype.hpp"

namespace bmmc {

struct BaselineTiming {
  std::vector<float> ms;  ///< one entry per timed run (after one untimed warm-up)
  bool sorted = false;    ///< the last run's output is non-decreasing (checked on the host)
};

/// Sorts `count` keys from device array `d_in` (left unchanged) `reps` times with cub::DeviceRadixSort.
BaselineTiming time_cub_radix_sort(const void* d_in, std::size_t count, DType t, int reps);
/// Same with thrust::sort (copy of the keys, then sort in place; only the sort is timed).
BaselineTiming time_thrust_sort(const void* d_in, std::size_t count, DType t, int reps);

}  // namespace bmmc
