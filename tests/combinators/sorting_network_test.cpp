// The §7.1 sorting network: its structure (column counts), the interpreter on small sizes, and the lowered
// program on the CPU (both strategies) sorting random, sorted, reversed and all-equal keys for every k ≤ 20.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <variant>
#include <vector>

#include "bmmc/combinators/execute_cpu.hpp"
#include "bmmc/combinators/interpret.hpp"
#include "bmmc/combinators/lower.hpp"
#include "bmmc/combinators/schedule.hpp"
#include "bmmc/combinators/sorting_network.hpp"

namespace bmmc {
namespace {

template <class T>
std::vector<std::vector<T>> inputs(int k, std::uint64_t seed) {
  const std::size_t size = std::size_t{1} << k;
  std::mt19937_64 rng(seed);
  std::vector<T> random(size), sorted(size), reversed(size), equal(size, T(7));
  for (std::size_t i = 0; i < size; ++i) {
    random[i] = static_cast<T>(static_cast<std::int64_t>(rng() % (2 * size + 1)) - static_cast<std::int64_t>(size));
    if constexpr (std::is_floating_point_v<T>) random[i] = random[i] * T(0.37);
    sorted[i] = static_cast<T>(i);
    reversed[i] = static_cast<T>(size - i);
  }
  return {random, sorted, reversed, equal};
}

TEST(SortingNetwork, HasKTimesKPlusOneOverTwoColumns) {
  for (int k = 1; k <= 12; ++k) {
    const LoweredProgram lp = lower(sort_network(k));
    EXPECT_EQ(lp.leaf_atoms, static_cast<std::size_t>(k * (k + 1) / 2)) << k;
    // Fusion leaves at most one permutation per leaf plus a trailing one.
    EXPECT_LE(lp.stages.size(), lp.leaf_atoms + 1);
    EXPECT_LT(lp.passes_permute_then_leaf(), lp.passes_unfused());
  }
}

TEST(SortingNetwork, InterpreterSortsSmallArrays) {
  for (int k = 0; k <= 11; ++k)
    for (auto v : inputs<std::int32_t>(k, k)) {
      auto expect = v;
      std::sort(expect.begin(), expect.end());
      interpret(sort_network(k), std::span<std::int32_t>(v));
      ASSERT_EQ(v, expect) << "k " << k;
    }
}

TEST(SortingNetwork, LoweredMatchesInterpreterExactly) {
  // Equal to the interpreter element by element (not just sorted): the lowering is the same program.
  for (int k = 1; k <= 10; ++k) {
    const Program p = sort_network(k);
    const LoweredProgram lp = lower(p);
    std::mt19937_64 rng(k);
    std::vector<std::int32_t> in(std::size_t{1} << k);
    for (auto& x : in) x = static_cast<std::int32_t>(rng() % 1000);
    auto expect = in;
    interpret(p, std::span<std::int32_t>(expect));
    for (ExecStrategy s : {ExecStrategy::Folded, ExecStrategy::PermuteThenLeaf, ExecStrategy::Fused}) {
      auto got = in;
      execute_cpu(lp, got.data(), DType::Int32, s, {}, {4, 2});
      ASSERT_EQ(got, expect) << "k " << k << " " << to_string(s);
    }
  }
}

template <class T>
void check_cpu_sorts(DType t, ExecStrategy s, int max_k, const FusionOptions& fusion = {14, 4}) {
  for (int k = 0; k <= max_k; ++k) {
    const LoweredProgram lp = lower(sort_network(k));
    int which = 0;
    for (auto v : inputs<T>(k, 100 + k)) {
      auto expect = v;
      std::sort(expect.begin(), expect.end());
      execute_cpu(lp, v.data(), t, s, {}, fusion);
      ASSERT_EQ(v, expect) << "k " << k << " input " << which << " " << to_string(s);
      ++which;
    }
  }
}

TEST(SortingNetwork, FoldedSortsInt32UpTo20) { check_cpu_sorts<std::int32_t>(DType::Int32, ExecStrategy::Folded, 20); }
TEST(SortingNetwork, FoldedSortsFloat32UpTo20) { check_cpu_sorts<float>(DType::Float32, ExecStrategy::Folded, 20); }
TEST(SortingNetwork, PermuteThenLeafSortsInt32UpTo16) {
  check_cpu_sorts<std::int32_t>(DType::Int32, ExecStrategy::PermuteThenLeaf, 16);
}
TEST(SortingNetwork, FusedSortsInt32UpTo20) { check_cpu_sorts<std::int32_t>(DType::Int32, ExecStrategy::Fused, 20); }
// As bmmc sort runs it on the CPU: relaid out with no pass moving the input first (input_order_free); tiles of 2^5
// so that the relayout wins at these sizes (at n = 12: no PermutePass first, the last one present).
TEST(SortingNetwork, FusedInputOrderFreeSortsInt32UpTo18) {
  FusionOptions sort{5, 2};
  sort.input_order_free = true;
  const auto passes = schedule(lower(sort_network(12)), ExecStrategy::Fused, sort);
  EXPECT_TRUE(std::holds_alternative<FusedLeafPass>(passes.front()));
  EXPECT_TRUE(std::holds_alternative<PermutePass>(passes.back()));
  check_cpu_sorts<std::int32_t>(DType::Int32, ExecStrategy::Fused, 18, sort);
}
TEST(SortingNetwork, FusedSortsFloat64UpTo14) { check_cpu_sorts<double>(DType::Float64, ExecStrategy::Fused, 14); }
TEST(SortingNetwork, OtherDTypes) {
  check_cpu_sorts<std::int64_t>(DType::Int64, ExecStrategy::Folded, 12);
  check_cpu_sorts<double>(DType::Float64, ExecStrategy::Folded, 12);
  check_cpu_sorts<std::uint32_t>(DType::UInt32, ExecStrategy::Folded, 12);
}

}  // namespace
}  // namespace bmmc
