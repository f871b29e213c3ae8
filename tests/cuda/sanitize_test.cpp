// Hardening tests for the GPU path (TESTING.md).
//
// GpuSanitize.ManyRandomPlans is the workload scripts/gpu/sanitize.sh runs under compute-sanitizer's memcheck
// and racecheck: hundreds of small random plans of every variant, element size and n 5..14, each verified
// against the CPU reference. The arrays are small so the sanitizers' slowdown stays affordable, and the device
// buffers have exactly the array's size, so any read or write past the end is an out-of-bounds access the
// sanitizer reports (memcheck) — as is any shared-memory hazard between warps of a tile kernel (racecheck).
// It also runs as a plain gpu test: without the sanitizer it still checks every output.
//
// GpuConcurrency.SixteenThreadsOverlappingOneShotPermutes: 16 host threads call the one-shot bmmc::permute at
// the same moment with overlapping BMMCs on their own streams. Every result must equal the CPU reference and
// the kernel cache must compile each distinct kernel exactly once (KernelCache.SixteenThreadsCompileEachKeyOnce
// in tests/nvrtc covers the cache alone; this covers the cache + the front door's Permuter cache + launches
// together).
//
// GpuHardening.OutOfMemoryInATwoPassTemporaryIsAClearErrorAndRecoverable: device out-of-memory mid-call.
//
// Without a GPU every test reports SKIPPED.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/permute.hpp"
#include "cuda/gpu_test_support.hpp"
#include "bmmc/plan/gpu_policy.hpp"

