// The CUDA in-place permuter (cuda/inplace.hpp) against the CPU reference: random involutions, BMMCs, BPCs,
// bit swaps (masked too), named maps, every element size, n = 0..20 and n = 30 (1 GiB), JIT and the generic
// kernel; random data with no zero byte. GpuSanitize.InPlacePlans is the workload scripts/gpu/sanitize.sh runs
// under compute-sanitizer (memcheck and racecheck), beside GpuSanitize.ManyRandomPlans.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bmmc/core/involution.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/inplace.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/permute.hpp"
#include "gpu_test_support.hpp"

namespace bmmc {
namespace {

using test::random_bytes;


// Runs the in-place permuter on random data on the device and compares with the reference.
void expect_matches(const CudaInPlacePermuter& p, const std::string& what) {
  const InPlacePlan& plan = p.plan();
  const int n = plan.n(), eb = plan.elem_bytes;
  const std::size_t bytes = (std::size_t{1} << n) * eb;
  const auto host = random_bytes(bytes, n * 1009 + eb);
  std::vector<unsigned char> want(bytes), got(bytes);
  if (plan.mask_bits) {
    // Masked swaps: element x moves only where its mask bits match.
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << n); ++x) {
      const std::uint64_t y = (x & plan.mask_bits) == plan.mask_value ? plan.bmmc.apply(x) : x;
      std::memcpy(&want[y * eb], &host[x * eb], eb);
    }
  } else {
    permute_reference(plan.bmmc, host.data(), want.data(), eb);
  }
  DeviceBuffer d(bytes);
  d.upload(host.data(), bytes);
  p(d.get());
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  d.download(got.data(), bytes);
  EXPECT_TRUE(got == want) << what << " (" << plan.route << ", " << plan.passes.size() << " passes)";
}

TEST(GpuInPlace, EveryClassEveryElementSize) {
  REQUIRE_GPU();
  for (int eb : {1, 2, 4, 8, 16})
    for (int n : {0, 3, 5, 8, 12, 16, 20})
      for (std::uint64_t seed = 0; seed < 2; ++seed) {
        const std::string at = fmt::format("n={} eb={} seed={}", n, eb, seed);
        expect_matches(CudaInPlacePermuter(random_involution(n, seed + 5 * n), eb), "involution " + at);
        expect_matches(CudaInPlacePermuter(random_bmmc(n, seed), eb), "bmmc " + at);
        expect_matches(CudaInPlacePermuter(Bmmc(random_bpc(n, seed).matrix(), (seed * 0x9e37) & low_mask(n)), eb),
                       "bpc " + at);
      }
}

TEST(GpuInPlace, NamedMapsSwapsAndMasks) {
  REQUIRE_GPU();
  const int n = 18;
  for (const Bmmc& f : {bit_reverse(n), gray(n), reverse(n), transpose(n, 9), rotate(n, 5), swap_index_bits(n, {{16, 17}}),
                        swap_index_bits(n, {{0, 17}}), swap_index_bits(n, {{0, 5}, {3, 16}, {7, 12}})})
    for (int eb : {4, 8})
      expect_matches(CudaInPlacePermuter(f, eb), f.to_string());
  GpuOptions generic;
  generic.jit = false;
  expect_matches(CudaInPlacePermuter(random_bmmc(n, 9), 8, generic), "generic kernel");
  for (auto [bits, value] : {std::pair<BitVec, BitVec>{1u << 17, 1u << 17}, {(1u << 2) | (1u << 15), 1u << 2}})
    expect_matches(CudaInPlacePermuter(make_swap_plan(n, {{0, 9}, {5, 16}}, 8, {}, bits, value)),
                   fmt::format("masked swaps {:#x}={:#x}", bits, value));
  // Direct passes (swaps among high bits carry the low ones), masked on a lane bit and a block bit, every size.
  for (int eb : {1, 2, 4, 8, 16}) {
    const InPlacePlan plan = make_swap_plan(n, {{10, 16}, {12, 17}}, eb, {}, (1u << 7) | (1u << 14), 1u << 7);
    ASSERT_TRUE(std::holds_alternative<NaiveInvolutionPass>(plan.passes[0]));
    ASSERT_GT(std::get<NaiveInvolutionPass>(plan.passes[0]).vector_bits + (eb == 16), 0);
    expect_matches(CudaInPlacePermuter(plan), fmt::format("direct masked swaps eb {}", eb));
  }
}

