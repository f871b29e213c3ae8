// The fused strategy on the GPU (docs/DESIGN.md §10): the sorting network against std::sort for every key type
// and n = 0..20 (int32 up to 26), random / sorted / reversed / few-distinct keys, the three kernels; random parm
// programs with small tiles against the interpreter; float keys with NaN and ±0 bit for bit against the CPU's
// fused executor with the same cut; and nothing written outside the array. Without a GPU every test SKIPS.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "bmmc/combinators/execute_cpu.hpp"
#include "bmmc/combinators/interpret.hpp"
#include "bmmc/combinators/sorting_network.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/program_gpu.hpp"
#include "combinators/random_parm_program.hpp"
#include "cuda/gpu_test_support.hpp"

namespace bmmc {
namespace {

constexpr std::size_t kGuard = 4096;  // bytes of poison on each side of the array
constexpr unsigned char kPoison = 0xA5;

// Runs `lp` on a copy of `in` placed between two poisoned guards; fails the test if a guard byte changed.
template <class T>
std::vector<T> run_fused(const LoweredProgram& lp, const std::vector<T>& in, DType t, const GpuProgramOptions& o) {
  const GpuProgram program(lp, t, o);
  const std::size_t bytes = in.size() * sizeof(T);
  DeviceBuffer d(bytes + 2 * kGuard);
  std::vector<unsigned char> host(bytes + 2 * kGuard, kPoison);
  std::memcpy(host.data() + kGuard, in.data(), bytes);
  d.upload(host.data(), host.size());
  program(static_cast<unsigned char*>(d.get()) + kGuard);
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  d.download(host.data(), host.size());
  for (std::size_t i = 0; i < kGuard; ++i) {
    EXPECT_EQ(host[i], kPoison) << "written before the array, byte " << i;
    EXPECT_EQ(host[kGuard + bytes + i], kPoison) << "written after the array, byte " << i;
    if (host[i] != kPoison || host[kGuard + bytes + i] != kPoison) break;
  }
  std::vector<T> out(in.size());
  std::memcpy(out.data(), host.data() + kGuard, bytes);
  return out;
}

template <class T>
std::vector<std::vector<T>> inputs(int k) {
  const std::size_t size = std::size_t{1} << k;
  std::mt19937_64 rng(1000 + k);
  std::vector<T> random(size), sorted(size), reversed(size), few(size);
  for (std::size_t i = 0; i < size; ++i) {
    const auto r = static_cast<std::int64_t>(rng() % 2000001) - 1000000;
    random[i] = std::is_floating_point_v<T> ? static_cast<T>(r) / T(7) : static_cast<T>(std::is_signed_v<T> ? r : r + 1000000);
    if constexpr (sizeof(T) == 8 && !std::is_floating_point_v<T>) random[i] = static_cast<T>(rng());
    sorted[i] = static_cast<T>(i);
    reversed[i] = static_cast<T>(size - i);
    few[i] = static_cast<T>(rng() % 3);
  }
  return {random, sorted, reversed, few};
}

template <class T>
void check_sorts(DType t, const std::vector<int>& ks, const GpuProgramOptions& o = {}) {
  for (int k : ks) {
    const LoweredProgram lp = lower(sort_network(k));
    int which = 0;
    for (const auto& in : inputs<T>(k)) {
      auto expect = in;
      std::sort(expect.begin(), expect.end());
      ASSERT_EQ(run_fused(lp, in, t, o), expect) << "k " << k << " input " << which << " " << to_string(t);
      ++which;
    }
  }
}

std::vector<int> up_to(int last) {
  std::vector<int> ks;
  for (int k = 0; k <= last; ++k) ks.push_back(k);
  return ks;
}

// As bmmc sort runs the network: relaid out with no pass moving the input first, so the first fused pass reads
// the keys from the array and writes them into the temp buffer (out of place) and the last permutation writes
// them back.
GpuProgramOptions as_sort() {
  GpuProgramOptions o;
  o.input_order_free = true;
  return o;
}

TEST(GpuFused, Int32EveryKUpTo20) {
  REQUIRE_GPU();
  check_sorts<std::int32_t>(DType::Int32, up_to(20));
  check_sorts<std::int32_t>(DType::Int32, up_to(20), as_sort());
  GpuProgramOptions own_order;
  own_order.relayout = false;
  check_sorts<std::int32_t>(DType::Int32, {5, 12, 17, 20}, own_order);
}

TEST(GpuFused, EveryKeyTypeEveryKUpTo20) {
  REQUIRE_GPU();
  check_sorts<std::uint32_t>(DType::UInt32, up_to(20));
  check_sorts<float>(DType::Float32, up_to(20));
  check_sorts<std::int64_t>(DType::Int64, up_to(20));
  check_sorts<std::uint64_t>(DType::UInt64, up_to(20));
  check_sorts<double>(DType::Float64, up_to(20));
}

TEST(GpuFused, Int32Large) {
  REQUIRE_GPU();
  check_sorts<std::int32_t>(DType::Int32, {21, 22, 24, 26});
  check_sorts<std::int32_t>(DType::Int32, {21, 24, 26}, as_sort());
}

TEST(GpuFused, SharedKernelAndOtherCuts) {
  REQUIRE_GPU();
  GpuProgramOptions registers;  // one tile per block, no copy-ahead; 2^15 tiles (pipelined falls back to it there)
  registers.fused_kernel = FusedKernelKind::Registers;
  check_sorts<std::int32_t>(DType::Int32, {3, 10, 15, 19, 22}, registers);
  check_sorts<double>(DType::Float64, {11, 18}, registers);
  GpuProgramOptions t15;
  t15.tile_bits = 15;
  check_sorts<float>(DType::Float32, {15, 21}, t15);
  GpuProgramOptions shared;
  shared.fused_kernel = FusedKernelKind::Shared;
  check_sorts<std::int32_t>(DType::Int32, {1, 5, 9, 13, 16, 20}, shared);
  for (GpuProgramOptions o : {registers, shared, t15}) {  // each kernel kind reading from the other buffer
    o.input_order_free = true;
    check_sorts<std::int32_t>(DType::Int32, {9, 16, 20}, o);
    if (o.tile_bits != 15) check_sorts<double>(DType::Float64, {14}, o);  // 2^15 8-byte keys exceed 128 KiB
  }
  check_sorts<float>(DType::Float32, {7, 18}, shared);
  check_sorts<double>(DType::Float64, {12, 17}, shared);
  for (auto [t, c, r] : {std::tuple{13, 5, 5}, std::tuple{14, 3, 6}, std::tuple{12, 0, 4}, std::tuple{10, 2, 5}}) {
    GpuProgramOptions o;
    o.tile_bits = t;
    o.line_bits = c;
    o.reg_bits = r;
    check_sorts<std::int32_t>(DType::Int32, {6, 11, 17, 20}, o);
  }
}

TEST(GpuFused, RandomParmProgramsMatchTheInterpreter) {
  REQUIRE_GPU();
  std::mt19937_64 rng(18);
  for (int r = 0; r < 40; ++r) {
    const int n = 3 + static_cast<int>(rng() % 16);
    const Program p = test::random_parm_program(n, rng);
    std::vector<std::int32_t> in(std::size_t{1} << n);
    for (auto& x : in) x = static_cast<std::int32_t>(rng() % 1000);
    auto expect = in;
    interpret(p, std::span<std::int32_t>(expect));
    GpuProgramOptions o;
    o.tile_bits = 6 + static_cast<int>(rng() % 10);
    o.line_bits = static_cast<int>(rng() % 4);
    o.reg_bits = 3 + static_cast<int>(rng() % 3);
    o.fused_kernel = r % 4 == 3 ? FusedKernelKind::Shared : r % 4 == 1 ? FusedKernelKind::Registers : FusedKernelKind::Pipelined;
    const std::string what = fmt::format("r {} n {} tile {} line {} R {} {}", r, n, o.tile_bits, o.line_bits, o.reg_bits,
                                         to_string(o.fused_kernel));
    try {
      ASSERT_EQ(run_fused(lower(p), in, DType::Int32, o), expect) << what << "\n" << p.to_string();
    } catch (const std::exception& e) {
      FAIL() << what << ": " << e.what();
    }
  }
}

TEST(GpuFused, FloatNanAndSignedZerosBitForBitAsTheCpu) {
  REQUIRE_GPU();
  for (int k : {6, 12, 16}) {
    const LoweredProgram lp = lower(sort_network(k));
    std::mt19937_64 rng(k);
    std::vector<float> in(std::size_t{1} << k);
    for (auto& x : in) {
      const int c = static_cast<int>(rng() % 8);
      x = c == 0 ? std::numeric_limits<float>::quiet_NaN() : c == 1 ? -0.0f : c == 2 ? 0.0f : static_cast<float>(rng() % 100) - 50;
    }
    for (FusedKernelKind kind : {FusedKernelKind::Pipelined, FusedKernelKind::Registers, FusedKernelKind::Shared}) {
      GpuProgramOptions o;
      o.fused_kernel = kind;
      auto cpu = in;
      execute_cpu(lp, cpu.data(), DType::Float32, ExecStrategy::Fused, {}, fusion_options(o, DType::Float32, lp.n));
      const auto gpu = run_fused(lp, in, DType::Float32, o);
      ASSERT_EQ(std::memcmp(gpu.data(), cpu.data(), in.size() * sizeof(float)), 0) << "k " << k << " " << to_string(kind);
    }
  }
}

TEST(GpuFused, PassCountsOfTheNetwork) {
  REQUIRE_GPU();
  const LoweredProgram lp = lower(sort_network(24));
  // 2^13 tiles: relayout first, 19 fused passes, the last with the final permutation folded into its store
  const GpuProgram relaid(lp, DType::Int32);
  EXPECT_EQ(relaid.passes(), 20u);
  EXPECT_EQ(relaid.fused_passes(), 19u);
  EXPECT_EQ(relaid.folded_permutations(), 1u);
  EXPECT_EQ(relaid.temp_bytes(), std::size_t{4} << 24);
  const GpuProgram sort(lp, DType::Int32, as_sort());  // the first fused pass out of place: no copy back
  EXPECT_EQ(sort.passes(), 19u);
  EXPECT_EQ(sort.fused_passes(), 19u);
  EXPECT_EQ(sort.folded_permutations(), 1u);
  EXPECT_EQ(sort.temp_bytes(), std::size_t{4} << 24);
  GpuProgramOptions own_order;
  own_order.relayout = false;
  const GpuProgram own(lp, DType::Int32, own_order);
  EXPECT_EQ(own.passes(), 25u);
  EXPECT_EQ(own.fused_passes(), 25u);
  GpuProgramOptions t14 = as_sort();
  t14.tile_bits = 14;
  EXPECT_EQ(GpuProgram(lp, DType::Int32, t14).passes(), 16u);
  EXPECT_EQ(own.temp_bytes(), 0u);
}

// pass_ms runs the same passes as operator() (the result sorted), one time per pass, named by pass_names: the
// sort's out-of-place first pass, the fused ones, the last with the final permutation folded in; a program that
// copies back names the copy.
TEST(GpuFused, PassByPassTimes) {
  REQUIRE_GPU();
  const int k = 16;
  const LoweredProgram lp = lower(sort_network(k));
  const std::vector<std::int32_t> in = inputs<std::int32_t>(k)[0];
  auto expect = in;
  std::sort(expect.begin(), expect.end());
  const GpuProgram sort(lp, DType::Int32, as_sort());
  const std::size_t bytes = in.size() * sizeof(std::int32_t);
  DeviceBuffer d(bytes);
  d.upload(in.data(), bytes);
  const std::vector<double> ms = sort.pass_ms(d.get());
  const std::vector<std::string> names = sort.pass_names();
  ASSERT_EQ(ms.size(), sort.passes());
  ASSERT_EQ(names.size(), sort.passes());
  for (double t : ms) EXPECT_GT(t, 0.0);
  EXPECT_EQ(names.front(), "fused (out of place)");
  EXPECT_EQ(names.back(), "fused + permute");
  std::vector<std::int32_t> out(in.size());
  d.download(out.data(), bytes);
  EXPECT_EQ(out, expect);
  // A single permutation (an odd count, no fused pass) ends in the temp buffer and copies back.
  const GpuProgram one(lower(bmmc_program(bit_reverse(k))), DType::Int32);
  const std::vector<std::string> one_names = one.pass_names();
  ASSERT_EQ(one_names.size(), 2u);
  EXPECT_EQ(one_names[0], "permute");
  EXPECT_EQ(one_names[1], "copy back");
  EXPECT_EQ(one.pass_ms(d.get()).size(), 2u);
}

}  // namespace
}  // namespace bmmc
