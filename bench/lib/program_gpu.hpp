// The CUDA half of time_program (bmmc/bench/program.hpp): program_gpu.cu, or no_cuda.cpp in builds without CUDA.
#pragma once

#include "bmmc/bench/program.hpp"

namespace bmmc {

ProgramTiming time_program_gpu(const ProgramRunner& runner, const void* input, void* output, int reps, bool per_pass);

}  // namespace bmmc
