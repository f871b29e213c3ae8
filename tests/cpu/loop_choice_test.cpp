// The per-CPU choice between the register-transpose and gather loops (src/cpu/loop_choice.hpp): made once
// per process and class, so every Permuter of a class runs the same loop — also when many threads prepare
// them at once —; explicit CpuPolicy::register_transpose values override it; either choice is correct.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cpu/reference.hpp"

namespace bmmc {
namespace {

// The choice is the tile loops' (the direct loops of small arrays have their own rule: direct_test.cpp).
const CpuPolicy kTiled{0, -1, std::nullopt, false};

TEST(CpuLoopChoice, DeterministicWithinTheProcess) {
  for (int eb : {1, 2, 4, 8, 16})
    for (int n : {9, 14, 24}) {  // 24: the streamed-output class for every element size
      const Bmmc general = random_bmmc(n, 3), bpc = bit_reverse(n);
      const std::string g = CpuPermuter(general, eb, kTiled).kernel_name(), b = CpuPermuter(bpc, eb, kTiled).kernel_name();
      for (std::uint64_t seed : {4, 5, 6}) {
        EXPECT_EQ(CpuPermuter(random_bmmc(n, seed), eb, kTiled).kernel_name(), g) << eb << " B, n = " << n;
        EXPECT_EQ(CpuPermuter(random_bpc(n, seed), eb, kTiled).kernel_name(), b) << eb << " B, n = " << n;
      }
      // From several threads at once: still one answer.
      std::vector<std::string> names(8);
      std::vector<std::thread> threads;
      for (int t = 0; t < 8; ++t)
        threads.emplace_back([&, t] { names[t] = CpuPermuter(random_bmmc(n, 10 + t), eb, kTiled).kernel_name(); });
      for (auto& t : threads) t.join();
      for (const std::string& name : names) EXPECT_EQ(name, g) << eb << " B, n = " << n;
      if (eb == 16) EXPECT_EQ(g, "gather") << "16-byte elements have no transpose loop";
    }
}

TEST(CpuLoopChoice, ExplicitPolicyOverrides) {
  const Bmmc b = random_bmmc(16, 1);
  EXPECT_EQ(CpuPermuter(b, 4, CpuPolicy{0, -1, false, false}).kernel_name(), "gather");
  const std::string forced = CpuPermuter(b, 4, CpuPolicy{0, -1, true, false}).kernel_name();
  EXPECT_TRUE(forced == "transpose-avx2" || forced == "gather") << forced;  // gather: a CPU without AVX2
  const std::string chosen = CpuPermuter(b, 4, kTiled).kernel_name();
  EXPECT_TRUE(chosen == forced || chosen == "gather") << chosen;
}

TEST(CpuLoopChoice, ChosenLoopIsCorrect) {
  for (int eb : {1, 2, 4, 8})
    for (const Bmmc& b : {random_bmmc(17, 7), bit_reverse(17), gray(17)}) {
      const std::size_t bytes = (std::size_t{1} << b.n()) * eb;
      std::vector<unsigned char> in(bytes), out(bytes, 0xa5), ref(bytes);
      for (std::size_t i = 0; i < bytes; ++i) in[i] = static_cast<unsigned char>(1 + i * 131 % 251);
      permute_reference(b, in.data(), ref.data(), eb);
      CpuPermuter(b, eb)(in.data(), out.data());
      EXPECT_EQ(std::memcmp(out.data(), ref.data(), bytes), 0) << eb << " B\n" << b.to_string();
    }
}

}  // namespace
}  // namespace bmmc
