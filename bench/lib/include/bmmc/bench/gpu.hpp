// GPU benchmarking of permutations against a device-to-device copy of the same bytes, in the same run.
//
// Every timed configuration is verified on the device (a gather check of out[A·x ⊕ c] == in[x] for every
// x) on random non-zero data. Times come from CUDA events around each repetition, after a warm-up; rows
// report the median, min and max, the bandwidth counting bytes read plus written, and the percentage of
// the cudaMemcpy D2D median measured in the same run. The row schema is shared with the CPU benchmark.
// Declared in every build (no CUDA header); in a build without CUDA each function throws std::invalid_argument
// saying so (bench/lib/no_cuda.cpp), so callers ask for the cuda backend first (resolve_backend).
#pragma once

#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/cuda/options.hpp"

namespace bmmc {

struct GpuBenchRow {
  std::string variant;  ///< memcpy, copy-kernel, or the permutation variant (+ "-generic")
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double gbps = 0;        ///< (bytes read + bytes written) / median time
  double pct_memcpy = 0;  ///< memcpy median / this median × 100
  double first_use_ms = 0;  ///< plan + JIT (or cache load) + first run, host wall time; 0 for copies
  bool verified = true;
};

struct GpuBenchCase {
  std::string variant;   ///< variant name for the row
  GpuOptions options;
  /// Also time the DRAM probe of the case's plan (codegen/probe_source.hpp; one JIT tile pass only): a row
  /// "probe:<variant>", checked to write every output byte.
  bool probe = false;
  /// Probe rows also with each tile's rows split over 2^C consecutive blocks, for each C here (0 = the pass's own
  /// blocks; see generate_access_probe): rows "probe:<variant>/split<C>", none for a C beyond the pass's rows per
  /// warp (2^C > iters).
  std::vector<int> probe_splits = {0};
  /// Time only the probes, of a plan made as if shared memory were unbounded (tiles the kernel cannot have, e.g.
  /// 2^16 int32 elements for 1 KiB runs on both sides): what a cluster kernel's access pattern would cost.
  bool probe_only = false;
};

/// Measures memcpy D2D and two 16-byte copy kernels of 2^n·elem_bytes bytes — "copy-kernel" (a grid-stride
/// loop, at most 16 blocks per SM) and "copy-1v" (one vector per thread, 256-thread blocks, the DRAM probe's
/// sequential copy) — then each case.
std::vector<GpuBenchRow> bench_gpu(const Bmmc& bmmc, int elem_bytes, const std::vector<GpuBenchCase>& cases, int reps);

/// Host time per call, µs, of the ways to permute a small array (2^12 int32, random-bmmc:1) and of the CUDA
/// calls underneath them: the cached bmmc::permute(), a kept Permuter (with its per-call pointer queries, and
/// run_trusted without them), a bare cudaLaunchKernel of an empty kernel, cudaGetDevice and cudaMemcpyAsync of
/// the same bytes. Each is timed in batches of 64 calls with a synchronize between batches, untimed, so that
/// the launch queue never fills (a full queue would time the GPU's kernel rate instead of the host).
struct HostCallRow {
  std::string call;
  double median_us = 0, min_us = 0;
};
std::vector<HostCallRow> host_call_costs(int calls = 2048, int loops = 7);

/// The name of CUDA device `device` (−1: the current one), as the benchmarks print it.
std::string gpu_name(int device = -1);

/// Number of x with out[A·x ⊕ c] != in[x], computed on the device. Public so that callers timing their own
/// permutations can verify every output they time (docs/DESIGN.md §7), as bench_gpu does. With a mask (the
/// masked swaps of swap_index_bits), only the x with (x & mask_bits) == mask_value move; the others must stay.
unsigned long long count_mismatches(const Bmmc& bmmc, const void* in, const void* out, int elem_bytes,
                                    BitVec mask_bits = 0, BitVec mask_value = 0);

}  // namespace bmmc
