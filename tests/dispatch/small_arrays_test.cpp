// Small arrays through the front door (issue 15): every element size, n = 0..16, through the cached
// bmmc::permute and a kept Permuter, against the reference — the sizes that now run single-threaded on the
// caller (no pool hand-off) and the first ones that use the worker pool; repeated calls hit the cache and
// reuse the same thread-local tile without carrying state from one call to the next.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/dispatch/permuter_cache.hpp"
#include "bmmc/permute.hpp"
#include "../cpu/cpu_features.hpp"

namespace bmmc {
namespace {

TEST(SmallArrays, EveryElementSizeUpToN16MatchesTheReference) {
  PermuterOptions cpu;
  cpu.backend = Backend::Cpu;
  std::mt19937_64 rng(15);
  for (int eb : {1, 2, 4, 8, 16})
    for (int n = 0; n <= 16; ++n) {
      const std::size_t bytes = (std::size_t{1} << n) * eb;
      std::vector<unsigned char> in(bytes), out(bytes), ref(bytes);
      std::vector<Bmmc> maps = {random_bmmc(n, 1), random_bpc(n, 2), identity(n)};
      if (n >= 1) maps.push_back(bit_reverse(n));
      for (const Bmmc& b : maps)
        for (int round = 0; round < 2; ++round) {  // the second call hits the cache
          for (auto& c : in) c = static_cast<unsigned char>(rng() | 1);
          std::memset(out.data(), 0, bytes);
          permute_reference(b, in.data(), ref.data(), eb);
          permute(b, in.data(), out.data(), eb, round == 0 ? PermuterOptions{} : cpu);
          ASSERT_EQ(std::memcmp(out.data(), ref.data(), bytes), 0)
              << eb << " B, n = " << n << ", round " << round << "\n" << b.to_string();
        }
      // A kept Permuter called on different arrays (its tile scratch is reused across calls).
      const Permuter p(random_bmmc(n, 3), eb, cpu);
      for (int round = 0; round < 3; ++round) {
        for (auto& c : in) c = static_cast<unsigned char>(rng() | 1);
        permute_reference(random_bmmc(n, 3), in.data(), ref.data(), eb);
        p(in.data(), out.data());
        ASSERT_EQ(std::memcmp(out.data(), ref.data(), bytes), 0) << eb << " B, n = " << n;
      }
    }
}

// The front door runs the direct loop (no tile) on arrays up to 1 MiB and the tile loop above (src/cpu/
// direct_blocks.hpp; the rule in docs/DESIGN.md §4.2; 512 KiB for the byte groups of 1/2-byte elements on
// CPUs with AVX-512 VBMI, 4 MiB for the 4/8-byte groups of 64-byte vectors on CPUs with AVX-512), and the
// cached Permuter is the one that ran.
TEST(SmallArrays, DirectLoopUpToOneMebibyte) {
  PermuterOptions cpu;
  cpu.backend = Backend::Cpu;
  const bool vbmi = test::cpu_has_vbmi(), wide = test::cpu_has_avx512();
  for (int eb : {1, 4, 8, 16}) {
    const int at_limit = (eb == 1 && vbmi ? 19 : (eb == 4 || eb == 8) && wide ? 22 : 20) -
                         __builtin_ctz(static_cast<unsigned>(eb));
    for (int n : {8, 14, at_limit})
      EXPECT_EQ(Permuter(random_bmmc(n, 1), eb, cpu).kernel_name().rfind("direct", 0), 0u) << eb << " B, n = " << n;
    EXPECT_EQ(Permuter(random_bmmc(at_limit + 1, 1), eb, cpu).kernel_name().find("direct"), std::string::npos)
        << eb << " B";
  }
}

TEST(SmallArrays, SpecCallsHitTheCache) {
  const int n = 10;
  std::vector<float> in(1 << n), out(1 << n), ref(1 << n);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) + 0.5f;
  const auto before = default_permuter_cache().stats();
  for (int r = 0; r < 5; ++r) permute("bit-reverse", in.data(), out.data(), n, 4);
  const auto after = default_permuter_cache().stats();
  EXPECT_GE(after.hits - before.hits, 4u);
  permute_reference(bit_reverse(n), in.data(), ref.data(), 4);
  EXPECT_EQ(out, ref);
}

}  // namespace
}  // namespace bmmc
