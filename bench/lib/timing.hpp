// Event timing shared by the GPU benchmarks (gpu.cu, inplace_gpu.cu): a warm-up, then `reps` runs each between
// two CUDA events on the legacy stream; the row gets median, min, max and the bandwidth of reading and writing
// `bytes`. Internal to bench/lib.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "bmmc/bench/gpu.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"

namespace bmmc::bench_detail {

inline double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <class F>
GpuBenchRow time_reps(const std::string& name, int reps, std::size_t bytes, F run) {
  for (int i = 0; i < 3; ++i) run();  // warm-up
  std::vector<Event> start(reps), stop(reps);
  for (int i = 0; i < reps; ++i) {
    start[i].record();
    run();
    stop[i].record();
  }
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> ms(reps);
  for (int i = 0; i < reps; ++i) ms[i] = stop[i].elapsed_ms_since(start[i]);
  GpuBenchRow r;
  r.variant = name;
  r.median_ms = median(ms);
  r.min_ms = *std::min_element(ms.begin(), ms.end());
  r.max_ms = *std::max_element(ms.begin(), ms.end());
  r.gbps = 2.0 * static_cast<double>(bytes) / (r.median_ms * 1e6);
  return r;
}

}  // namespace bmmc::bench_detail
