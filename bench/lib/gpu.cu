// GPU benchmark helpers (see include/bmmc/bench/gpu.hpp): fill, copy and verification kernels, event timing.
#include "bmmc/bench/gpu.hpp"

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "bmmc/codegen/probe_source.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "timing.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/permute.hpp"

namespace bmmc {

namespace {

using bench_detail::time_reps;

using u64 = unsigned long long;

__global__ void fill_random(unsigned* p, u64 words, u64 seed) {
  for (u64 i = blockIdx.x * u64(blockDim.x) + threadIdx.x; i < words; i += u64(gridDim.x) * blockDim.x) {
    u64 h = (i + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    p[i] = static_cast<unsigned>(h) | 0x01010101u;  // no zero bytes
  }
}

// One 16-byte vector per thread, as many blocks as the array needs: the sequential copy that reaches
// cudaMemcpy on an H100 (a grid-stride copy with several vectors per thread stays ~6% below it).
__global__ void copy16_one(const uint4* __restrict__ in, uint4* __restrict__ out) {
  const u64 i = blockIdx.x * u64(blockDim.x) + threadIdx.x;
  out[i] = in[i];
}

__global__ void count_zero_bytes(const unsigned char* p, u64 bytes, u64* zeros) {
  u64 local = 0;
  for (u64 i = blockIdx.x * u64(blockDim.x) + threadIdx.x; i < bytes; i += u64(gridDim.x) * blockDim.x) local += p[i] == 0;
  if (local) atomicAdd(zeros, local);
}

__global__ void copy16(const uint4* __restrict__ in, uint4* __restrict__ out, u64 count) {
  for (u64 i = blockIdx.x * u64(blockDim.x) + threadIdx.x; i < count; i += u64(gridDim.x) * blockDim.x) out[i] = in[i];
}

struct VerifyTables {
  u64 cols[64];
  u64 c;
  u64 mask_bits, mask_value;  ///< only x with (x & mask_bits) == mask_value move; the others stay
  int n;
  int elem_bytes;
};

__global__ void verify(const unsigned char* in, const unsigned char* out, VerifyTables t, u64* bad) {
  const u64 total = u64{1} << t.n;
  u64 local = 0;
  for (u64 x = blockIdx.x * u64(blockDim.x) + threadIdx.x; x < total; x += u64(gridDim.x) * blockDim.x) {
    u64 y = t.c;
    for (int i = 0; i < t.n; ++i)
      if ((x >> i) & 1) y ^= t.cols[i];
    if ((x & t.mask_bits) != t.mask_value) y = x;
    for (int b = 0; b < t.elem_bytes; ++b)
      if (in[x * t.elem_bytes + b] != out[y * t.elem_bytes + b]) {
        ++local;
        break;
      }
  }
  if (local) atomicAdd(bad, local);
}

// Blocks of 256 threads for a grid-stride loop over `items`: at most 16 per SM of the device (`sms`, from
// device_caps(), queried outside the timed loops).
unsigned grid_for(u64 items, int sms) {
  return static_cast<unsigned>(std::min<u64>((items + 255) / 256, static_cast<u64>(sms) * 16));
}


u64 zero_bytes(const DeviceBuffer& buf, std::size_t bytes, int sms) {
  DeviceBuffer zeros(sizeof(u64));
  zeros.fill_bytes(0);
  count_zero_bytes<<<grid_for(bytes, sms), 256>>>(static_cast<const unsigned char*>(buf.get()), bytes, zeros.as<u64>());
  BMMC_CUDA_CHECK(cudaGetLastError());
  u64 result = 0;
  zeros.download(&result, sizeof(result));
  return result;
}

// The DRAM probe of one tile pass: its reads and writes without the tile. The input has no zero byte
// (fill_random), so an output poisoned with zeros shows any vector the probe failed to write.
GpuBenchRow time_probe(const TilePass& pass, const GpuBenchCase& c, int split, const DeviceBuffer& in, DeviceBuffer& out,
                       std::size_t bytes, int reps) {
  const KernelSource ks = generate_access_probe(pass, c.options.codegen, split);
  KernelCache& cache = c.options.cache ? *c.options.cache : default_kernel_cache();
  const Kernel kernel = cache.get(ks.source, ks.kernel_name, device_arch());
  const void* src = in.get();
  void* dst = out.get();
  void* args[] = {&src, &dst};
  auto run = [&] { launch(kernel, dim3(static_cast<unsigned>(ks.grid)), dim3(ks.block), 0, nullptr, args); };
  out.fill_bytes(0);
  run();
  const bool complete = zero_bytes(out, bytes, device_caps().sm_count) == 0;
  GpuBenchRow r = time_reps("probe:" + c.variant + (c.probe_splits.size() > 1 || split ? "/split" + std::to_string(split) : ""),
                            reps, bytes, run);
  r.verified = complete;
  return r;
}

}  // namespace

unsigned long long count_mismatches(const Bmmc& b, const void* in, const void* out, int eb, BitVec mask_bits,
                                    BitVec mask_value) {
  VerifyTables t{};
  t.mask_bits = mask_bits;
  t.mask_value = mask_value;
  t.n = b.n();
  for (int i = 0; i < t.n; ++i) t.cols[i] = b.matrix().col(i);
  t.c = b.complement();
  t.elem_bytes = eb;
  DeviceBuffer bad(sizeof(u64));
  bad.fill_bytes(0);
  const int sms = device_caps().sm_count;
  verify<<<grid_for(u64{1} << t.n, sms), 256>>>(static_cast<const unsigned char*>(in), static_cast<const unsigned char*>(out), t,
                                                 bad.as<u64>());
  BMMC_CUDA_CHECK(cudaGetLastError());
  u64 result = 0;
  bad.download(&result, sizeof(result));
  return result;
}

std::vector<GpuBenchRow> bench_gpu(const Bmmc& b, int eb, const std::vector<GpuBenchCase>& cases, int reps) {
  if (reps < 1) throw std::invalid_argument("reps must be at least 1");
  const std::size_t bytes = (std::size_t{1} << b.n()) * static_cast<std::size_t>(eb);
  const int sms = device_caps().sm_count;
  DeviceBuffer in(bytes), out(bytes), temp(bytes);
  fill_random<<<grid_for(bytes / 4 + 1, sms), 256>>>(in.as<unsigned>(), (bytes + 3) / 4, b.n() * 131 + eb);
  BMMC_CUDA_CHECK(cudaGetLastError());
  std::vector<GpuBenchRow> rows;
  rows.push_back(time_reps("memcpy", reps, bytes, [&] {
    BMMC_CUDA_CHECK(cudaMemcpyAsync(out.get(), in.get(), bytes, cudaMemcpyDeviceToDevice));
  }));
  if (bytes % 16 == 0) {
    rows.push_back(time_reps("copy-kernel", reps, bytes, [&] {
      copy16<<<grid_for(bytes / 16, sms), 256>>>(in.as<uint4>(), out.as<uint4>(), bytes / 16);
    }));
    if (bytes % 4096 == 0 && bytes / 4096 <= 0x7fffffffull)
      rows.push_back(time_reps("copy-1v", reps, bytes, [&] {
        copy16_one<<<static_cast<unsigned>(bytes / 4096), 256>>>(in.as<uint4>(), out.as<uint4>());
      }));
  }
  for (const GpuBenchCase& c : cases) {
    if (c.probe_only) {
      DeviceCaps unbounded = device_caps();  // the probe has no shared memory: any tile the planner can make
      unbounded.max_shared_per_block = unbounded.max_shared_per_sm = 1 << 30;
      const Plan plan = make_plan(b, eb, unbounded, c.options.policy);
      if (plan.passes.size() != 1 || !std::holds_alternative<TilePass>(plan.passes[0]))
        throw std::invalid_argument("bench: --probe-only needs a one-pass plan");
      for (int split : c.probe_splits)
        if ((1 << split) <= std::get<TilePass>(plan.passes[0]).iters())
          rows.push_back(time_probe(std::get<TilePass>(plan.passes[0]), c, split, in, out, bytes, reps));
      continue;
    }
    out.fill_bytes(0xA5);
    BMMC_CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    CudaPermuter p(b, eb, c.options);
    p(in.get(), out.get(), nullptr, temp.get());
    BMMC_CUDA_CHECK(cudaDeviceSynchronize());
    const double first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const bool ok = count_mismatches(b, in.get(), out.get(), eb) == 0;
    GpuBenchRow r = time_reps(c.variant, reps, bytes, [&] { p(in.get(), out.get(), nullptr, temp.get()); });
    r.first_use_ms = first;
    r.verified = ok && count_mismatches(b, in.get(), out.get(), eb) == 0;
    rows.push_back(r);
    if (c.probe && p.jit() && p.plan().passes.size() == 1 && std::holds_alternative<TilePass>(p.plan().passes[0]))
      for (int split : c.probe_splits)  // a split beyond the pass's rows per warp has no row (its plan cannot)
        if ((1 << split) <= std::get<TilePass>(p.plan().passes[0]).iters())
          rows.push_back(time_probe(std::get<TilePass>(p.plan().passes[0]), c, split, in, out, bytes, reps));
  }
  for (GpuBenchRow& r : rows) r.pct_memcpy = 100.0 * rows[0].median_ms / r.median_ms;
  return rows;
}

namespace {

__global__ void empty_kernel() {}

// Median and min over `loops` of the host µs per call of f(), timed over batches of 64 calls; stream s is
// synchronised between batches, outside the timed part.
template <class F>
HostCallRow host_per_call(const char* name, int calls, int loops, cudaStream_t s, F f) {
  for (int i = 0; i < 256; ++i) f();
  BMMC_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<float> per;
  for (int l = 0; l < loops; ++l) {
    double spent = 0;
    int done = 0;
    while (done < calls) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 64; ++i) f();
      spent += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      done += 64;
      BMMC_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    per.push_back(static_cast<float>(spent / done));
  }
  return {name, bench_detail::median(per), *std::min_element(per.begin(), per.end())};
}

}  // namespace

std::vector<HostCallRow> host_call_costs(int calls, int loops) {
  const Bmmc b = random_bmmc(12, 1);
  const std::size_t bytes = (std::size_t{1} << 12) * 4;
  DeviceBuffer in(bytes), out(bytes);
  Stream stream;
  cudaStream_t s = stream.get();
  const Permuter kept(b, 4, {Backend::Cuda});
  std::vector<HostCallRow> rows;
  rows.push_back(host_per_call("bmmc::permute() (cached)", calls, loops, s,
                               [&] { permute(b, in.get(), out.get(), 4, {}, s); }));
  rows.push_back(host_per_call("kept Permuter()", calls, loops, s, [&] { kept(in.get(), out.get(), s); }));
  rows.push_back(host_per_call("kept Permuter::run_trusted", calls, loops, s,
                               [&] { kept.run_trusted(in.get(), out.get(), s); }));
  rows.push_back(host_per_call("cudaLaunchKernel (empty kernel)", calls, loops, s, [&] {
    BMMC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&empty_kernel), dim3(1), dim3(32), nullptr, 0, s));
  }));
  // The same empty kernel launched the way bmmc launches its JIT kernels (a cudaKernel_t from a library) and
  // through the driver with its CUfunction: what the runtime's kernel-handle path costs on top of the driver.
  cudaKernel_t handle = nullptr;
  BMMC_CUDA_CHECK(cudaGetKernel(&handle, empty_kernel));
  rows.push_back(host_per_call("cudaLaunchKernel (as cudaKernel_t)", calls, loops, s, [&] {
    BMMC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(handle), dim3(1), dim3(32), nullptr, 0, s));
  }));
