// GPU permutations against the CPU reference: random non-zero data, poisoned outputs, every element
// compared. Without a GPU every test reports SKIPPED.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstring>
#include <future>
#include <random>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/core/spec.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/permute.hpp"
#include "cuda/gpu_test_support.hpp"

namespace bmmc {
namespace {

using test::random_bytes;

// Runs `run(in, out)` on device copies of random data and compares with permute_reference.
template <class Run>
void check_against_reference(const Bmmc& b, int eb, const std::string& what, Run run) {
  const std::size_t bytes = (std::size_t{1} << b.n()) * eb;
  const auto host_in = random_bytes(bytes, b.matrix().row_list().empty() ? 1 : b.matrix().row(0) + eb);
  std::vector<unsigned char> expect(bytes), got(bytes);
  permute_reference(b, host_in.data(), expect.data(), eb);
  DeviceBuffer in(bytes), out(bytes);
  in.upload(host_in.data(), bytes);
  out.fill_bytes(0xA5);  // poison
  run(in.get(), out.get());
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  out.download(got.data(), bytes);
  const bool same = std::memcmp(expect.data(), got.data(), bytes) == 0;
  if (!same) {
    std::size_t first = 0;
    while (first < bytes && expect[first] == got[first]) ++first;
    ADD_FAILURE() << what << ": first wrong byte at " << first << " (element " << first / eb << ")";
  }
}

std::vector<std::pair<std::string, Bmmc>> named(int n) {
  return {{"bit-reverse", bit_reverse(n)}, {"reverse", reverse(n)},   {"rotate:3", rotate(n, 3)},
          {"transpose", transpose(n, n / 2)}, {"gray", gray(n)},    {"gray-inverse", gray_inverse(n)},
          {"parm:1", parm_matrix(n, 1)},    {"identity", identity(n)}};
}

bool tiled_variant(Variant v) {
  return v == Variant::Tiled || v == Variant::TiledBanks || v == Variant::TiledBanksIters;
}

TEST(GpuPermute, NamedMapsEveryVariantAndElementSize) {
  REQUIRE_GPU();
  const Variant variants[] = {Variant::Naive, Variant::Tiled, Variant::TiledBanks, Variant::TiledBanksIters,
                              Variant::TwoPass, Variant::OnePass};
  for (int n : {5, 10, 17}) {
    // Build (and JIT) every Permuter in parallel: the kernel cache compiles each distinct kernel once.
    std::vector<std::tuple<std::string, Bmmc, int, std::future<std::shared_ptr<CudaPermuter>>>> jobs;
    for (auto& [name, b] : named(n))
      for (Variant v : variants)
        for (int eb : {1, 2, 4, 8, 16}) {
          if (tiled_variant(v) && !b.is_tiled(kLaneBits)) continue;
          GpuOptions o;
          o.policy.variant = v;
          jobs.emplace_back(fmt::format("{} n {} {} eb {}", name, n, to_string(v), eb), b, eb,
                            std::async(std::launch::async, [b = b, eb, o] { return std::make_shared<CudaPermuter>(b, eb, o); }));
        }
    for (auto& [what, b, eb, fut] : jobs) {
      auto p = fut.get();
      check_against_reference(b, eb, what, [&](void* in, void* out) { (*p)(in, out); });
    }
  }
}

TEST(GpuPermute, RandomBmmcsAndBpcsAcrossSizes) {
  REQUIRE_GPU();
  const int sizes[] = {0, 1, 5, 10, 17, 20, 24, 28};
  const int ebs[] = {1, 2, 4, 8, 16};
  for (int i = 0; i < 64; ++i) {
    const int n = sizes[i % 8];
    const int eb = n >= 28 ? 4 : ebs[(i / 8) % 5];
    const Bmmc b = i % 2 ? random_bmmc(n, 100 + i) : random_bpc(n, 100 + i);
    for (bool jit : {true, false}) {
      PermuterOptions o;
      o.backend = Backend::Cuda;
      o.gpu.jit = jit;
      check_against_reference(b, eb, fmt::format("random #{} n {} eb {} {}", i, n, eb, jit ? "jit" : "generic"),
                              [&](void* in, void* out) { permute(b, in, out, eb, o); });
    }
    if (n >= 5 && n <= 24) {
      PermuterOptions o;
      o.gpu.policy.variant = Variant::TwoPass;
      check_against_reference(b, eb, fmt::format("random #{} two-pass", i),
                              [&](void* in, void* out) { permute(b, in, out, eb, o); });
    }
  }
}

TEST(GpuPermute, VectorWidthsAndIters) {
  REQUIRE_GPU();
  for (int eb : {1, 2, 4, 8}) {
    for (int k = 0; (eb << k) <= 16; ++k)
      for (int ept : {4, 16, 64}) {
        PermuterOptions o;
        o.gpu.policy.vector_bits = k;
        o.gpu.policy.elems_per_thread = std::max(ept, 1 << k);
        const Bmmc b = random_bmmc(20, 7 * k + eb + ept);
        check_against_reference(b, eb, fmt::format("eb {} k {} ept {}", eb, k, ept),
                                [&](void* in, void* out) { permute(b, in, out, eb, o); });
      }
  }
}

TEST(GpuPermute, LargeNWithEightByteElements) {
  REQUIRE_GPU();
  // 64-bit element indices (n > 32) need 2^33 · 8 B = 64 GiB per buffer: check n = 30 here (8 GiB) and
  // leave n = 32..33 to the benchmark machine's memory.
  const Bmmc b = random_bmmc(30, 5);
  check_against_reference(b, 8, "n 30 eb 8", [&](void* in, void* out) { permute(b, in, out, 8); });
}

TEST(GpuPermute, CacheHitsReturnTheSameKernel) {
  REQUIRE_GPU();
  KernelCache cache({kCodegenVersion, "", false});
  GpuOptions o;
  o.cache = &cache;
  const Bmmc b = random_bmmc(16, 1);
  CudaPermuter p1(b, 4, o), p2(b, 4, o);
  EXPECT_EQ(cache.stats().compiles, 1u);
  EXPECT_GE(cache.stats().memory_hits, 1u);
  (void)p1;
  (void)p2;
}

TEST(GpuPermute, TwoStreamsTwoPermutations) {
  REQUIRE_GPU();
  const Bmmc a = random_bmmc(22, 11), b = bit_reverse(22);
  const std::size_t bytes = (std::size_t{1} << 22) * 4;
  const auto host = random_bytes(bytes, 3);
  std::vector<unsigned char> ea(bytes), eb_(bytes), ga(bytes), gb(bytes);
  permute_reference(a, host.data(), ea.data(), 4);
  permute_reference(b, host.data(), eb_.data(), 4);
  DeviceBuffer in(bytes), oa(bytes), ob(bytes);
  in.upload(host.data(), bytes);
  oa.fill_bytes(0xA5);
  ob.fill_bytes(0xA5);
  Stream s1, s2;
  const PermuterOptions cuda{Backend::Cuda};
  Permuter pa(a, 4, cuda), pb(b, 4, cuda);
  for (int rep = 0; rep < 10; ++rep) {
    pa(in.get(), oa.get(), s1);
    pb(in.get(), ob.get(), s2);
  }
  s1.synchronize();
  s2.synchronize();
  oa.download(ga.data(), bytes);
  ob.download(gb.data(), bytes);
  EXPECT_EQ(ga, ea);
  EXPECT_EQ(gb, eb_);
}

TEST(GpuPermute, BadPointersAreRefusedBeforeAnyLaunch) {
  REQUIRE_GPU();
  const Bmmc b = random_bmmc(10, 1);
  DeviceBuffer buf(8192), other(4096);
  std::vector<int> host(1024);
  EXPECT_THROW(permute(b, nullptr, other.get(), 4), std::invalid_argument);
  // in == out is the in-place call (inplace_test.cpp); a partial overlap is refused.
  EXPECT_THROW(permute(b, buf.get(), static_cast<char*>(buf.get()) + 2048, 4), std::invalid_argument);  // overlap
  EXPECT_THROW(permute(b, static_cast<char*>(buf.get()) + 2, other.get(), 4), std::invalid_argument);   // unaligned
  EXPECT_THROW(permute(b, host.data(), other.get(), 4), std::invalid_argument);                         // host memory
  EXPECT_THROW(permute(b, buf.get(), other.get(), 3), std::invalid_argument);                           // element size
  try {
    permute(b, host.data(), other.get(), 4);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("host"), std::string::npos) << e.what();
  }
}

// Random bytes in a view `offset` bytes into a device allocation, permuted by `b` with permute() into a view as
// far into another: the views, the input, the reference result and what permute() wrote.
struct OffsetViews {
  DeviceBuffer in, out;
  char* in_view = nullptr;
  char* out_view = nullptr;
  std::vector<unsigned char> host, expect, got;
};

OffsetViews permute_offset_views(const Bmmc& b, int eb, std::size_t offset, std::uint64_t seed) {
  const std::size_t bytes = (std::size_t{1} << b.n()) * static_cast<std::size_t>(eb);
  OffsetViews v;
  v.in = DeviceBuffer(bytes + 16);
  v.out = DeviceBuffer(bytes + 16);
  v.in_view = static_cast<char*>(v.in.get()) + offset;
  v.out_view = static_cast<char*>(v.out.get()) + offset;
  v.host = random_bytes(bytes, seed);
  v.expect.resize(bytes);
  v.got.resize(bytes);
  permute_reference(b, v.host.data(), v.expect.data(), eb);
  BMMC_CUDA_CHECK(cudaMemcpy(v.in_view, v.host.data(), bytes, cudaMemcpyHostToDevice));
  BMMC_CUDA_CHECK(cudaMemset(v.out.get(), 0xA5, bytes + 16));  // poisoned: every byte must be written
  permute(b, v.in_view, v.out_view, eb);
  BMMC_CUDA_CHECK(cudaMemcpy(v.got.data(), v.out_view, bytes, cudaMemcpyDeviceToHost));
  return v;
}

TEST(GpuPermute, FrontDoorNarrowsLaneAccessesForOffsetViews) {
  REQUIRE_GPU();
  // A view that starts 4 bytes into an allocation cannot take the default 8-byte lane accesses: permute()
  // plans 4-byte ones instead (and caches that plan apart), a Permuter with the default width refuses.
  const Bmmc b = random_bmmc(16, 3);
  const std::size_t bytes = (std::size_t{1} << 16) * 4;
  OffsetViews v = permute_offset_views(b, 4, 4, 9);
  const std::vector<unsigned char>& host = v.host;
  const std::vector<unsigned char>& expect = v.expect;
  DeviceBuffer& in = v.in;
  DeviceBuffer& out = v.out;
  char* in4 = v.in_view;
  char* out4 = v.out_view;
  EXPECT_EQ(v.got, expect);
  const PermuterOptions narrowed = options_for_pointers({}, in4, out4, 4);
  EXPECT_EQ(narrowed.backend, Backend::Cuda);
  EXPECT_EQ(narrowed.gpu.policy.vector_bits, 0);
  EXPECT_EQ(options_for_pointers({}, in.get(), out.get(), 4).gpu.policy.vector_bits, -1);
  const Permuter wide(b, 4, PermuterOptions{Backend::Cuda});
  EXPECT_EQ(wide.alignment(), 8u);
  EXPECT_THROW(wide(in4, out4), std::invalid_argument);
  // 8-byte elements take 16-byte lanes by default (default_gpu_geometry): a view 8 bytes in narrows them.
  auto* in8 = static_cast<char*>(in.get()) + 8;
  auto* out8 = static_cast<char*>(out.get()) + 8;
  EXPECT_EQ(options_for_pointers({}, in8, out8, 8).gpu.policy.vector_bits, 0);
  EXPECT_EQ(options_for_pointers({}, in.get(), out.get(), 8).gpu.policy.vector_bits, -1);
  {
    // 1-byte elements 8 bytes in: 8-byte lanes, and still the 1-byte thread count (1024 for a random map's 2^16
    // tile, not 256 threads with 256 elements each); the bytes land where the reference puts them.
    const Bmmc b20 = random_bmmc(20, 5);
    const OffsetViews v8 = permute_offset_views(b20, 1, 8, 11);
    EXPECT_EQ(v8.got, v8.expect);
    const PermuterOptions o8 = options_for_pointers({}, v8.in_view, v8.out_view, 1);
    EXPECT_EQ(o8.gpu.policy.vector_bits, 3);
    const Permuter p8(b20, 1, o8);
    EXPECT_EQ(std::get<TilePass>(p8.plan().passes.at(0)).vector_bits, 3);
    EXPECT_EQ(std::get<TilePass>(p8.plan().passes.at(0)).threads_per_block(), 1024);
  }
  // run_trusted (no pointer queries) moves the same bytes and still refuses misaligned and overlapping calls.
  std::vector<unsigned char> trusted(bytes);
  DeviceBuffer in2(bytes), out2(bytes);
  in2.upload(host.data(), bytes);
  out2.fill_bytes(0xA5);
  wide.run_trusted(in2.get(), out2.get());
  BMMC_CUDA_CHECK(cudaMemcpy(trusted.data(), out2.get(), bytes, cudaMemcpyDeviceToHost));
  EXPECT_EQ(trusted, expect);
  EXPECT_THROW(wide.run_trusted(in4, out4), std::invalid_argument);
  EXPECT_THROW(wide.run_trusted(in.get(), in.get()), std::invalid_argument);
}

TEST(GpuPermute, DefaultGeometryMovesWholeRunsRight) {
  REQUIRE_GPU();
  // Maps that keep the low bits get 16-byte lanes and one vector per thread (plan/gpu_policy.hpp); 8-byte
  // elements 16-byte lanes everywhere. Every element size, against the reference over a poisoned output.
  for (int eb : {1, 2, 4, 8, 16}) {
    for (const char* spec : {"axes:16x64x1024:1,0,2", "axes:4x8x32x1024:2,0,1,3", "random-bmmc:5", "identity"}) {
      const Bmmc b = parse_spec(spec, 20);
      const std::size_t bytes = (std::size_t{1} << 20) * static_cast<std::size_t>(eb);
      const auto host = random_bytes(bytes, 31 + eb);
      std::vector<unsigned char> expect(bytes), got(bytes);
      permute_reference(b, host.data(), expect.data(), eb);
      DeviceBuffer in(bytes), out(bytes);
      in.upload(host.data(), bytes);
      out.fill_bytes(0xA5);
      const Permuter p(b, eb, PermuterOptions{Backend::Cuda});
      p(in.get(), out.get());
      out.download(got.data(), bytes);
      EXPECT_EQ(got, expect) << spec << ", " << eb << "-byte elements";
    }
  }
}

TEST(GpuPermute, FrontDoorRunsHostArraysOnTheGpu) {
  REQUIRE_GPU();
  const Bmmc b = random_bpc(18, 4);
  const std::size_t bytes = (std::size_t{1} << 18) * 2;
  const auto host = random_bytes(bytes, 5);
  std::vector<unsigned char> expect(bytes), got(bytes, 0xA5);
  permute_reference(b, host.data(), expect.data(), 2);
  EXPECT_EQ(permute_host(b, host.data(), got.data(), 2, PermuterOptions{Backend::Cuda}), Backend::Cuda);
  EXPECT_EQ(got, expect);
  // Auto with a host input and a device output is refused, not guessed.
  DeviceBuffer dev(bytes);
  EXPECT_THROW(permute(b, host.data(), dev.get(), 2), std::invalid_argument);
  // The CPU backend refuses device pointers instead of faulting.
  DeviceBuffer din(bytes);
  EXPECT_THROW(permute(b, din.get(), dev.get(), 2, PermuterOptions{Backend::Cpu}), std::invalid_argument);
}

}  // namespace
}  // namespace bmmc
