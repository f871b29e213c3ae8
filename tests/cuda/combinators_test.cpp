// The combinators on the GPU: lowered random programs and the §7.1 sorting network against the CPU
// interpreter / std::sort, both strategies, int32 and float32. Without a GPU every test reports SKIPPED.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "bmmc/combinators/interpret.hpp"
#include "bmmc/combinators/sorting_network.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/program_gpu.hpp"
#include "combinators/random_parm_program.hpp"
#include "cuda/gpu_test_support.hpp"

namespace bmmc {
namespace {


template <class T>
std::vector<T> run_gpu(const LoweredProgram& lp, const std::vector<T>& in, DType t, ExecStrategy s) {
  GpuProgramOptions o;
  o.strategy = s;
  // Permute-then-leaf has a permutation per stage (hundreds of distinct ones over these programs): the
  // precompiled generic kernels keep this test to seconds; fused_test.cpp runs the default, JIT, kernels.
  o.gpu.jit = false;
  const GpuProgram program(lp, t, o);
  const std::size_t bytes = in.size() * sizeof(T);
  DeviceBuffer d(bytes);
  d.upload(in.data(), bytes);
  program(d.get());
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> out(in.size());
  d.download(out.data(), bytes);
  return out;
}

TEST(GpuCombinators, RandomParmProgramsMatchTheInterpreter) {
  REQUIRE_GPU();
  std::mt19937_64 rng(11);
  for (int r = 0; r < 30; ++r) {
    const int n = 3 + static_cast<int>(rng() % 14);
    const Program p = test::random_parm_program(n, rng);
    std::vector<std::int32_t> in(std::size_t{1} << n);
    for (auto& x : in) x = static_cast<std::int32_t>(rng() % 1000);
    auto expect = in;
    interpret(p, std::span<std::int32_t>(expect));
    for (ExecStrategy s : {ExecStrategy::Folded, ExecStrategy::PermuteThenLeaf})
      ASSERT_EQ(run_gpu(lower(p), in, DType::Int32, s), expect) << "n " << n << " " << to_string(s) << "\n" << p.to_string();
  }
}

template <class T>
void check_sorts(DType t, ExecStrategy s, std::vector<int> ks) {
  for (int k : ks) {
    const LoweredProgram lp = lower(sort_network(k));
    const std::size_t size = std::size_t{1} << k;
    std::mt19937_64 rng(k);
    std::vector<T> random(size), sorted(size), reversed(size), equal(size, T(3));
    for (std::size_t i = 0; i < size; ++i) {
      random[i] = static_cast<T>(static_cast<std::int64_t>(rng() % 2000001) - 1000000) / T(std::is_floating_point_v<T> ? 7 : 1);
      sorted[i] = static_cast<T>(i);
      reversed[i] = static_cast<T>(size - i);
    }
    int which = 0;
    for (const auto& in : {random, sorted, reversed, equal}) {
      auto expect = in;
      std::sort(expect.begin(), expect.end());
      ASSERT_EQ(run_gpu(lp, in, t, s), expect) << "k " << k << " input " << which << " " << to_string(s);
      ++which;
    }
  }
}

TEST(GpuSortingNetwork, FoldedInt32EveryKUpTo20) {
  REQUIRE_GPU();
  std::vector<int> ks;
  for (int k = 1; k <= 20; ++k) ks.push_back(k);
  check_sorts<std::int32_t>(DType::Int32, ExecStrategy::Folded, ks);
}

TEST(GpuSortingNetwork, FoldedFloat32) {
  REQUIRE_GPU();
  check_sorts<float>(DType::Float32, ExecStrategy::Folded, {1, 5, 12, 17, 20, 24});
}

TEST(GpuSortingNetwork, PermuteThenLeaf) {
  REQUIRE_GPU();
  check_sorts<std::int32_t>(DType::Int32, ExecStrategy::PermuteThenLeaf, {1, 2, 6, 11, 16, 20});
  check_sorts<float>(DType::Float32, ExecStrategy::PermuteThenLeaf, {9, 18});
}

TEST(GpuSortingNetwork, Int32At2To28) {
  // 2^28 keys: std::sort would take most of the test budget, so check order plus an order-free checksum
  // (sum and xor of every key) instead of comparing with a sorted copy.
  REQUIRE_GPU();
  const int k = 28;
  std::mt19937 rng(28);
  std::vector<std::int32_t> in(std::size_t{1} << k);
  for (auto& x : in) x = static_cast<std::int32_t>(rng());
  auto checksum = [](const std::vector<std::int32_t>& v) {
    std::uint64_t sum = 0, x = 0;
    for (auto e : v) sum += static_cast<std::uint32_t>(e), x ^= static_cast<std::uint32_t>(e) * 0x9e3779b97f4a7c15ull;
    return std::make_pair(sum, x);
  };
  const auto out = run_gpu(lower(sort_network(k)), in, DType::Int32, ExecStrategy::Folded);
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
  EXPECT_EQ(checksum(out), checksum(in));
}

}  // namespace
}  // namespace bmmc
