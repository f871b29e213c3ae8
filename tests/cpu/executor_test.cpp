// The fast CPU executor against the reference permutation: random BMMCs and BPCs and named maps, every
// element size, n from 0 up (large n for a few int32 cases), 1..4 threads, random non-zero data, poisoned
// outputs; multi-pass plans through a temporary buffer; bad arguments refused with the output untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/bench/cpu.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cpu/thread_pool.hpp"
#include "bmmc/plan/plan_check.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "cpu_features.hpp"

namespace bmmc {
namespace {

constexpr unsigned char kPoison = 0xa5;
// The register transposes forced (the default is the loop measured fastest on this CPU).
const CpuPolicy kTranspose{0, -1, true};

// 64-byte aligned storage (so the streaming-store path is taken for large arrays).
struct Buf {
  explicit Buf(std::size_t bytes) : words((bytes + 127) / 8 + 8, 0), size(bytes) {}
  unsigned char* data() {
    auto p = reinterpret_cast<std::uintptr_t>(words.data());
    return reinterpret_cast<unsigned char*>((p + 63) & ~std::uintptr_t{63});
  }
  std::vector<std::uint64_t> words;
  std::size_t size;
};

void fill_nonzero(unsigned char* p, std::size_t bytes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(1 + rng() % 255);
}

// Runs permute_cpu and compares with permute_reference; returns a description on mismatch.
void expect_matches(const Bmmc& b, int eb, const CpuPolicy& opt, std::uint64_t seed) {
  const std::size_t bytes = (std::size_t{1} << b.n()) * eb;
  Buf in(bytes), out(bytes), ref(bytes);
  fill_nonzero(in.data(), bytes, seed);
  std::memset(out.data(), kPoison, bytes);
  permute_reference(b, in.data(), ref.data(), eb);
  permute_cpu(b, in.data(), out.data(), eb, opt);
  ASSERT_EQ(std::memcmp(out.data(), ref.data(), bytes), 0)
      << "n = " << b.n() << ", elem_bytes = " << eb << ", threads = " << opt.threads
      << ", tile_bits = " << opt.tile_bits << "\n"
      << b.to_string();
}

TEST(CpuExecutor, RandomMapsAllElementSizesSmallN) {
  for (int eb : {1, 2, 4, 8, 16})
    for (int n = 0; n <= 14; ++n)
      for (std::uint64_t seed : {1, 2}) {
        const int threads = 1 + static_cast<int>((n + seed) % 4);
        for (const Bmmc& b : {random_bmmc(n, seed), random_bpc(n, seed + 10)}) {
          expect_matches(b, eb, CpuPolicy{threads, -1}, seed * 100 + n);  // the direct loop (small arrays)
          expect_matches(b, eb, CpuPolicy{threads, -1, std::nullopt, false}, seed * 100 + n);  // the tile loop
        }
      }
}

TEST(CpuExecutor, NamedMaps) {
  for (int eb : {1, 4, 16})
    for (int n : {5, 8, 11, 16}) {
      const std::vector<Bmmc> maps = {identity(n), bit_reverse(n), reverse(n),  gray(n),
                                      gray_inverse(n), rotate(n, 1), transpose(n, n / 2),
                                      parm_matrix(n, 0b110)};
      for (const Bmmc& b : maps) {
        expect_matches(b, eb, CpuPolicy{3, -1}, n);
        expect_matches(b, eb, CpuPolicy{3, -1, std::nullopt, false}, n);
      }
    }
}

TEST(CpuExecutor, TileSizesAndThreadCounts) {
  const Bmmc b = random_bmmc(17, 7);
  for (int eb : {2, 4, 8})
    for (int tile : {5, 8, 10, 12, 14, 16})
      for (int threads : {1, 2, 3, 4}) expect_matches(b, eb, CpuPolicy{threads, tile}, tile * 10 + threads);
}

// Large arrays take the non-temporal store paths (≥ 8 MiB: SSE2 for every size, AVX2 gathers for 4 and
// 8 bytes where the CPU has them) and split thousands of blocks over threads.
TEST(CpuExecutor, LargeArrays) {
  expect_matches(random_bmmc(23, 8), 1, CpuPolicy{2, -1}, 1);
  expect_matches(random_bmmc(22, 9), 2, CpuPolicy{2, -1}, 2);
  expect_matches(random_bmmc(20, 10), 16, CpuPolicy{2, -1}, 16);
  expect_matches(random_bmmc(22, 3), 4, CpuPolicy{2, -1}, 22);
  expect_matches(bit_reverse(23), 4, CpuPolicy{3, -1}, 23);
  expect_matches(random_bpc(24, 5), 8, CpuPolicy{0, -1}, 24);
  expect_matches(random_bmmc(26, 1), 4, CpuPolicy{0, -1}, 26);
}

using test::cpu_has_avx2;
using test::cpu_has_avx512;
using test::cpu_has_vbmi;

// The register-transpose loops (1-, 2-, 4- and 8-byte elements) against the reference and against the gather loop, over
// tile sizes from the smallest it accepts (2^6) up, thread counts, random BMMCs, BPCs and named maps
// (which between them exchange many numbers of lane bits with vector bits: up to 5, 4, 3, 2 by size).
TEST(CpuExecutor, RegisterTransposeMatchesReference) {
  std::vector<Bmmc> maps;
  for (int n : {6, 7, 9, 12, 15, 18}) {
    for (std::uint64_t seed : {1, 2, 3}) maps.push_back(random_bmmc(n, seed)), maps.push_back(random_bpc(n, seed));
    maps.push_back(bit_reverse(n));
    maps.push_back(transpose(n, n / 2));
    maps.push_back(reverse(n));
    maps.push_back(gray(n));  // its low output bits come from the low input bits: a partial transpose
    maps.push_back(rotate(n, 1));
  }
  for (int eb : {1, 2, 4, 8})
    for (const Bmmc& b : maps)
      for (int tile : {-1, 6, 8, 11, 14})
        for (bool tr : {true, false}) {
          if (tile > b.n()) continue;
          const CpuPolicy opt{1 + static_cast<int>(b.n() % 3), tile, tr};
          expect_matches(b, eb, opt, static_cast<std::uint64_t>(b.n() * 100 + tile));
        }
}

// The planner picks the register-transpose loop for 4- and 8-byte elements on every BMMC once the tile holds
// 8 vectors of 8 (n ≥ 6): full 8×8 transposes where the three lowest output bits come from high input bits,
// partial ones (r = 0..2 lane bits exchanged) else. Skipped (visibly) on a CPU without AVX2.
TEST(CpuExecutor, RegisterTransposeChosenForFourAndEightByteElements) {
  if (!cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2: the register-transpose loop cannot be chosen";
  for (int n : {6, 9, 14, 20})
    for (const Bmmc& b : {random_bmmc(n, 1), random_bmmc(n, 2), random_bpc(n, 1), random_bpc(n, 2), bit_reverse(n),
                          transpose(n, n / 2), gray(n), gray_inverse(n), reverse(n), rotate(n, 1), identity(n)})
      for (int eb : {4, 8})
        for (int tile : {-1, 9})
          EXPECT_EQ(cpu_kernel_name(make_cpu_plan(b, eb, CpuPolicy{0, tile}), CpuPolicy{0, tile, true}),
                    "transpose-avx2")
              << eb << "-byte elements\n" << b.to_string();
}

// 1- and 2-byte elements (AVX-512 VBMI): groups of 32×32 and 16×16, so tiles of 2^10 and 2^8 elements.
TEST(CpuExecutor, RegisterTransposeChosenForOneAndTwoByteElements) {
  if (!cpu_has_vbmi())
    GTEST_SKIP() << "this CPU has no AVX-512 VBMI (+BW, VL): the 1- and 2-byte register-transpose loop cannot be "
                    "chosen";
  for (int n : {10, 14, 20})
    for (const Bmmc& b : {random_bmmc(n, 1), random_bpc(n, 1), bit_reverse(n), gray(n), reverse(n), rotate(n, 1)})
      for (int eb : {1, 2})
        EXPECT_EQ(cpu_kernel_name(make_cpu_plan(b, eb), kTranspose), "transpose-avx512vbmi")
            << eb << "-byte elements\n" << b.to_string();
}

// Plans with other run lengths than the CPU planner's (the GPU geometry: 2^k-element lane accesses) run the
// transpose loops with the run length read at run time.
TEST(CpuExecutor, RegisterTransposeOtherRunLengths) {
  for (int eb : {1, 2, 4, 8})
    for (int k : {0, 1, 2}) {
      if ((32 << k) * eb > 512) continue;
      const Bmmc b = random_bmmc(16, static_cast<std::uint64_t>(eb * 10 + k));
      GpuPolicy po;
      po.variant = Variant::OnePass;
      po.vector_bits = k;
      const Plan plan = make_plan(b, eb, default_caps(), po);
      const bool fast = eb >= 4 ? cpu_has_avx2() : cpu_has_vbmi();
      if (fast)
        EXPECT_NE(cpu_kernel_name(plan, kTranspose).find("transpose"), std::string::npos) << eb << " B, k = " << k;
      const std::size_t bytes = (std::size_t{1} << 16) * eb;
      Buf in(bytes), out(bytes), ref(bytes);
      fill_nonzero(in.data(), bytes, 3);
      std::memset(out.data(), kPoison, bytes);
      permute_reference(b, in.data(), ref.data(), eb);
      execute_plan_cpu(plan, in.data(), out.data(), nullptr, CpuPolicy{2});
      EXPECT_EQ(std::memcmp(out.data(), ref.data(), bytes), 0) << eb << " B, k = " << k;
    }
}

// Large enough for non-temporal stores, and an output that is only element-aligned (plain stores).
TEST(CpuExecutor, RegisterTransposeLargeAndUnalignedOutput) {
  for (int eb : {1, 2, 4, 8}) {
    const Bmmc b = random_bmmc(24 - __builtin_ctz(static_cast<unsigned>(eb)), 12);
    const std::size_t bytes = std::size_t{4} << 22;
    Buf in(bytes), out(bytes + 64), ref(bytes);
    fill_nonzero(in.data(), bytes, 5);
    permute_reference(b, in.data(), ref.data(), eb);
    for (std::size_t offset : {std::size_t{0}, static_cast<std::size_t>(eb)}) {
      unsigned char* o = out.data() + offset;
      std::memset(o, kPoison, bytes);
      permute_cpu(b, in.data(), o, eb, CpuPolicy{3, -1});
      EXPECT_EQ(std::memcmp(o, ref.data(), bytes), 0) << eb << "-byte elements, output offset " << offset;
    }
  }
}

// permute_cpu caches prepared plans: maps that differ only in the complement or the element size must not
// share one (a shared one would give wrong output here), and a cached plan must keep working (every map twice,
// interleaved). A cache that merged different tile or loop options would still give correct output, so that
// part is covered only by the key's definition in executor.cpp, not by this test.
TEST(CpuPolicy, MapsCacheSizedTilesOntoPlanTerms) {
  // Runs of 128 bytes; a 16 KiB tile for bit permutations, 128 KiB otherwise; naive below 32 elements.
  const PlanOptions bpc = cpu_plan_options(CpuPolicy{}, random_bpc(20, 1), 4);
  EXPECT_EQ(bpc.variant, Variant::OnePass);
  EXPECT_EQ(bpc.vector_bits, 0);
  EXPECT_EQ(bpc.tile_bits, 12);
  EXPECT_EQ(cpu_plan_options(CpuPolicy{}, random_bmmc(20, 1), 4).tile_bits, 15);
  EXPECT_EQ(cpu_plan_options(CpuPolicy{}, random_bmmc(20, 1), 1).vector_bits, 2);
  EXPECT_EQ(cpu_plan_options(CpuPolicy{0, 9}, random_bmmc(20, 1), 8).tile_bits, 9);
  EXPECT_EQ(cpu_plan_options(CpuPolicy{}, random_bmmc(4, 1), 4).variant, Variant::Naive);
  EXPECT_THROW(cpu_plan_options(CpuPolicy{0, 21}, random_bmmc(20, 1), 4), std::invalid_argument);
  EXPECT_THROW(cpu_plan_options(CpuPolicy{}, random_bmmc(20, 1), 3), std::invalid_argument);
}

TEST(CpuExecutor, KernelNames) {
  const CpuPolicy gather{0, -1, false};
  EXPECT_EQ(cpu_kernel_name(make_cpu_plan(random_bmmc(16, 1), 4), kTranspose),
            cpu_has_avx2() ? "transpose-avx2" : "gather");
  EXPECT_EQ(cpu_kernel_name(make_cpu_plan(random_bmmc(16, 1), 4, gather), gather),
            "gather");
  EXPECT_EQ(cpu_kernel_name(make_cpu_plan(gray(16), 4), kTranspose), cpu_has_avx2() ? "transpose-avx2" : "gather");
  EXPECT_EQ(cpu_kernel_name(make_cpu_plan(random_bmmc(5, 1), 4)), "gather")
      << "a 32-element tile is too small for 8 vectors of 8";
  EXPECT_EQ(cpu_kernel_name(make_cpu_plan(random_bmmc(16, 1), 1), kTranspose),
            cpu_has_vbmi() ? "transpose-avx512vbmi" : "gather");
  EXPECT_EQ(cpu_kernel_name(make_cpu_plan(random_bmmc(16, 1), 2), kTranspose),
            cpu_has_vbmi() ? "transpose-avx512vbmi" : "gather");
  EXPECT_EQ(cpu_kernel_name(make_cpu_plan(random_bmmc(16, 1), 16)), "gather") << "16-byte elements: one per vector half";
  EXPECT_EQ(cpu_kernel_name(make_cpu_plan(random_bmmc(4, 1), 4)), "scatter");
  GpuPolicy po;
  po.variant = Variant::TwoPass;
  const std::string two = cpu_kernel_name(make_plan(random_bmmc(16, 1), 4, default_caps(), po));
  EXPECT_NE(two.find(" + "), std::string::npos) << two;
}

// Any plan executes, not only the CPU's: the GPU one-pass geometry, the paper's variants, two passes.
TEST(CpuExecutor, ExecutesEveryPlanVariant) {
  const int n = 13;
  for (int eb : {1, 4, 16})
    for (Variant v : {Variant::Naive, Variant::TiledBanks, Variant::TiledBanksIters, Variant::TwoPass,
                      Variant::OnePass}) {
      const Bmmc b = v == Variant::TiledBanks || v == Variant::TiledBanksIters ? random_bpc(n, 4) : random_bmmc(n, 4);
      GpuPolicy po;
      po.variant = v;
      const Plan plan = make_plan(b, eb, default_caps(), po);
      const std::size_t bytes = (std::size_t{1} << n) * eb;
      Buf in(bytes), out(bytes), tmp(bytes), ref(bytes);
      fill_nonzero(in.data(), bytes, 9);
      std::memset(out.data(), kPoison, bytes);
      permute_reference(b, in.data(), ref.data(), eb);
      execute_plan_cpu(plan, in.data(), out.data(), tmp.data(), CpuPolicy{2});
      EXPECT_EQ(std::memcmp(out.data(), ref.data(), bytes), 0) << to_string(v) << " eb " << eb;
    }
}

TEST(CpuExecutor, CpuPlansPassThePlanChecker) {
  for (int eb : {1, 2, 4, 8, 16})
    for (int n : {3, 5, 9, 14}) {
      const Plan plan = make_cpu_plan(random_bmmc(n, 11), eb);
      const CheckReport r = check_plan(plan);
      EXPECT_TRUE(r.correct) << r.first_error;
      if (n >= 9) {  // smaller arrays cannot hold a 128-byte run of 32 lanes
        const auto& tp = std::get<TilePass>(plan.passes.at(0));
        EXPECT_GE(tp.elem_bytes << tp.segment_bits(), 128) << "runs must cover whole cache lines";
      }
    }
}

TEST(CpuExecutor, RefusesBadArgumentsAndWritesNothing) {
  const Bmmc b = random_bmmc(8, 2);
  Buf in(256 * 16), out(256 * 16);
  fill_nonzero(in.data(), 256 * 16, 1);
  std::memset(out.data(), kPoison, 256 * 16);
  auto untouched = [&] {
    for (std::size_t i = 0; i < 256 * 16; ++i)
      if (out.data()[i] != kPoison) return false;
    return true;
  };
  EXPECT_THROW(permute_cpu(b, nullptr, out.data(), 4), std::invalid_argument);
  EXPECT_THROW(permute_cpu(b, in.data(), nullptr, 4), std::invalid_argument);
  EXPECT_THROW(permute_cpu(b, in.data(), in.data(), 4), std::invalid_argument);
  EXPECT_THROW(permute_cpu(b, in.data(), in.data() + 64, 4), std::invalid_argument);   // overlap
  EXPECT_THROW(permute_cpu(b, in.data(), out.data() + 1, 4), std::invalid_argument);   // misaligned
  EXPECT_THROW(permute_cpu(b, in.data(), out.data(), 3), std::invalid_argument);       // element size
  EXPECT_THROW(permute_cpu(b, in.data(), out.data(), 4, CpuPolicy{1, 40}), std::invalid_argument);
  const Plan two = make_plan(b, 4, default_caps(), GpuPolicy{Variant::TwoPass});
  EXPECT_THROW(execute_plan_cpu(two, in.data(), out.data(), nullptr, CpuPolicy{1}), std::invalid_argument);  // no temp
  try {
    execute_plan_cpu(two, in.data(), out.data(), in.data(), CpuPolicy{1});
    ADD_FAILURE() << "temp == in was accepted";
  } catch (const std::invalid_argument& e) {  // the message says which buffer is the temporary one
    EXPECT_NE(std::string(e.what()).find("the temporary buffer (input -> temporary)"), std::string::npos) << e.what();
  }
  // Hand-made plans whose tables would move runs outside the arrays are refused before anything is written.
  for (int defect = 0; defect < 3; ++defect) {
    Plan bad = make_cpu_plan(b, 4);
    auto& tp = std::get<TilePass>(bad.passes.at(0));
    if (defect == 0) tp.read_rows.at(0) |= 1;                  // a row offset inside a run
    if (defect == 1) tp.write_rows.at(0) |= BitVec{1} << 8;    // an index beyond 2^8
    if (defect == 2 && !tp.block_positions.empty()) tp.block_positions.at(0) = 0;  // a block bit in a run
    if (defect == 2 && tp.block_positions.empty()) continue;
    EXPECT_THROW(execute_plan_cpu(bad, in.data(), out.data(), nullptr, CpuPolicy{1}), std::invalid_argument) << defect;
  }
  EXPECT_TRUE(untouched());
  try {
    permute_cpu(b, in.data(), out.data(), 3);
    ADD_FAILURE() << "a 3-byte element size was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1, 2, 4, 8 and 16"), std::string::npos) << e.what();
  }
}

// threads_used: what a call keeps busy, by the loops' own chunk rules (≥ 128 KiB a chunk for the direct loop,
// ≥ 16 tile blocks), so the benchmark's memcpy baseline runs on the same threads as the permutation.
TEST(CpuExecutor, ThreadsUsedFollowTheChunkRules) {
  const CpuPermuter small(random_bmmc(14, 1), 1, CpuPolicy{2});  // 16 KiB: one direct chunk
  EXPECT_EQ(small.threads(), 2);
  EXPECT_EQ(small.threads_used(), 1);
  EXPECT_EQ(CpuPermuter(random_bmmc(14, 1), 4, CpuPolicy{}).threads_used(), 1) << "64 KiB, default threads";
  EXPECT_EQ(CpuPermuter(random_bmmc(16, 1), 4, CpuPolicy{2}).threads_used(), 2) << "256 KiB: two direct chunks";
  EXPECT_EQ(CpuPermuter(random_bmmc(16, 1), 4, CpuPolicy{3}).threads_used(), 2) << "two chunks for three threads";
  // The tile loop: 2^16 int32 in tiles of 2^15 elements are two blocks, one chunk; 2^22 in tiles of 2^15
  // are 128 blocks, eight chunks of 16.
  EXPECT_EQ(CpuPermuter(random_bmmc(16, 1), 4, CpuPolicy{4, 15, std::nullopt, false}).threads_used(), 1);
  EXPECT_EQ(CpuPermuter(random_bmmc(22, 1), 4, CpuPolicy{4, 15, std::nullopt, false}).threads_used(), 4);
  EXPECT_EQ(CpuPermuter(random_bmmc(22, 1), 4, CpuPolicy{1}).threads_used(), 1);
  // Naive passes (n < 5): slices of ceil(2^n / threads) elements, so fewer threads where they do not divide.
  EXPECT_EQ(CpuPermuter(random_bmmc(3, 1), 4, CpuPolicy{4}).threads_used(), 4) << "8 elements in slices of 2";
  EXPECT_EQ(CpuPermuter(random_bmmc(1, 1), 4, CpuPolicy{4}).threads_used(), 2) << "two elements, two slices";
  EXPECT_EQ(CpuPermuter(random_bmmc(2, 1), 4, CpuPolicy{3}).threads_used(), 2) << "4 elements in slices of 2";
  EXPECT_EQ(CpuPermuter(random_bmmc(4, 1), 4, CpuPolicy{5}).threads_used(), 4) << "16 elements in slices of 4";
  // Never more than the pool starts for one call.
  PlanOptions naive;
  naive.variant = Variant::Naive;
  EXPECT_EQ(CpuPermuter(make_plan(random_bmmc(20, 1), 4, naive), CpuPolicy{1000}).threads_used(),
            ThreadPool::kMaxThreads);
}

TEST(CpuBench, SmallRunVerifiesAndReportsAllVariants) {
  // 256 KiB: the direct loop, so the tile loop it replaces gets a row too.
  // Where the CPU has AVX-512, the AVX2 loop it replaces gets a row as well.
  const auto rows = bench_cpu(random_bmmc(16, 1), 4, 3, 2);
  ASSERT_EQ(rows.size(), cpu_has_avx2() ? 6u + cpu_has_avx512() : 5u);
  EXPECT_EQ(rows[0].variant, "memcpy");
  EXPECT_EQ(rows[3].variant, "one-pass");
  if (cpu_has_avx2())  // the loop this CPU did not choose (the walk beside the direct transposes)
    EXPECT_TRUE(rows[4].variant == "one-pass-gather" || rows[4].variant == "one-pass-transpose") << rows[4].variant;
  EXPECT_EQ(rows[rows.size() - 1 - cpu_has_avx512()].variant, "one-pass-tiled");
  if (cpu_has_avx512()) EXPECT_EQ(rows.back().variant, "one-pass-avx2");
  EXPECT_EQ(bench_cpu(random_bmmc(16, 1), 16, 1, 1).size(), 5u) << "16-byte elements: the walk and the tile loop";
  EXPECT_EQ(bench_cpu(random_bmmc(20, 1), 16, 1, 1).size(), 4u) << "16-byte elements above 1 MiB: one loop only";
  for (const BenchRow& r : rows) {
    EXPECT_GT(r.median_ms, 0);
    EXPECT_LE(r.min_ms, r.median_ms);
    EXPECT_LE(r.median_ms, r.max_ms);
    EXPECT_GT(r.gbps, 0);
  }
  EXPECT_DOUBLE_EQ(rows[0].pct_memcpy, 100.0);
  EXPECT_THROW(bench_cpu(random_bmmc(8, 1), 4, 0, 1), std::invalid_argument);
  // A single-threaded direct group loop gets its probe (its loads and stores without permutes; bench_cpu
  // checks that it wrote every 32-byte piece of the output): gray keeps low bits, so the lane-permuting
  // groups run with AVX2 or AVX-512, and so do the byte groups of 2-byte elements with VBMI.
  auto has_probe = [](const std::vector<BenchRow>& r) {
    return std::any_of(r.begin(), r.end(), [](const BenchRow& row) { return row.variant == "one-pass-probe"; });
  };
  for (int eb : {4, 8}) EXPECT_EQ(has_probe(bench_cpu(gray(12), eb, 1, 1)), cpu_has_avx2()) << eb << " B";
  EXPECT_EQ(has_probe(bench_cpu(bit_reverse(13), 2, 1, 1)), cpu_has_vbmi());
  EXPECT_FALSE(has_probe(bench_cpu(gray(12), 16, 1, 1))) << "the walk has no probe";
  EXPECT_FALSE(has_probe(bench_cpu(gray(16), 4, 1, 2))) << "two threads: no probe";
  // Two threads asked for, but a 16 KiB array runs on the caller alone (threads_used() == 1): the probe is
  // comparable, and the memcpy baseline is a one-thread copy too (it timed a worker's wake-up before).
  EXPECT_EQ(has_probe(bench_cpu(gray(12), 4, 1, 2)), cpu_has_avx2());
}

// Plans edited by hand (one random bit of one table flipped, a block image copied): either refused when the
// permuter is made (nothing written) or run to exactly the reference result — never a silently wrong output or
// outputs left unwritten (before the consistency check, a copied block image left half the outputs unwritten).
TEST(CpuExecutor, HandEditedPlansRunCorrectlyOrAreRefused) {
  std::mt19937_64 rng(11);
  int refused = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 10 + static_cast<int>(rng() % 7), eb = 1 << (rng() % 5);
    const Bmmc b = trial % 2 ? random_bmmc(n, rng()) : random_bpc(n, rng());
    CpuPolicy pol;
    pol.tile_bits = 8 + static_cast<int>(rng() % 3);
    Plan p = make_cpu_plan(b, eb, pol);
    auto* t = std::get_if<TilePass>(&p.passes[0]);
    if (!t) continue;
    const BitVec bit = BitVec{1} << (rng() % static_cast<unsigned>(n));
    switch (rng() % 4) {
      case 0:
        if (!t->read_rows.empty()) t->read_rows[rng() % t->read_rows.size()] ^= bit;
        break;
      case 1:
        if (!t->write_rows.empty()) t->write_rows[rng() % t->write_rows.size()] ^= bit;
        break;
      case 2:
        if (t->block_images.size() >= 2) t->block_images[1] = t->block_images[0];
        break;
      case 3:
        if (!t->block_images.empty()) t->block_images[rng() % t->block_images.size()] ^= bit;
        break;
    }
    const std::size_t bytes = (std::size_t{1} << n) * static_cast<std::size_t>(eb);
    std::vector<unsigned char> in(bytes), out(bytes, 0xa5), want(bytes);
    for (auto& c : in) c = static_cast<unsigned char>(rng());
    std::optional<CpuPermuter> q;
    try {
      q.emplace(p, pol);
    } catch (const std::invalid_argument&) {
      ++refused;
      continue;
    }
    (*q)(in.data(), out.data());
    permute_reference(b, in.data(), want.data(), eb);
    EXPECT_EQ(out, want) << "trial " << trial << ": an accepted hand-edited plan gave a wrong output\n" << describe(p);
  }
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace bmmc
