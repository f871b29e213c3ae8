// bench_gpu_digits (bmmc/bench/digit.hpp): any-shape maps on the GPU beside a copy of the same bytes.
#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>

#include "bmmc/bench/digit.hpp"
#include "bmmc/cpu/digit_executor.hpp"
#include "bmmc/cuda/digit_permute.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/permute.hpp"
#include "timing.hpp"

namespace bmmc {

namespace {

using bench_detail::time_reps;

__global__ void copy16_loop(const uint4* __restrict__ in, uint4* __restrict__ out, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x) out[i] = in[i];
}

}  // namespace

std::vector<GpuBenchRow> bench_gpu_digits(const DigitMap& map, int eb, int reps, bool in_place,
                                          const std::vector<DigitPolicy>& tunings) {
  if (reps < 1) throw std::invalid_argument("reps must be at least 1");
  const std::size_t bytes = static_cast<std::size_t>(map.size()) * static_cast<std::size_t>(eb);
  std::vector<unsigned char> host_in(bytes), want(bytes), got(bytes);
  std::mt19937_64 rng(static_cast<std::uint64_t>(map.size()) * 131 + static_cast<std::uint64_t>(eb));
  for (std::size_t i = 0; i < bytes; i += 8) {
    const std::uint64_t v = rng();
    std::memcpy(host_in.data() + i, &v, std::min<std::size_t>(8, bytes - i));
  }
  CpuDigitPermuter(map, eb)(host_in.data(), want.data());
  DeviceBuffer in(bytes), out(bytes);
  in.upload(host_in.data(), bytes);
  std::vector<GpuBenchRow> rows;
  rows.push_back(time_reps("memcpy", reps, bytes, [&] {
    BMMC_CUDA_CHECK(cudaMemcpyAsync(out.get(), in.get(), bytes, cudaMemcpyDeviceToDevice));
  }));
  if (bytes % 16 == 0) {
    const unsigned grid = static_cast<unsigned>(device_caps().sm_count) * 8;
    rows.push_back(time_reps("copy-kernel", reps, bytes, [&] {
      copy16_loop<<<grid, 256>>>(in.as<uint4>(), out.as<uint4>(), bytes / 16);
    }));
  }
  auto verified = [&] {
    out.download(got.data(), bytes);
    return got == want;
  };
  for (bool jit : {true, false}) {
    GpuOptions g;
    g.jit = jit;
    out.fill_bytes(0xA5);
    BMMC_CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    const CudaDigitPermuter p(map, eb, g);
    p(in.get(), out.get());
    BMMC_CUDA_CHECK(cudaDeviceSynchronize());
    const double first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const bool ok = verified();
    GpuBenchRow r = time_reps(jit ? "digit" : "digit-generic", reps, bytes, [&] { p(in.get(), out.get()); });
    r.first_use_ms = first;
    r.verified = ok && verified();
    rows.push_back(r);
  }
  for (const DigitPolicy& policy : tunings) {  // the JIT kernel of other planner policies
    const CudaDigitPermuter p(plan_digits(map, eb, policy, device_caps()), GpuOptions{});
    out.fill_bytes(0xA5);
    p(in.get(), out.get());
    const bool ok = verified();
    GpuBenchRow r = time_reps(digit_tuning_name(policy), reps, bytes, [&] { p(in.get(), out.get()); });
    r.verified = ok && verified();
    rows.push_back(r);
  }
  {  // What the front door runs for this map: the bit planner's kernel for a Bmmc, else the digit kernel.
    const Permuter door(map, eb, PermuterOptions{Backend::Cuda});
    out.fill_bytes(0xA5);
    door(in.get(), out.get());
    const bool ok = verified();
    GpuBenchRow r = time_reps("door:" + door.kernel_name(), reps, bytes, [&] { door(in.get(), out.get()); });
    r.verified = ok && verified();
    rows.push_back(r);
  }
  if (in_place && map.is_involution()) {
    const CudaDigitPermuter p(map, eb);
    in.upload(host_in.data(), bytes);
    p(in.get(), in.get());
    in.download(got.data(), bytes);
    const bool ok = got == want;
    GpuBenchRow r = time_reps("digit-inplace", reps, bytes, [&] { p(in.get(), in.get()); });
    r.verified = ok;
    rows.push_back(r);
  }
  for (GpuBenchRow& r : rows) r.pct_memcpy = 100.0 * rows[0].median_ms / r.median_ms;
  return rows;
}

}  // namespace bmmc
