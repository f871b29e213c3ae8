// time_program on CUDA and the sort baselines from host keys (see bmmc/bench/program.hpp).
#include <algorithm>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"
#include "program_gpu.hpp"

namespace bmmc {

ProgramTiming time_program_gpu(const ProgramRunner& runner, const void* input, void* output, int reps, bool per_pass) {
  ProgramTiming t;
  const ScopedDevice on(runner.device());  // the buffers on the runner's device
  const std::size_t bytes = runner.bytes();
  DeviceBuffer d_in(bytes), work(bytes), temp(runner.temp_bytes());
  d_in.upload(input, bytes);
  Event a, b;
  for (int r = -1; r < reps; ++r) {  // one untimed warm-up run
    check(cudaMemcpy(work.get(), d_in.get(), bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy(program input)");
    a.record();
    runner(work.get(), nullptr, temp.get());
    b.record();
    b.synchronize();
    if (r >= 0) t.ms.push_back(b.elapsed_ms_since(a));
  }
  work.download(output, bytes);
  if (per_pass)  // each pass timed alone (events between passes)
    for (int r = 0; r < reps; ++r) {
      check(cudaMemcpy(work.get(), d_in.get(), bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy(program input)");
      const std::vector<double> ms = runner.pass_ms(work.get(), nullptr, temp.get());
      t.pass_ms.resize(ms.size());
      for (std::size_t i = 0; i < ms.size(); ++i) t.pass_ms[i].push_back(ms[i]);
    }
  // One pass over memory for comparison: cudaMemcpy D2D of the same bytes, in the same run.
  for (int r = -1; r < std::max(reps, 5); ++r) {
    a.record();
    check(cudaMemcpyAsync(work.get(), d_in.get(), bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync(copy pass)");
    b.record();
    b.synchronize();
    if (r >= 0) t.copy_ms.push_back(b.elapsed_ms_since(a));
  }
  return t;
}

SortBaselines time_sort_baselines(const void* keys, std::size_t count, DType t, int reps) {
  const std::size_t bytes = count * static_cast<std::size_t>(dtype_bytes(t));
  DeviceBuffer d_in(bytes);
  d_in.upload(keys, bytes);
  return {time_cub_radix_sort(d_in.get(), count, t, reps), time_thrust_sort(d_in.get(), count, t, reps)};
}

}  // namespace bmmc
