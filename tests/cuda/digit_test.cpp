// Any-shape maps on the GPU (JIT and precompiled kernels, in place) against the CPU executor, on random data with
// the output poisoned, over random shapes, flips, rolls and element sizes; and through the front door.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <numeric>

#include "plan/digit_map_support.hpp"
#include "bmmc/cpu/digit_executor.hpp"
#include "bmmc/cuda/digit_permute.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/permute.hpp"
#include "gpu_test_support.hpp"

namespace bmmc {
namespace {

void expect_gpu_matches_cpu(const DigitMap& m, int eb, bool jit, const DigitPolicy& policy = {}) {
  const auto bytes = static_cast<std::size_t>(m.size() * eb);
  const auto in = test::random_bytes(bytes, static_cast<std::uint64_t>(m.size() * 7 + eb));
  std::vector<unsigned char> want(bytes), got(bytes);
  CpuDigitPermuter(m, eb)(in.data(), want.data());
  DeviceBuffer din(bytes), dout(bytes);
  din.upload(in.data(), bytes);
  dout.fill_bytes(0xA5);
  GpuOptions g;
  g.jit = jit;
  // The default policy through the map's own constructor (the door's path), any other through a plan.
  const CudaDigitPermuter p = policy == DigitPolicy{} ? CudaDigitPermuter(m, eb, g)
                                                      : CudaDigitPermuter(plan_digits(m, eb, policy), g);
  p(din.get(), dout.get());
  dout.download(got.data(), bytes);
  ASSERT_EQ(got, want) << m.to_string() << " on " << shape_to_string(m.shape()) << " elem " << eb
                       << (jit ? " jit" : " generic") << "\n" << to_string(p.plan());
}

TEST(GpuDigit, RandomMapsJitAndGeneric) {
  REQUIRE_GPU();
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 60; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 6, 300, 1 << 18, 2);
    for (int eb : {1, 2, 3, 4, 8, 16}) {
      expect_gpu_matches_cpu(m, eb, true);
      if (trial % 4 == 0) expect_gpu_matches_cpu(m, eb, false);
    }
  }
}

TEST(GpuDigit, CoveringVectorsOfRandomMaps) {
  // Covering vectors on both sides forced wherever they are wider: rows starting anywhere in a vector, arrays that end inside
  // one (exactly sized buffers: compute-sanitizer's memcheck sees a load past the end), JIT and generic kernels.
  REQUIRE_GPU();
  std::mt19937_64 rng(1203);
  DigitPolicy cover;
  cover.cover = 1;
  int covered = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 5, 300, 1 << 17, 2);
    for (int eb : {1, 2, 4, 8}) {
      if (const DigitPlan c = plan_digits(m, eb, cover); !c.read_cover && !c.write_cover) continue;
      expect_gpu_matches_cpu(m, eb, true, cover);
      if (trial % 3 == 0) expect_gpu_matches_cpu(m, eb, false, cover);
      ++covered;
    }
  }
  EXPECT_GE(covered, 40);
}

TEST(GpuDigit, SuiteShapesSmall) {
  REQUIRE_GPU();
  expect_gpu_matches_cpu(DigitMap::transpose(std::vector<Extent>(14, 3), {}), 4, true);
  expect_gpu_matches_cpu(DigitMap::transpose({32, 72, 128, 3}, {0, 3, 1, 2}), 1, true);
  expect_gpu_matches_cpu(DigitMap(std::vector<Extent>{100, 103, 257}, {2, 0, 1}, {1, 0, 0}), 2, true);
  expect_gpu_matches_cpu(DigitMap::transpose({4, 207, 32, 128}, {0, 2, 1, 3}), 2, true);
  expect_gpu_matches_cpu(DigitMap(std::vector<Extent>{600, 800}, {1, 0}, {0, 0}, {400, 300}), 8, true);
  expect_gpu_matches_cpu(DigitMap::transpose({997, 1009}, {1, 0}), 4, false);
}

TEST(GpuDigit, InPlaceInvolutions) {
  REQUIRE_GPU();
  for (const DigitMap& m : {DigitMap::flip({7, 1011, 13}, {0, 2}), DigitMap::transpose({999, 999}, {1, 0})}) {
    const auto bytes = static_cast<std::size_t>(m.size() * 4);
    const auto in = test::random_bytes(bytes, 5);
    std::vector<unsigned char> want(bytes), got(bytes);
    CpuDigitPermuter(m, 4)(in.data(), want.data());
    DeviceBuffer d(bytes);
    d.upload(in.data(), bytes);
    permute(m, d.get(), d.get(), 4);
    d.download(got.data(), bytes);
    EXPECT_EQ(got, want) << m.to_string();
  }
}

TEST(GpuDigit, FrontDoorRunsBothFaces) {
  REQUIRE_GPU();
  for (const auto& [m, face] : {std::pair{DigitMap::transpose({64, 32}, {1, 0}), "cuda-jit"},
                                std::pair{DigitMap::transpose({63, 32}, {1, 0}), "cuda-digit-jit"}}) {
    const Permuter p(m, 4, PermuterOptions{Backend::Cuda});
    EXPECT_EQ(p.kernel_name(), face);
    const auto bytes = static_cast<std::size_t>(m.size() * 4);
    const auto in = test::random_bytes(bytes, 9);
    std::vector<unsigned char> want(bytes), got(bytes);
    CpuDigitPermuter(m, 4)(in.data(), want.data());
    DeviceBuffer din(bytes), dout(bytes);
    din.upload(in.data(), bytes);
    permute(m, din.get(), dout.get(), 4);
    dout.download(got.data(), bytes);
    EXPECT_EQ(got, want) << m.to_string();
    // A misaligned output is refused before anything runs.
    EXPECT_THROW(p(din.get(), static_cast<char*>(dout.get()) + 1), std::invalid_argument);
  }
}

TEST(GpuDigit, OffsetViewsRunWithNarrowerAccesses) {
  REQUIRE_GPU();
  // An image transpose whose plan wants 16-byte lanes, and a prime one whose covering reads do, called on pointers
  // one element past an allocation: the one-call door narrows the element and the vectors to the pointers'
  // alignment instead of faulting, with the JIT kernel and with the precompiled one.
  for (const auto& [m, jit] : {std::pair{DigitMap::transpose({4, 720, 3}, {0, 2, 1}), true},
                               std::pair{DigitMap::transpose({97, 101}, {1, 0}), true},
                               std::pair{DigitMap::transpose({97, 101}, {1, 0}), false}})
  for (int eb : {1, 2, 4}) {
    PermuterOptions options{Backend::Cuda};
    options.gpu.jit = jit;
    const auto bytes = static_cast<std::size_t>(m.size() * eb);
    const auto in = test::random_bytes(bytes, 21);
    std::vector<unsigned char> want(bytes), got(bytes);
    CpuDigitPermuter(m, eb)(in.data(), want.data());
    DeviceBuffer din(bytes + 16), dout(bytes + 16);
    auto* src = static_cast<unsigned char*>(din.get()) + eb;
    auto* dst = static_cast<unsigned char*>(dout.get()) + eb;
    ASSERT_EQ(cudaMemcpy(src, in.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    permute(m, src, dst, eb, options);
    ASSERT_EQ(cudaMemcpy(got.data(), dst, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(got, want) << m.to_string() << " elem " << eb << " jit " << jit;
    // A Permuter planned for aligned pointers refuses them, before anything runs.
    const Permuter p(m, eb, options);
    if (p.alignment() > static_cast<std::size_t>(eb)) EXPECT_THROW(p(src, dst), std::invalid_argument);
  }
}

}  // namespace
}  // namespace bmmc
