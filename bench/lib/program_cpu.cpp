// time_program (see bmmc/bench/program.hpp): the CPU's loop here, the GPU's in program_gpu.cu (no_cuda.cpp in
// builds without CUDA).
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "bmmc/bench/program.hpp"
#include "program_gpu.hpp"

namespace bmmc {

ProgramTiming time_program(const ProgramRunner& runner, const void* input, void* output, int reps, bool per_pass) {
  if (reps < 1) throw std::invalid_argument("time_program: reps must be at least 1");
  if (runner.backend() != Backend::Cpu) return time_program_gpu(runner, input, output, reps, per_pass);
  ProgramTiming t;
  const std::size_t bytes = runner.bytes();
  for (int r = 0; r < reps; ++r) {
    std::memcpy(output, input, bytes);
    const auto t0 = std::chrono::steady_clock::now();
    runner(output);
    t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (per_pass) {
    std::vector<std::byte> work(bytes);
    for (int r = 0; r < reps; ++r) {
      std::memcpy(work.data(), input, bytes);
      const std::vector<double> ms = runner.pass_ms(work.data());
      t.pass_ms.resize(ms.size());
      for (std::size_t i = 0; i < ms.size(); ++i) t.pass_ms[i].push_back(ms[i]);
    }
  }
  return t;
}

}  // namespace bmmc
