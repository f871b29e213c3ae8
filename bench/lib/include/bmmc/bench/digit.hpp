// Benchmarks of any-shape maps (DigitMap): the GPU beside a cudaMemcpy D2D of the same bytes in the same run, and
// the CPU beside a memcpy and a power-of-two map of the same bytes.
//
// GPU rows: "memcpy", "copy-kernel" (16-byte grid-stride copy), "digit" (the JIT kernel), "digit-generic" (the
// precompiled kernel), "door:<kernel>" (what bmmc::Permuter runs for the map: the BMMC kernel for a map that is a
// Bmmc, else the digit kernel) and "digit-inplace" for involutions. Every permuting row is verified against the CPU
// executor on random data, with the output poisoned first. bench_gpu_digits throws std::invalid_argument in a
// build without CUDA (bench/lib/no_cuda.cpp).
#pragma once

#include <string>
#include <vector>

#include "bmmc/bench/gpu.hpp"
#include "bmmc/core/digit_map.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/plan/digit_plan.hpp"

namespace bmmc {

/// `tunings`: further JIT rows, one per planner policy (`bmmc bench --digit-tune`), named by digit_tuning_name.
std::vector<GpuBenchRow> bench_gpu_digits(const DigitMap& map, int elem_bytes, int reps, bool in_place,
                                          const std::vector<DigitPolicy>& tunings = {});

/// "digit[tile=T,run=R,threads=N,min-blocks=M]" with the policy's non-zero knobs.
std::string digit_tuning_name(const DigitPolicy& policy);

/// CPU rows: "memcpy" and "digit" (CpuDigitPermuter), each verified; pct_memcpy against the memcpy row.
std::vector<GpuBenchRow> bench_cpu_digits(const DigitMap& map, int elem_bytes, int reps, const CpuPolicy& policy);

}  // namespace bmmc
