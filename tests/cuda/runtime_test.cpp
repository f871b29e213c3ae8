// The CUDA runtime layer on a real GPU: load, launch, cache hits, big shared memory, launch errors.
// Label gpu: without a device every test reports SKIPPED with the reason, never passes silently.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/cuda/memory.hpp"

namespace {

const char* kAffineSource =
    "extern \"C\" __global__ void affine(const int* in, int* out, unsigned n) {\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = in[i] * 2 + 1;\n"
    "}\n";

// Stages a block of `n` ints through dynamic shared memory in reverse order: needs n*4 bytes of it.
const char* kReverseSource =
    "extern \"C\" __global__ void reverse_block(const int* in, int* out, unsigned n) {\n"
    "  extern __shared__ int tile[];\n"
    "  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) tile[i] = in[i];\n"
    "  __syncthreads();\n"
    "  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) out[i] = tile[n - 1 - i];\n"
    "}\n";

bmmc::KernelCacheOptions memory_only() {
  bmmc::KernelCacheOptions o;
  o.use_disk = false;
  return o;
}

std::vector<int> random_nonzero(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(1, 1 << 28);
  std::vector<int> v(n);
  for (int& x : v) x = dist(gen);
  return v;
}

}  // namespace

TEST(CudaRuntime, DeviceCaps) {
  if (!bmmc::gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  const bmmc::DeviceCaps caps = bmmc::device_caps();
  EXPECT_FALSE(caps.name.empty());
  EXPECT_GE(caps.arch, 50);
  EXPECT_GT(caps.sm_count, 0);
  EXPECT_GE(caps.max_threads_per_block, 256);
  EXPECT_GE(caps.max_shared_per_block, 48 * 1024);
  EXPECT_GT(caps.l2_bytes, 0);
  EXPECT_EQ(bmmc::device_arch(), caps.arch);
  std::cout << "[ INFO     ] " << caps.name << " sm_" << caps.arch << ", " << caps.sm_count << " SMs, "
            << caps.max_shared_per_block << " B shared/block (opt-in)\n";
}

TEST(CudaRuntime, LoadAndLaunchTrivialKernel) {
  if (!bmmc::gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  bmmc::KernelCache cache(memory_only());
  const bmmc::Kernel k = cache.get(kAffineSource, "affine");
  ASSERT_TRUE(k);
  const auto s = cache.stats();
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(s.loads, 1u);
  std::cout << "[ INFO     ] first JIT use: compile " << s.last_compile_ms << " ms, load " << s.last_load_ms
            << " ms\n";

  const unsigned n = (1u << 20) + 77;  // not a multiple of the block: exercises the bounds check
  const std::vector<int> in = random_nonzero(n, 1234);
  bmmc::DeviceBuffer d_in(n * sizeof(int)), d_out(n * sizeof(int));
  d_in.upload(in.data(), n * sizeof(int));
  d_out.fill_bytes(0xff);  // poison: a skipped element reads -1, which no in[i]*2+1 can be
  bmmc::Stream stream;
  const int* in_ptr = d_in.as<int>();
  int* out_ptr = d_out.as<int>();
  unsigned count = n;
  void* args[] = {&in_ptr, &out_ptr, &count};
  bmmc::launch(k, dim3((n + 255) / 256), dim3(256), 0, stream, args);
  stream.synchronize();
  std::vector<int> out(n);
  d_out.download(out.data(), n * sizeof(int));
  for (unsigned i = 0; i < n; ++i) ASSERT_EQ(out[i], in[i] * 2 + 1) << "at " << i;
}

TEST(CudaRuntime, CacheHitReturnsSameKernel) {
  if (!bmmc::gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  bmmc::KernelCache cache(memory_only());
  const bmmc::Kernel a = cache.get(kAffineSource, "affine");
  const bmmc::Kernel b = cache.get(kAffineSource, "affine");
  EXPECT_EQ(a.fn, b.fn);
  const auto s = cache.stats();
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(s.memory_hits, 1u);
  EXPECT_EQ(s.loads, 1u);
  // Handles outlive clear(): the library stays loaded while a Kernel holds it.
  cache.clear();
  bmmc::DeviceBuffer d(4 * sizeof(int));
  d.fill_bytes(0);
  const int* p = d.as<int>();
  int* q = d.as<int>() + 2;
  unsigned count = 2;
  void* args[] = {&p, &q, &count};
  bmmc::launch(a, dim3(1), dim3(32), 0, nullptr, args);
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST(CudaRuntime, WrongKernelNameIsACudaError) {
  if (!bmmc::gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  bmmc::KernelCache cache(memory_only());
  try {
    cache.get(kAffineSource, "no_such_kernel");
    FAIL() << "expected CudaError";
  } catch (const bmmc::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos) << e.what();
  }
}

TEST(CudaRuntime, LargeDynamicSharedMemory) {
  if (!bmmc::gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  const bmmc::DeviceCaps caps = bmmc::device_caps();
  const size_t shared = 96 * 1024;
  if (static_cast<size_t>(caps.max_shared_per_block) < shared)
    GTEST_SKIP() << caps.name << " allows only " << caps.max_shared_per_block << " B of shared memory per block";
  bmmc::KernelCache cache(memory_only());
  const bmmc::Kernel k = cache.get(kReverseSource, "reverse_block");
  const unsigned n = shared / sizeof(int);
  const std::vector<int> in = random_nonzero(n, 99);
  bmmc::DeviceBuffer d_in(n * sizeof(int)), d_out(n * sizeof(int));
  d_in.upload(in.data(), n * sizeof(int));
  d_out.fill_bytes(0xff);
  const int* in_ptr = d_in.as<int>();
  int* out_ptr = d_out.as<int>();
  unsigned count = n;
  void* args[] = {&in_ptr, &out_ptr, &count};
  bmmc::launch(k, dim3(1), dim3(1024), shared, nullptr, args);
  bmmc::launch(k, dim3(1), dim3(1024), shared, nullptr, args);  // the opt-in is remembered
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int> out(n);
  d_out.download(out.data(), n * sizeof(int));
  for (unsigned i = 0; i < n; ++i) ASSERT_EQ(out[i], in[n - 1 - i]) << "at " << i;
}

TEST(CudaRuntime, InvalidLaunchThrowsWithGeometry) {
  if (!bmmc::gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  bmmc::KernelCache cache(memory_only());
  const bmmc::Kernel k = cache.get(kAffineSource, "affine");
  const int* p = nullptr;
  int* q = nullptr;
  unsigned count = 0;
  void* args[] = {&p, &q, &count};
  try {
    bmmc::launch(k, dim3(1), dim3(2048), 0, nullptr, args);
    FAIL() << "a block of 2048 threads must not launch";
  } catch (const bmmc::CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("affine"), std::string::npos) << what;
    EXPECT_NE(what.find("(2048,1,1)"), std::string::npos) << what;
    // cudaLaunchKernel with a cudaKernel_t handle answers cudaErrorInvalidValue on CUDA 13.0 (seen on an H100),
    // where a classic <<<>>> launch answers cudaErrorInvalidConfiguration: either names the bad geometry.
    EXPECT_TRUE(e.code() == cudaErrorInvalidConfiguration || e.code() == cudaErrorInvalidValue) << what;
  }
  // The error was not sticky and was consumed: the context still works.
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_NO_THROW(bmmc::launch(k, dim3(1), dim3(32), 0, nullptr, args));
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST(CudaRuntime, OutOfMemoryNamesTheCall) {
  if (!bmmc::gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  try {
    bmmc::DeviceBuffer huge(std::size_t{1} << 50);
    FAIL() << "a 1 PiB allocation must fail";
  } catch (const bmmc::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cudaMalloc(&p, 1125899906842624) failed"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.code(), cudaErrorMemoryAllocation);
  }
}