TEST(GpuInPlace, OneGiBArrays) {
  REQUIRE_GPU();
  // n = 30 with one-byte elements: the full index range the issue asks for, in 1 GiB.
  for (const Bmmc& f : {swap_index_bits(30, {{28, 29}}), bit_reverse(30), random_bmmc(30, 4)})
    expect_matches(CudaInPlacePermuter(f, 1), f.to_string().substr(0, 40));
}

TEST(GpuInPlace, FrontDoor) {
  REQUIRE_GPU();
  const int n = 14, eb = 4;
  const std::size_t bytes = (std::size_t{1} << n) * eb;
  const auto host = random_bytes(bytes, 3);
  std::vector<unsigned char> want(bytes), got(bytes);
  const Bmmc f = random_bmmc(n, 12);
  permute_reference(f, host.data(), want.data(), eb);
  DeviceBuffer d(2 * bytes);
  d.upload(host.data(), bytes);
  permute(f, d.get(), d.get(), eb);  // identical in and out: in place
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  d.download(got.data(), bytes);
  EXPECT_TRUE(got == want);
  // Partially overlapping buffers are refused before anything is written.
  auto* base = static_cast<unsigned char*>(d.get());
  EXPECT_THROW(permute(f, base, base + 64, eb), std::invalid_argument);
  d.download(got.data(), bytes);
  EXPECT_TRUE(got == want);
  // swap_index_bits with a mask through the front door.
  d.upload(host.data(), bytes);
  swap_index_bits(d.get(), n, eb, {{0, 13}}, BitVec{1} << 5, 0);
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  d.download(got.data(), bytes);
  const Bmmc s = swap_index_bits(n, {{0, 13}});
  for (std::uint64_t x = 0; x < (std::uint64_t{1} << n); ++x) {
    const std::uint64_t y = (x >> 5) & 1 ? x : s.apply(x);
    ASSERT_EQ(std::memcmp(&got[y * eb], &host[x * eb], eb), 0) << x;
  }
  // Host memory handed to the CUDA in-place permuter is refused.
  std::vector<std::uint32_t> h(1u << n);
  EXPECT_THROW(CudaInPlacePermuter(f, eb)(h.data()), std::invalid_argument);
}

int inplace_plan_count() {
  const char* env = std::getenv("BMMC_SANITIZE_PLANS");
  return env ? std::max(1, std::atoi(env) / 2) : 100;
}

TEST(GpuSanitize, InPlacePlans) {
  REQUIRE_GPU();
  const int count = std::max(100, inplace_plan_count());
  std::mt19937_64 rng(20261123);
  const int ebs[] = {1, 2, 4, 8, 16};
  for (int i = 0; i < count; ++i) {
    const int n = 5 + static_cast<int>(rng() % 10);
    const int eb = ebs[rng() % 5];
    const std::uint64_t seed = rng();
    const Bmmc f = i % 4 == 0   ? random_involution(n, seed)
                   : i % 4 == 1 ? random_bmmc(n, seed)
                   : i % 4 == 2 ? random_bpc(n, seed)
                                : swap_index_bits(n, {{n - 1, n - 2 - static_cast<int>(seed % 3)}});  // often direct
    GpuOptions o;
    o.jit = i % 10 != 9;
    expect_matches(CudaInPlacePermuter(f, eb, o), fmt::format("in-place plan #{} n {} eb {} seed {}", i, n, eb, seed));
  }
  std::printf("[ INFO     ] GpuSanitize: %d random in-place plans verified\n", count);
}

}  // namespace
}  // namespace bmmc
