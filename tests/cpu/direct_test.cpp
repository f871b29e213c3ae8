// The direct loops for in-cache arrays (src/cpu/direct_blocks.hpp) against the reference permutation:
// n = 0..20, every element size, random BMMCs and BPCs with and without complements, named maps, the
// transposing loops (AVX2 blends and lane permutes, AVX-512 groups of 64-byte vectors, byte groups where the
// CPU has AVX-512 VBMI) and the walk, 1 and 2 threads, inputs and outputs offset by one element from a cache
// line (unaligned vector accesses); and where the size rule picks them: the CPU's own one-pass plan up to
// 1 MiB (4 MiB for the 64-byte groups), never a plan handed in unless CpuPolicy::direct asks for it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cpu/reference.hpp"
#include "cpu_features.hpp"

namespace bmmc {
namespace {

using test::cpu_has_avx2;
using test::cpu_has_avx512;
using test::cpu_has_vbmi;

// 64-byte aligned storage with room for an offset.
struct Buf {
  explicit Buf(std::size_t bytes) : words(bytes / 8 + 24, 0) {}
  unsigned char* at(std::size_t offset) {
    auto p = reinterpret_cast<std::uintptr_t>(words.data());
    return reinterpret_cast<unsigned char*>((p + 63) & ~std::uintptr_t{63}) + offset;
  }
  std::vector<std::uint64_t> words;
};

Bmmc with_complement(const Bmmc& b, std::uint64_t seed) {
  if (b.n() == 0) return b;
  std::mt19937_64 rng(seed);
  return Bmmc(b.matrix(), rng() & ((BitVec{1} << b.n()) - 1));
}

// Runs a CpuPermuter with `policy` on inputs/outputs at the given byte offsets and compares with the
// reference; returns the loop that ran.
std::string check(const Bmmc& b, int eb, const CpuPolicy& policy, std::size_t in_off, std::size_t out_off,
                  std::uint64_t seed) {
  const std::size_t bytes = (std::size_t{1} << b.n()) * eb;
  Buf in(bytes), out(bytes), ref(bytes);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < bytes; ++i) in.at(in_off)[i] = static_cast<unsigned char>(1 + rng() % 255);
  std::memset(out.at(out_off), 0xa5, bytes);
  permute_reference(b, in.at(in_off), ref.at(0), eb);
  const CpuPermuter p(b, eb, policy);
  p(in.at(in_off), out.at(out_off));
  EXPECT_EQ(std::memcmp(out.at(out_off), ref.at(0), bytes), 0)
      << p.kernel_name() << ", n = " << b.n() << ", " << eb << " B, threads " << policy.threads << ", offsets "
      << in_off << "/" << out_off << "\n"
      << b.to_string();
  return p.kernel_name();
}

std::vector<Bmmc> maps_for(int n, std::uint64_t seed) {
  std::vector<Bmmc> maps = {random_bmmc(n, seed), random_bpc(n, seed), with_complement(random_bmmc(n, seed + 7), seed),
                            with_complement(random_bpc(n, seed + 7), seed), identity(n), bit_reverse(n)};
  if (n >= 1) {
    maps.push_back(with_complement(bit_reverse(n), seed + 1));
    maps.push_back(gray(n));
    maps.push_back(rotate(n, 1));
    maps.push_back(transpose(n, n / 2));
    maps.push_back(reverse(n));
  }
  return maps;
}

// The direct loop at every size; avx512 = false: what a CPU with AVX2 only runs.
CpuPolicy forced(int threads, std::optional<bool> transposes, bool avx512 = true) {
  return CpuPolicy{threads, -1, transposes, true, avx512};
}

TEST(CpuDirect, EveryElementSizeAndMapUpToN14) {
  for (int eb : {1, 2, 4, 8, 16})
    for (int n = 0; n <= 14; ++n)
      for (const Bmmc& b : maps_for(n, static_cast<std::uint64_t>(n * 10 + eb))) {
        const auto seed = static_cast<std::uint64_t>(n * 1000 + eb);
        check(b, eb, forced(1, std::nullopt), 0, 0, seed);
        check(b, eb, forced(1, std::nullopt, false), 0, 0, seed + 2);  // the AVX2 loops
        check(b, eb, forced(1, false), 0, 0, seed + 1);                // the walk
      }
}

TEST(CpuDirect, ManyRandomMapsHitBothTransposeLoops) {
  // Random BMMCs and BPCs of 4- and 8-byte elements, many seeds: the blend loop with and without the lane
  // XOR (Mjk singular or not) and, for maps that keep low bits in place, the lane-permuting loop.
  int blend = 0, permute = 0;
  for (int eb : {4, 8})
    for (int n : {6, 7, 9, 12})
      for (std::uint64_t seed = 1; seed <= 24; ++seed)
        for (const Bmmc& b : {random_bmmc(n, seed), random_bpc(n, seed), with_complement(random_bmmc(n, seed), seed)}) {
          const std::string k = check(b, eb, forced(1, true, false), 0, 0, seed);
          blend += k == "direct-blend-avx2";
          permute += k == "direct-transpose-avx2";
        }
  if (cpu_has_avx2()) {
    EXPECT_GT(blend, 100);
    EXPECT_GT(permute, 0);
  }
}

TEST(CpuDirect, ManyRandomMapsHitTheWideGroups) {
  // 4- and 8-byte elements where the CPU has AVX-512: groups of 16×16 and 8×8 elements in whole 64-byte lines
  // for every map with n ≥ 2W (random BMMCs exchange all lane bits and permute lanes, BPCs fewer, identity
  // none), with and without complements, one and two threads, unaligned, against the reference.
  if (!cpu_has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512: 4/8-byte maps take the AVX2 loops (tested above)";
  int groups = 0, checked = 0;
  for (int eb : {4, 8})
    for (int n : {6, 8, 9, 13, 16})
      for (std::uint64_t seed = 1; seed <= 12; ++seed)
        for (const Bmmc& b : {random_bmmc(n, seed), random_bpc(n, seed), with_complement(random_bmmc(n, seed), seed),
                              with_complement(random_bpc(n, seed + 3), seed)}) {
          const auto off = static_cast<std::size_t>(seed % 3 == 0 ? eb : 0);
          const std::string k = check(b, eb, forced(1 + static_cast<int>(seed % 2), true), off, off, seed);
          ++checked;
          groups += k == "direct-transpose-avx512";
          if (n < (eb == 4 ? 8 : 6)) EXPECT_NE(k, "direct-transpose-avx512") << "n below 2W has no 64-byte group";
        }
  EXPECT_EQ(groups, checked - 12 * 4) << "every map with n >= 2W (4-byte n = 6 has none)";
  for (int eb : {4, 8}) {  // identity, gray and bit-reverse: no, few and all exchanges, no lane permutes
    EXPECT_EQ(check(identity(12), eb, forced(1, true), 0, 0, 1), "direct-transpose-avx512");
    EXPECT_EQ(check(gray(12), eb, forced(2, true), static_cast<std::size_t>(eb), 0, 2), "direct-transpose-avx512");
    EXPECT_EQ(check(with_complement(bit_reverse(15), 9), eb, forced(1, true), 0, 0, 3), "direct-transpose-avx512");
  }
}

TEST(CpuDirect, ManyRandomMapsHitTheByteGroups) {
  // 1- and 2-byte elements where the CPU has AVX-512 VBMI: groups of 32×32 and 16×16 (random BMMCs exchange
  // all lane bits, random BPCs that keep low bits in place fewer, identity none, gray few), with and without
  // complements, against the reference.
  if (!cpu_has_vbmi()) GTEST_SKIP() << "this CPU has no AVX-512 VBMI (+BW, VL): 1/2-byte maps take the walk (tested above)";
  int groups = 0;
  for (int eb : {1, 2})
    for (int n : {10, 11, 13, 16})
      for (std::uint64_t seed = 1; seed <= 12; ++seed)
        for (const Bmmc& b : {random_bmmc(n, seed), random_bpc(n, seed), with_complement(random_bmmc(n, seed), seed),
                              with_complement(random_bpc(n, seed + 3), seed)})
          groups += check(b, eb, forced(1, true), 0, 0, seed).starts_with("direct-transpose-avx512vbmi");
  EXPECT_EQ(groups, 2 * 4 * 12 * 4);
  for (int eb : {1, 2}) {  // identity and gray keep low bits: few or no exchanges
    // 2-byte elements take 64-byte vectors from n = 2W = 10 on, 32-byte ones below.
    const std::string name = eb == 2 ? "direct-transpose-avx512vbmi-64" : "direct-transpose-avx512vbmi";
    EXPECT_EQ(check(identity(12), eb, forced(1, true), 0, 0, 1), name);
    EXPECT_EQ(check(gray(12), eb, forced(2, true), static_cast<std::size_t>(eb), 0, 2), name);
  }
  EXPECT_EQ(check(random_bmmc(9, 4), 2, forced(1, true), 0, 0, 3), "direct-transpose-avx512vbmi") << "n < 10";
  // 2-byte groups of 64-byte vectors with 2 threads, unaligned, and bit-reverse with a complement.
  for (int n : {10, 11, 15})
    for (const Bmmc& b : {random_bmmc(n, 8), with_complement(bit_reverse(n), 5)})
      EXPECT_EQ(check(b, 2, forced(2, true), 2, 2, 4), "direct-transpose-avx512vbmi-64");
}

TEST(CpuDirect, LargerArraysThreadsAndOffsets) {
  for (int eb : {1, 2, 4, 8, 16})
    for (int n = 15; n <= 20; ++n) {
      if ((static_cast<std::size_t>(eb) << n) > (std::size_t{4} << 20)) continue;  // up to 4 MiB: keeps the ASan run short
      const auto seed = static_cast<std::uint64_t>(n * 31 + eb);
      for (const Bmmc& b : {random_bmmc(n, seed), with_complement(random_bpc(n, seed), seed), bit_reverse(n)})
        for (int threads : {1, 2}) {
          check(b, eb, forced(threads, std::nullopt), 0, 0, seed);
          if (eb == 4 || eb == 8) check(b, eb, forced(threads, std::nullopt, false), 0, 0, seed + 2);
          check(b, eb, forced(threads, std::nullopt), static_cast<std::size_t>(eb), static_cast<std::size_t>(eb),
                seed + 1);
        }
    }
  // Offsets below 20 bits too, for the small-n code paths, and the walk with an offset.
  for (int eb : {1, 2, 4, 8, 16})
    for (int n : {6, 9, 12})
      for (const Bmmc& b : {random_bmmc(n, 3), with_complement(bit_reverse(n), 4), gray(n)}) {
        check(b, eb, forced(1, std::nullopt), static_cast<std::size_t>(eb), 0, 5);
        check(b, eb, forced(1, std::nullopt), 0, static_cast<std::size_t>(eb), 6);
        check(b, eb, forced(2, false), static_cast<std::size_t>(eb), static_cast<std::size_t>(eb), 7);
      }
}

// The size rule: a CpuPermuter made from a Bmmc runs the direct loop up to 1 MiB (on a CPU with AVX2 only —
// CpuPolicy::avx512 = false here for 4/8-byte elements —, for 4-byte maps that pile
// a group into one L1 set on both sides 128 KiB; such 8-byte maps take the walk; the walk on maps whose
// line sources crowd one set 32 KiB) — the blends for general 4/8-byte maps where the CPU has AVX2, the
// byte groups for 1-byte elements where it has AVX-512 VBMI (up to 512 KiB; 128 KiB when piled) and for
// 2-byte elements the groups of 64-byte vectors (up to 4 MiB), else the walk — and the tile loop above; a plan handed in runs as given unless CpuPolicy::direct = true;
// direct = false keeps the tile loop.
TEST(CpuDirect, ChosenForTheCpusOwnPlanUpToOneMebibyte) {
  const std::string transposes = cpu_has_avx2() ? "direct-blend-avx2" : "direct-walk";
  CpuPolicy avx2;
  avx2.avx512 = false;
  for (int eb : {4, 8}) {
    const int at_limit = 20 - __builtin_ctz(static_cast<unsigned>(eb));  // 1 MiB
    for (int n : {6, 10, 14, 16, at_limit}) {
      EXPECT_EQ(CpuPermuter(random_bmmc(n, 1), eb, avx2).kernel_name(), transposes) << eb << " B, n = " << n;
      if (n <= 14) EXPECT_EQ(CpuPermuter(transpose(n, n / 2), eb, avx2).kernel_name(), transposes) << eb << " B, n = " << n;
    }
    // Bit-reverse piles a group's input and output vectors into one L1 set each once its strides reach
    // 4 KiB: for 4-byte elements the blends only up to 128 KiB, for 8-byte elements the walk (whole lines)
    // up to 1 MiB. Transposes pile on one side only and stay direct (checked above up to n = 14, here at 1 MiB).
    for (int n : {6, 10})
      EXPECT_EQ(CpuPermuter(bit_reverse(n), eb, avx2).kernel_name(), transposes) << eb << " B, n = " << n;
    if (eb == 4) {
      EXPECT_EQ(CpuPermuter(transpose(at_limit, 7), eb, avx2).kernel_name(), transposes);
      EXPECT_EQ(CpuPermuter(bit_reverse(at_limit - 3), eb, avx2).kernel_name(), transposes);
      for (int n : {at_limit - 2, at_limit - 1, at_limit})
        EXPECT_EQ(CpuPermuter(bit_reverse(n), eb, avx2).kernel_name().find("direct"), std::string::npos) << "n = " << n;
    } else if (cpu_has_avx2()) {
      for (int n : {at_limit - 2, at_limit}) EXPECT_EQ(CpuPermuter(bit_reverse(n), eb, avx2).kernel_name(), "direct-walk");
    }
    EXPECT_EQ(CpuPermuter(random_bmmc(at_limit + 1, 1), eb, avx2).kernel_name().find("direct"), std::string::npos);
    EXPECT_EQ(CpuPermuter(random_bmmc(14, 1), eb, CpuPolicy{0, -1, std::nullopt, false, false}).kernel_name().find("direct"),
              std::string::npos);
    EXPECT_EQ(CpuPermuter(random_bmmc(14, 1), eb, CpuPolicy{0, 9, std::nullopt, std::nullopt, false}).kernel_name().find("direct"), std::string::npos)
        << "an explicit tile size keeps the tile loop";
    EXPECT_EQ(CpuPermuter(make_cpu_plan(random_bmmc(14, 1), eb), avx2).kernel_name().find("direct"), std::string::npos)
        << "a plan handed in runs as given";
    EXPECT_EQ(CpuPermuter(make_cpu_plan(random_bmmc(14, 1), eb), forced(0, std::nullopt, false)).kernel_name(), transposes);
    EXPECT_EQ(CpuPermuter(random_bmmc(at_limit + 1, 1), eb, forced(0, std::nullopt, false)).kernel_name(), transposes);
  }
  for (int eb : {1, 2, 16}) {
    const bool groups = eb <= 2 && cpu_has_vbmi();
    EXPECT_EQ(CpuPermuter(random_bmmc(12, 1), eb).kernel_name(),
              !groups ? "direct-walk" : eb == 2 ? "direct-transpose-avx512vbmi-64" : "direct-transpose-avx512vbmi")
        << eb << " B";
    EXPECT_EQ(CpuPermuter(random_bmmc(eb == 2 && groups ? 22 : 21, 1), eb).kernel_name().find("direct"),
              std::string::npos)
        << eb << " B";
    CpuPolicy avx2_only;
    avx2_only.avx512 = false;
    EXPECT_EQ(CpuPermuter(random_bmmc(12, 1), eb, avx2_only).kernel_name(), "direct-walk") << eb << " B";
  }
  for (int eb : {1, 2}) {
    const int log_eb = __builtin_ctz(static_cast<unsigned>(eb));
    if (cpu_has_vbmi() && eb == 1) {
      // The byte groups up to 512 KiB, and up to 128 KiB for maps that pile a group into one L1 set.
      const int at_512k = 19 - log_eb, at_128k = 17 - log_eb;
      EXPECT_EQ(CpuPermuter(random_bmmc(at_512k, 1), eb).kernel_name(), "direct-transpose-avx512vbmi") << eb << " B";
      EXPECT_EQ(CpuPermuter(random_bmmc(at_512k + 1, 1), eb).kernel_name().find("direct"), std::string::npos);
      EXPECT_EQ(CpuPermuter(bit_reverse(at_128k), eb).kernel_name(), "direct-transpose-avx512vbmi") << eb << " B";
      EXPECT_EQ(CpuPermuter(bit_reverse(at_128k + 1), eb).kernel_name().find("direct"), std::string::npos);
    } else if (cpu_has_vbmi()) {
      // 2-byte elements: groups of whole 64-byte lines up to 4 MiB, piled or not (WideGroupsChosen… below).
      const int at_4m = 22 - log_eb;
      for (const Bmmc& b : {random_bmmc(at_4m, 1), bit_reverse(at_4m), bit_reverse(16)})
        EXPECT_EQ(CpuPermuter(b, eb).kernel_name(), "direct-transpose-avx512vbmi-64") << b.n();
      EXPECT_EQ(CpuPermuter(random_bmmc(at_4m + 1, 1), eb).kernel_name().find("direct"), std::string::npos);
    } else {
      // The walk on maps whose line sources crowd one L1 set (bit-reverse): up to 32 KiB.
      const int at_32k = 15 - log_eb;
      EXPECT_EQ(CpuPermuter(bit_reverse(at_32k), eb).kernel_name(), "direct-walk") << eb << " B";
      EXPECT_EQ(CpuPermuter(bit_reverse(at_32k + 1), eb).kernel_name().find("direct"), std::string::npos) << eb << " B";
    }
  }
  // Below 32 elements the plan is a naive pass: the scatter loop, not the direct one.
  EXPECT_EQ(CpuPermuter(random_bmmc(4, 1), 4).kernel_name(), "scatter");
  // Maps that keep their low bits in place take the lane-permuting loop (no transpose at all for identity).
  if (cpu_has_avx2()) EXPECT_EQ(CpuPermuter(identity(12), 4, avx2).kernel_name(), "direct-transpose-avx2");
}

// Where the CPU has AVX-512: the 4/8-byte groups of 64-byte vectors for every map with n ≥ 2W up to 4 MiB,
// piled or not (bit-reverse too), the AVX2 loops below 2W, the tile loop above 4 MiB.
TEST(CpuDirect, WideGroupsChosenUpToFourMebibytes) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512 (the AVX2 rule is tested above)";
  for (int eb : {4, 8}) {
    const int log_eb = __builtin_ctz(static_cast<unsigned>(eb)), at_4m = 22 - log_eb, two_w = eb == 4 ? 8 : 6;
    for (int n : {two_w, 12, 16, 20 - log_eb, at_4m})
      for (const Bmmc& b : {random_bmmc(n, 1), random_bpc(n, 2), bit_reverse(n), transpose(n, n / 2)})
        EXPECT_EQ(CpuPermuter(b, eb).kernel_name(), "direct-transpose-avx512") << eb << " B, n = " << n;
    const std::string below = CpuPermuter(random_bmmc(two_w - 1, 1), eb).kernel_name();
    EXPECT_TRUE(below == "direct-blend-avx2" || below == "direct-transpose-avx2") << eb << " B: " << below;
    for (const Bmmc& b : {random_bmmc(at_4m + 1, 1), bit_reverse(at_4m + 1)})
      EXPECT_EQ(CpuPermuter(b, eb).kernel_name().find("direct"), std::string::npos) << eb << " B";
    CpuPolicy avx2;
    avx2.avx512 = false;
    EXPECT_EQ(CpuPermuter(random_bmmc(12, 1), eb, avx2).kernel_name(), "direct-blend-avx2") << eb << " B";
  }
}

}  // namespace
}  // namespace bmmc
