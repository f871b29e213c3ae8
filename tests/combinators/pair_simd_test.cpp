// The AVX2 compare-swaps of a pair leaf (src/combinators/pair_simd.hpp) against their definition, the scalar
// compare_swap of the CPU fused pass, bit for bit: every δ of small tiles and random ones of larger tiles, random
// orientation rows and sides, every key type, with the extremes of integers (where signed and unsigned orders
// disagree) and NaNs, infinities and both zeros of floats (where the order of the two members matters).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../../src/combinators/pair_simd.hpp"  // internal

namespace bmmc {
namespace {

// The definition: pairs (i, i ^ delta) with bit high(delta) of i clear; a = keys[i], b = keys[i ^ delta];
// mn = b < a ? b : a, mx = b < a ? a : b; i takes mn iff parity(orient & i) == s.
template <class T>
void reference(std::vector<T>& v, std::uint64_t delta, std::uint64_t orient, int s) {
  const int high = 63 - std::countl_zero(delta);
  for (std::uint64_t i = 0; i < v.size(); ++i) {
    if ((i >> high) & 1) continue;
    const T a = v[i], b = v[i ^ delta];
    const T mn = b < a ? b : a, mx = b < a ? a : b;
    const bool lf = (std::popcount(orient & i) & 1) == s;
    v[i] = lf ? mn : mx;
    v[i ^ delta] = lf ? mx : mn;
  }
}

template <class T>
std::vector<T> random_keys(std::size_t size, std::mt19937_64& rng) {
  std::vector<T> v(size);
  for (T& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      const T special[] = {std::numeric_limits<T>::quiet_NaN(), -std::numeric_limits<T>::quiet_NaN(),
                           std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(), T(0), -T(0), T(1)};
      x = rng() % 3 == 0 ? special[rng() % 7] : static_cast<T>(static_cast<std::int64_t>(rng() % 2001) - 1000) / 8;
    } else {
      const T extremes[] = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0), T(-1), T(1)};
      x = rng() % 4 == 0 ? extremes[rng() % 5] : static_cast<T>(rng() % 64 == 0 ? rng() : rng() % 16);  // ties too
    }
  }
  return v;
}

bool has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

template <class T>
void check(DType t, std::size_t size, std::uint64_t delta, std::uint64_t orient, int s, std::mt19937_64& rng) {
  std::vector<T> got = random_keys<T>(size, rng), want = got;
  reference(want, delta, orient, s);
  ASSERT_TRUE(compare_swap_pairs_avx2(got.data(), t, size, delta, orient, s));
  ASSERT_EQ(std::memcmp(got.data(), want.data(), size * sizeof(T)), 0)
      << to_string(t) << " size " << size << " delta " << delta << " orient " << orient << " s " << s;
}

void check_all(std::size_t size, std::uint64_t delta, std::uint64_t orient, int s, std::mt19937_64& rng) {
  check<std::int32_t>(DType::Int32, size, delta, orient, s, rng);
  check<std::uint32_t>(DType::UInt32, size, delta, orient, s, rng);
  check<float>(DType::Float32, size, delta, orient, s, rng);
  check<std::int64_t>(DType::Int64, size, delta, orient, s, rng);
  check<std::uint64_t>(DType::UInt64, size, delta, orient, s, rng);
  check<double>(DType::Float64, size, delta, orient, s, rng);
}

TEST(PairSimd, EveryDirectionOfSmallTilesEveryKeyType) {
  if (!has_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937_64 rng(5);
  for (std::size_t size : {8u, 16u, 64u})
    for (std::uint64_t delta = 1; delta < size; ++delta)
      for (int trial = 0; trial < 4; ++trial) check_all(size, delta, rng() & (size - 1), static_cast<int>(rng() & 1), rng);
}

TEST(PairSimd, RandomDirectionsOfLargeTiles) {
  if (!has_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937_64 rng(6);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t size = std::size_t{1} << (4 + rng() % 11);
    check_all(size, 1 + rng() % (size - 1), rng() & (size - 1), static_cast<int>(rng() & 1), rng);
  }
}

TEST(PairSimd, RefusesWhatItDoesNotRun) {
  std::uint32_t four[4] = {4, 3, 2, 1};  // 16 bytes: less than one vector, the scalar loop's
  EXPECT_FALSE(compare_swap_pairs_avx2(four, DType::UInt32, 4, 1, 0, 0));
  EXPECT_EQ(four[0], 4u);
}

}  // namespace
}  // namespace bmmc
