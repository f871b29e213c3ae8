// The digit plan's JIT source compiles with NVRTC (no GPU needed) for random maps and every element size.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "bmmc/codegen/digit_source.hpp"
#include "bmmc/cuda/kernel_cache.hpp"

namespace bmmc {
namespace {

TEST(DigitSource, CompilesForRandomMaps) {
  KernelCacheOptions o;
  o.use_disk = false;
  KernelCache cache(o);
  std::mt19937_64 rng(23);
  int compiled = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const int k = 1 + trial % 5;
    std::vector<Extent> shape;
    for (int a = 0; a < k; ++a) shape.push_back(1 + static_cast<Extent>(rng() % 200));
    std::vector<int> axes(static_cast<std::size_t>(k));
    std::iota(axes.begin(), axes.end(), 0);
    std::shuffle(axes.begin(), axes.end(), rng);
    std::vector<std::uint8_t> flip;
    std::vector<Extent> roll;
    for (int j = 0; j < k; ++j) {
      flip.push_back(static_cast<std::uint8_t>(rng() % 2));
      roll.push_back(static_cast<Extent>(rng() % static_cast<std::uint64_t>(shape[axes[j]])));
    }
    const DigitMap m(shape, axes, flip, roll);
    const int eb = 1 << (trial % 5);
    const KernelSource ks = generate_digit_cuda(plan_digits(m, eb));
    EXPECT_EQ(ks.kernel_name, "bmmc_digit");
    EXPECT_GT(ks.grid, 0u);
    EXPECT_FALSE(cache.cubin_for(ks.source, ks.kernel_name, 90).empty()) << ks.source;
    ++compiled;
  }
  EXPECT_EQ(compiled, 12);
  // Two rolled axes of one extent share one wrap function.
  const KernelSource two = generate_digit_cuda(plan_digits(DigitMap::roll({4, 5, 4}, {1, 2, 3}), 4));
  EXPECT_FALSE(cache.cubin_for(two.source, two.kernel_name, 90).empty());
}

}  // namespace
}  // namespace bmmc
