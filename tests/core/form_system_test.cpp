// FormSystem: the header's worked example verbatim, then by property over random systems: every accepted
// equation holds at the solution, the kernel is a basis of the forms' common null space (checked by
// enumeration), and a refused equation contradicts the accepted ones for some right-hand side.
#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "bmmc/core/form_system.hpp"
#include "bmmc/core/subspace.hpp"

namespace bmmc {
namespace {

TEST(FormSystem, WorkedExample) {
  FormSystem s(0b111);
  EXPECT_TRUE(s.add(0b011, 1));
  EXPECT_TRUE(s.add(0b110, 0));
  EXPECT_EQ(s.solution(), BitVec{0b001});
  EXPECT_EQ(s.kernel(), std::vector<BitVec>{0b111});
  EXPECT_FALSE(s.add(0b101, 0));
  EXPECT_EQ(s.rank(), 2);
  EXPECT_TRUE(s.add(0b101, 1));  // implied
  EXPECT_EQ(s.rank(), 2);
  EXPECT_THROW((void)s.solution(64), std::invalid_argument);
}

TEST(FormSystem, RandomSystemsSolveAndSpanTheirKernels) {
  std::mt19937_64 rng(18);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 10);
    const BitVec support = rng() & low_mask(n);
    const int systems = 1 + static_cast<int>(rng() % 4);
    FormSystem s(support);
    std::vector<std::pair<BitVec, std::uint64_t>> taken;
    for (int e = 0, count = static_cast<int>(rng() % 12); e < count; ++e) {
      const BitVec form = rng() & low_mask(n);
      const std::uint64_t rhs = rng() & low_mask(systems);
      const bool ok = s.add(form, rhs);
      if (ok) {
        taken.emplace_back(form, rhs);
        continue;
      }
      // Refused: no z on the support satisfies the taken equations and this one, for some system k.
      bool some_k_unsolvable = false;
      for (int k = 0; k < systems; ++k) {
        bool any = false;
        for (BitVec z = 0; z < (BitVec{1} << n) && !any; ++z) {
          if (z & ~support) continue;
          bool all = parity(form & z) == static_cast<int>((rhs >> k) & 1);
          for (const auto& [f, r] : taken) all = all && parity(f & z) == static_cast<int>((r >> k) & 1);
          any = all;
        }
        some_k_unsolvable = some_k_unsolvable || !any;
      }
      EXPECT_TRUE(some_k_unsolvable) << "refused a consistent equation " << form;
    }
    for (int k = 0; k < systems; ++k) {
      const BitVec z = s.solution(k);
      EXPECT_EQ(z & ~support, BitVec{0});
      for (const auto& [f, r] : taken) EXPECT_EQ(parity(f & z), static_cast<int>((r >> k) & 1));
    }
    // The kernel: independent, inside the support, and exactly the common null space.
    const std::vector<BitVec> ker = s.kernel();
    const Subspace span = Subspace::span(n, ker);
    EXPECT_EQ(span.dim(), static_cast<int>(ker.size()));
    for (BitVec z = 0; z < (BitVec{1} << n); ++z) {
      bool null = (z & ~support) == 0;
      for (const auto& [f, r] : taken) null = null && parity(f & z) == 0;
      EXPECT_EQ(span.contains(z), null) << "z = " << z;
    }
    EXPECT_EQ(s.rank() + static_cast<int>(ker.size()), std::popcount(support));
  }
}

}  // namespace
}  // namespace bmmc
