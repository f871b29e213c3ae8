// Timing a combinator program (a ProgramRunner, bmmc/program_runner.hpp) for `bmmc sort`: each run on a fresh
// copy of the same input, the backend's own clock, and on CUDA a cudaMemcpy D2D of the same bytes measured in
// the same run, so that a pass can be compared with a copy pass. CUB's and thrust's sorts of the same keys
// (baseline_sort.hpp) are timed from the host array here too. Declared in every build; on a build without
// CUDA the CUDA paths throw std::invalid_argument (a runner of the cuda backend cannot exist there).
#pragma once

#include <cstddef>
#include <vector>

#include "bmmc/bench/baseline_sort.hpp"
#include "bmmc/program_runner.hpp"

namespace bmmc {

struct ProgramTiming {
  /// One entry per timed run: the CPU's host clock around the run; on CUDA events around the run, after one
  /// untimed warm-up run.
  std::vector<double> ms;
  /// CUDA: cudaMemcpy D2D of the same bytes, max(reps, 5) timed runs after a warm-up; empty on the CPU.
  std::vector<double> copy_ms;
  /// With per_pass: each pass's time (ProgramRunner::pass_ms), one vector per pass, one entry per run.
  std::vector<std::vector<double>> pass_ms;
};

/// Runs `runner` reps times on a copy of `input` (host array of runner.bytes()) and leaves the last result in
/// `output` (host array of the same size). Throws std::invalid_argument for reps < 1 and what the runner throws.
ProgramTiming time_program(const ProgramRunner& runner, const void* input, void* output, int reps, bool per_pass);

struct SortBaselines {
  BaselineTiming cub, thrust;
};
/// cub::DeviceRadixSort::SortKeys and thrust::sort of `count` keys copied from the host array `keys` to the
/// current device, `reps` timed runs each.
SortBaselines time_sort_baselines(const void* keys, std::size_t count, DType t, int reps);

}  // namespace bmmc
