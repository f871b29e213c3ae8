// The GPU benchmarks in a build without CUDA (compiled only there, in place of the .cu files): each refuses with
// std::invalid_argument, as resolve_backend(Backend::Cuda) does, so that the CLI asks the library at run time
// whether CUDA is available instead of compiling its GPU paths conditionally.
#include <stdexcept>
#include <string>

#include "bmmc/bench/digit.hpp"
#include "bmmc/bench/gpu.hpp"
#include "bmmc/bench/inplace_gpu.hpp"
#include "bmmc/bench/peer_gpu.hpp"
#include "bmmc/bench/program.hpp"
#include "program_gpu.hpp"

namespace bmmc {

namespace {

[[noreturn]] void no_cuda(const char* what) {
  throw std::invalid_argument(std::string(what) +
                              " needs the cuda backend: this bmmc was built without the CUDA toolkit; use the cpu backend");
}

}  // namespace

std::vector<GpuBenchRow> bench_gpu(const Bmmc&, int, const std::vector<GpuBenchCase>&, int) { no_cuda("bench_gpu"); }
std::vector<HostCallRow> host_call_costs(int, int) { no_cuda("host_call_costs"); }
std::vector<GpuBenchRow> bench_gpu_digits(const DigitMap&, int, int, bool, const std::vector<DigitPolicy>&) { no_cuda("bench_gpu_digits"); }
std::string gpu_name(int) { no_cuda("gpu_name"); }
unsigned long long count_mismatches(const Bmmc&, const void*, const void*, int, BitVec, BitVec) {
  no_cuda("count_mismatches");
}
std::optional<int> custatevec_version(std::string* why) {
  if (why) *why = "this bmmc was built without CUDA";
  return std::nullopt;
}
std::vector<GpuBenchRow> bench_gpu_inplace(const Bmmc&, int, int, const GpuOptions&, BitVec, BitVec) {
  no_cuda("bench_gpu_inplace");
}
std::vector<PeerBenchRow> bench_peer(const Bmmc&, int, const std::vector<int>&, int) { no_cuda("bench_peer"); }
ProgramTiming time_program_gpu(const ProgramRunner&, const void*, void*, int, bool) { no_cuda("time_program on CUDA"); }
SortBaselines time_sort_baselines(const void*, std::size_t, DType, int) { no_cuda("time_sort_baselines"); }

}  // namespace bmmc