#if CUDART_VERSION >= 12050  // cudaGetDriverEntryPointByVersion
  void* get_function = nullptr;
  void* launch_kernel = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuKernelGetFunction", &get_function, 12000, cudaEnableDefault, &found) ==
          cudaSuccess &&
      cudaGetDriverEntryPointByVersion("cuLaunchKernel", &launch_kernel, 12000, cudaEnableDefault, &found) ==
          cudaSuccess &&
      get_function && launch_kernel) {
    using GetFunction = CUresult (*)(CUfunction*, CUkernel);
    using LaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      CUstream, void**, void**);
    CUfunction function = nullptr;
    if (reinterpret_cast<GetFunction>(get_function)(&function, reinterpret_cast<CUkernel>(handle)) == CUDA_SUCCESS)
      rows.push_back(host_per_call("cuLaunchKernel (its CUfunction)", calls, loops, s, [&] {
        if (reinterpret_cast<LaunchKernel>(launch_kernel)(function, 1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(s),
                                                          nullptr, nullptr) != CUDA_SUCCESS)
          throw std::runtime_error("cuLaunchKernel failed");
      }));
  }
#endif
  rows.push_back(host_per_call("cudaGetDevice", calls, loops, s, [&] {
    int d = 0;
    BMMC_CUDA_CHECK(cudaGetDevice(&d));
  }));
  rows.push_back(host_per_call("cudaMemcpyAsync D2D (same bytes)", calls, loops, s, [&] {
    BMMC_CUDA_CHECK(cudaMemcpyAsync(out.get(), in.get(), bytes, cudaMemcpyDeviceToDevice, s));
  }));
  return rows;
}

std::string gpu_name(int device) { return device_caps(device).name; }

}  // namespace bmmc