namespace bmmc {
namespace {

using test::random_bytes;

// The first differing byte, or -1.
long first_difference(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  const auto m = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return m.first == a.end() && m.second == b.end() ? -1 : static_cast<long>(m.first - a.begin());
}

// How many plans ManyRandomPlans runs: BMMC_SANITIZE_PLANS overrides the default (the sanitizer script
// uses it to fit its time budget; never fewer than 200 there).
int plan_count() {
  if (const char* s = std::getenv("BMMC_SANITIZE_PLANS")) {
    const int v = std::atoi(s);
    if (v > 0) return v;
  }
  return 240;
}

struct Case {
  Variant variant;
  bool jit;
  const char* name;
};

// Every way a plan can run on the GPU: the paper's variants and ours through the JIT, and the precompiled
// table-driven (generic) kernels for the one-pass and naive plans.
constexpr Case kCases[] = {
    {Variant::Naive, true, "naive"},
    {Variant::Tiled, true, "tiled"},
    {Variant::TiledBanks, true, "tiled-banks"},
    {Variant::TiledBanksIters, true, "tiled-banks-iters"},
    {Variant::TwoPass, true, "two-pass"},
    {Variant::OnePass, true, "one-pass"},
    {Variant::OnePass, false, "generic one-pass"},
    {Variant::Naive, false, "generic naive"},
};

bool tiled(Variant v) { return v == Variant::Tiled || v == Variant::TiledBanks || v == Variant::TiledBanksIters; }

TEST(GpuSanitize, ManyRandomPlans) {
  REQUIRE_GPU();
  const int count = plan_count();
  std::mt19937_64 rng(20240611);
  const int ebs[] = {1, 2, 4, 8, 16};
  int ran = 0;
  std::set<std::string> variants_seen;
  for (int i = 0; i < count; ++i) {
    const Case& c = kCases[i % std::size(kCases)];
    const int n = 5 + static_cast<int>(rng() % 10);  // 5..14
    const int eb = ebs[rng() % 5];
    const std::uint64_t seed = rng();
    // Tiled variants need a tiled BMMC: every BPC is one (the preimages of output bits 0..4 are the tile's
    // columns); the others get general BMMCs half of the time.
    const bool bpc = tiled(c.variant) || i % 2;
    const Bmmc b = bpc ? random_bpc(n, seed) : random_bmmc(n, seed);
    GpuOptions o;
    o.jit = c.jit;
    o.policy.variant = c.variant;
    // Vary the lane access width of the JIT one-pass plans (the default is 8-byte lanes): 16-byte vectors
    // are the widest accesses, so the likeliest to run past an array's end.
    if (c.variant == Variant::OnePass && c.jit) {
      const int max_k = std::countr_zero(static_cast<unsigned>(16 / eb));
      o.policy.vector_bits = static_cast<int>(rng() % (max_k + 2)) - 1;  // -1 (default) .. max_k
    }
    const std::string what = fmt::format("plan #{}: {} n {} eb {} vector_bits {} {}:{}", i, c.name, n, eb,
                                         o.policy.vector_bits, bpc ? "random-bpc" : "random-bmmc", seed);
    SCOPED_TRACE(what);

    std::unique_ptr<CudaPermuter> p;
    try {
      p = std::make_unique<CudaPermuter>(b, eb, o);
    } catch (const std::invalid_argument& e) {
      // The planner refuses only combinations it documents (e.g. a tiled variant for a non-tiled BMMC);
      // none of the combinations above is one, so a refusal is a failure, not a skip.
      ADD_FAILURE() << "planner refused: " << e.what();
      continue;
    }
    const std::size_t bytes = (std::size_t{1} << n) * static_cast<std::size_t>(eb);
    const auto host_in = random_bytes(bytes, seed);
    std::vector<unsigned char> expect(bytes), got(bytes);
    permute_reference(b, host_in.data(), expect.data(), eb);
    DeviceBuffer in(bytes), out(bytes);  // exactly the array's size: one byte more is out of bounds
    in.upload(host_in.data(), bytes);
    out.fill_bytes(0xA5);  // poison: an element never written shows up as a wrong byte
    (*p)(in.get(), out.get());
    BMMC_CUDA_CHECK(cudaDeviceSynchronize());
    out.download(got.data(), bytes);
    const long diff = first_difference(expect, got);
    EXPECT_EQ(diff, -1) << "first wrong byte " << diff << " (element " << diff / eb << ")";
    ++ran;
    variants_seen.insert(c.name);
  }
  EXPECT_EQ(ran, count);
  if (count >= static_cast<int>(std::size(kCases))) {
    EXPECT_EQ(variants_seen.size(), std::size(kCases));
  }
  std::printf("[ INFO     ] GpuSanitize: %d random plans verified (%zu variants, n 5..14, elem_bytes 1..16)\n", ran,
              variants_seen.size());
}

TEST(GpuConcurrency, SixteenThreadsOverlappingOneShotPermutes) {
  REQUIRE_GPU();
  // A cache of our own, so the compile count is this test's alone. The front door's permute keeps its
  // Permuters keyed by the cache's address, so these caches are never freed during the process: a later
  // cache at a reused address would find this test's Permuters and skip its compiles.
  static std::vector<std::unique_ptr<KernelCache>> caches;
  caches.push_back(std::make_unique<KernelCache>(KernelCacheOptions{kCodegenVersion, "", false, {}}));
  KernelCache& cache = *caches.back();
  PermuterOptions o;
  o.backend = Backend::Cuda;
  o.gpu.cache = &cache;

  constexpr int kThreads = 16, kPerThread = 3, n = 16, eb = 4;
  // Six BMMCs; thread t runs maps t, t+1, t+2 (mod 6), so every map is requested by 8 threads at once.
  const std::vector<Bmmc> maps = {random_bmmc(n, 1), random_bmmc(n, 2), random_bpc(n, 3),
                                  bit_reverse(n),    gray(n),           transpose(n, 7)};
  // The distinct kernels those requests need, counted independently of the cache: (name, source) pairs.
  std::set<std::pair<std::string, std::string>> distinct;
  const DeviceCaps caps = device_caps();
  for (const Bmmc& b : maps)
    for (const KernelSource& ks : generate_cuda(make_plan(b, eb, caps, o.gpu.policy), o.gpu.codegen))
      distinct.emplace(ks.kernel_name, ks.source);

  const std::size_t bytes = (std::size_t{1} << n) * eb;
  const auto host_in = random_bytes(bytes, 99);
  std::vector<std::vector<unsigned char>> expect(maps.size(), std::vector<unsigned char>(bytes));
  for (std::size_t m = 0; m < maps.size(); ++m) permute_reference(maps[m], host_in.data(), expect[m].data(), eb);
  DeviceBuffer in(bytes);
  in.upload(host_in.data(), bytes);

  std::vector<std::vector<std::vector<unsigned char>>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        Stream stream;
        std::vector<DeviceBuffer> outs;
        for (int k = 0; k < kPerThread; ++k) {
          outs.emplace_back(bytes);
          outs.back().fill_bytes(0xA5);
        }
        BMMC_CUDA_CHECK(cudaDeviceSynchronize());  // the fills (legacy stream) are done before our stream runs
        start.arrive_and_wait();                    // all 16 ask at the same moment
        for (int k = 0; k < kPerThread; ++k)
          permute(maps[(t + k) % maps.size()], in.get(), outs[k].get(), eb, o, stream.get());
        stream.synchronize();
        for (int k = 0; k < kPerThread; ++k) {
          got[t].emplace_back(bytes);
          outs[k].download(got[t].back().data(), bytes);
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();

  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(errors[t], "") << "thread " << t;
    ASSERT_EQ(got[t].size(), static_cast<std::size_t>(kPerThread));
    for (int k = 0; k < kPerThread; ++k) {
      const std::size_t m = (t + k) % maps.size();
      EXPECT_EQ(first_difference(expect[m], got[t][k]), -1) << "thread " << t << " map " << m;
    }
  }
  const KernelCacheStats s = cache.stats();
  EXPECT_EQ(s.compiles, distinct.size()) << "each distinct kernel must be compiled exactly once";
  EXPECT_EQ(s.loads, distinct.size()) << "each distinct kernel must be loaded exactly once";
  EXPECT_EQ(s.disk_hits, 0u);
}

TEST(GpuHardening, OutOfMemoryInATwoPassTemporaryIsAClearErrorAndRecoverable) {
  REQUIRE_GPU();
  // Fill the device so that the input and output fit but a two-pass plan's stream-ordered temporary (one
  // more array) does not: the call must throw CudaError naming the allocation, leave the output as it was,
  // and the next call — with memory freed — must work (the error is not sticky).
  constexpr int n = 24, eb = 4;
  const std::size_t bytes = (std::size_t{1} << n) * eb;  // 64 MiB
  const Bmmc b = random_bmmc(n, 8);
  DeviceBuffer in(bytes), out(bytes);
  const auto host_in = random_bytes(bytes, 8);
  in.upload(host_in.data(), bytes);
  out.fill_bytes(0xA5);
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  std::size_t free_bytes = 0, total = 0;
  BMMC_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  void* ballast = nullptr;
  std::size_t ballast_bytes = free_bytes > bytes / 2 ? (free_bytes - bytes / 2) & ~((std::size_t{2} << 20) - 1) : 0;
  while (ballast_bytes > 0 && cudaMalloc(&ballast, ballast_bytes) != cudaSuccess) {
    (void)cudaGetLastError();  // OOM is not sticky; clear it and try a little less
    ballast_bytes -= std::min(ballast_bytes, std::size_t{256} << 20);
  }
  BMMC_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes >= bytes) {
    cudaFree(ballast);
    GTEST_SKIP() << "could not fill the device (" << free_bytes << " bytes still free)";
  }
  GpuOptions o;
  o.policy.variant = Variant::TwoPass;
  const CudaPermuter p(b, eb, o);
  ASSERT_GT(p.temp_bytes(), 0u);
  std::string message;
  try {
    p(in.get(), out.get());
    BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const CudaError& e) {
    message = e.what();
  }
  BMMC_CUDA_CHECK(cudaFree(ballast));
  EXPECT_NE(message.find("cudaMallocAsync(temp)"), std::string::npos) << "got: '" << message << "'";
  EXPECT_NE(message.find("out of memory"), std::string::npos) << message;
  std::vector<unsigned char> got(bytes), expect(bytes);
  out.download(got.data(), bytes);
  EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](unsigned char v) { return v == 0xA5; }))
      << "a permutation that failed to allocate wrote its output";
  p(in.get(), out.get());  // memory is back: the same Permuter now works
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  out.download(got.data(), bytes);
  permute_reference(b, host_in.data(), expect.data(), eb);
  EXPECT_EQ(first_difference(expect, got), -1);
}

}  // namespace
}  // namespace bmmc
