// Combinators: the interpreter against the paper's definitions, every rewrite rule against the interpreter,
// and lowered programs (both CPU strategies) against the interpreter on random programs.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <vector>

#include "bmmc/combinators/execute_cpu.hpp"
#include "bmmc/combinators/interpret.hpp"
#include "bmmc/combinators/lower.hpp"
#include "bmmc/combinators/rewrite.hpp"
#include "bmmc/core/named.hpp"
#include "dist/error_message.hpp"
#include "../../src/combinators/index_bits.hpp"  // internal: remove_bit, deposit_around

namespace bmmc {
namespace {

std::vector<std::int32_t> random_ints(int n, std::uint64_t seed, int range = 1000) {
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> v(std::size_t{1} << n);
  for (auto& x : v) x = static_cast<std::int32_t>(rng() % range) - range / 2;
  return v;
}

std::vector<std::int32_t> run_interp(const Program& p, std::vector<std::int32_t> v) {
  interpret(p, std::span<std::int32_t>(v));
  return v;
}

BitVec random_mask(int n, std::mt19937_64& rng) {
  BitVec m = 0;
  while (m == 0) m = rng() & low_mask(n);
  return m;
}

// A random program on n bits: bmmcs, leaves and parms with random masks, nested up to `depth`.
Program random_program(int n, int depth, std::mt19937_64& rng) {
  Program p(n);
  const int steps = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < steps; ++i) {
    const int kind = static_cast<int>(rng() % 4);
    if (kind == 0) {
      p.push(BmmcStep{random_bmmc(n, rng())});
    } else if ((kind == 1 || n < 2 || depth == 0) && n >= 1) {
      p.push(LeafStep{Leaf{rng() % 3 ? LeafKind::CompareSwap : LeafKind::CompareSwapDesc}});
    } else if (n >= 2) {
      p.append(parm(random_mask(n, rng), random_program(n - 1, depth - 1, rng)));
    }
  }
  return p;
}

TEST(Parm, MatrixIsThePapersFigureExample) {
  // Paper §7.2: n = 3, mask 0b110, A has rows 100 / 001 / 011 (row i = output bit i, column 0 first).
  const Bmmc a = parm_matrix(3, 0b110);
  EXPECT_EQ(a.matrix().to_string(), "1..\n..1\n.11\n");
  // The table of the Figure: (sub-array, sub-index) of x = 0..7.
  const int sub_array[8] = {0, 0, 1, 1, 1, 1, 0, 0}, sub_index[8] = {0, 1, 0, 1, 2, 3, 2, 3};
  for (BitVec x = 0; x < 8; ++x) {
    EXPECT_EQ(parity(x & 0b110), sub_array[x]) << x;
    EXPECT_EQ(remove_bit(x, 1), static_cast<BitVec>(sub_index[x])) << x;
    EXPECT_EQ(a.apply(x), static_cast<BitVec>(sub_array[x] * 4 + sub_index[x])) << x;
  }
}

TEST(Parm, SubIndexIsTheRankInsideTheSubArray) {
  // The interpreter's "remove bit lsb(mask)" against the plain definition (k-th element of the sub-array).
  for (int n = 1; n <= 7; ++n)
    for (BitVec m = 1; m < (BitVec{1} << n); ++m) {
      BitVec rank[2] = {0, 0};
      for (BitVec i = 0; i < (BitVec{1} << n); ++i) {
        const int s = parity(i & m);
        ASSERT_EQ(remove_bit(i, __builtin_ctzll(m)), rank[s]++) << "n " << n << " mask " << m << " i " << i;
      }
    }
}

TEST(Parm, FigureExampleOnValues) {
  // parm 0b110 cswap on 8 elements: sub-arrays {0,1,6,7} and {2,3,4,5}, pairs (0,1),(6,7),(2,3),(4,5).
  std::vector<std::int32_t> v = {1, 0, 3, 2, 5, 4, 7, 6};
  EXPECT_EQ(run_interp(parm(0b110, compare_swap(2)), v), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  // mask 1: sub-arrays are even and odd indices; cswap pairs (0,2),(4,6),(1,3),(5,7).
  v = {2, 3, 0, 1, 6, 7, 4, 5};
  EXPECT_EQ(run_interp(parm(1, compare_swap(2)), v), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Rewrite, BmmcFusion) {
  std::mt19937_64 rng(1);
  for (int n = 1; n <= 9; ++n)
    for (int r = 0; r < 5; ++r) {
      const Bmmc a = random_bmmc(n, rng()), b = random_bmmc(n, rng());
      const auto in = random_ints(n, rng());
      EXPECT_EQ(run_interp(then(bmmc_program(b), bmmc_program(a)), in), run_interp(bmmc_program(fuse(b, a)), in));
      const Program s = simplify(then(bmmc_program(b), bmmc_program(a)));
      ASSERT_LE(s.steps().size(), 1u);  // two random 1-bit maps may cancel
    }
}

TEST(Rewrite, CancellationLeavesNothing) {
  std::mt19937_64 rng(2);
  for (int n = 1; n <= 9; ++n) {
    const Bmmc a = random_bmmc(n, rng());
    const Program p = then(then(compare_swap(n), bmmc_program(a)), bmmc_program(a.inverse()));
    const Program s = simplify(p);
    EXPECT_EQ(s, compare_swap(n)) << s.to_string();
    const auto in = random_ints(n, rng());
    EXPECT_EQ(run_interp(p, in), run_interp(s, in));
  }
}

TEST(Rewrite, ParmIsBmmcTwoBmmc) {
  std::mt19937_64 rng(3);
  for (int n = 1; n <= 8; ++n)
    for (int r = 0; r < 8; ++r) {
      const BitVec m = random_mask(n, rng);
      const Program f = random_program(n - 1, 2, rng);
      const auto in = random_ints(n, rng());
      const Program lhs = parm(m, f), rhs = expand_parm(m, f);
      ASSERT_EQ(run_interp(lhs, in), run_interp(rhs, in)) << "mask " << m << "\n" << f.to_string();
      ASSERT_EQ(run_interp(lhs, in), run_interp(expand_all(lhs), in));
    }
}

TEST(Rewrite, ParmOfBmmcIsABmmc) {
  std::mt19937_64 rng(4);
  for (int n = 1; n <= 9; ++n)
    for (int r = 0; r < 6; ++r) {
      const BitVec m = random_mask(n, rng);
      const Bmmc b = random_bmmc(n - 1, rng());
      const Bmmc fused = parm_of_bmmc(m, b);
      ASSERT_EQ(fused.n(), n);
      const auto in = random_ints(n, rng());
      ASSERT_EQ(run_interp(parm(m, bmmc_program(b)), in), run_interp(bmmc_program(fused), in)) << "mask " << m;
    }
}

TEST(Rewrite, SimplifyKeepsTheMeaning) {
  std::mt19937_64 rng(5);
  for (int r = 0; r < 60; ++r) {
    const int n = 1 + static_cast<int>(rng() % 8);
    const Program p = random_program(n, 3, rng);
    const Program s = simplify(p);
    EXPECT_LE(s.tree_size(), p.tree_size());
    const auto in = random_ints(n, rng());
    ASSERT_EQ(run_interp(p, in), run_interp(s, in)) << p.to_string();
  }
}

TEST(Lower, RandomNestedProgramsOnBothCpuStrategies) {
  std::mt19937_64 rng(6);
  for (int r = 0; r < 150; ++r) {
    const int n = 1 + static_cast<int>(rng() % 10);
    const Program p = random_program(n, 4, rng);
    const auto in = random_ints(n, rng());
    const auto expect = run_interp(p, in);
    const LoweredProgram lp = lower(p);
    for (ExecStrategy s : {ExecStrategy::Folded, ExecStrategy::PermuteThenLeaf, ExecStrategy::Fused}) {
      auto got = in;
      const ExecStats st = execute_cpu(lp, got.data(), DType::Int32, s, {}, {3, 1});  // small tiles: many cosets
      ASSERT_EQ(got, expect) << to_string(s) << "\n" << p.to_string() << to_string(lp);
      EXPECT_LE(st.passes, lp.passes_unfused() + 1);
    }
  }
}

TEST(Lower, MultiThreadedLeafPassesOnLargeArrays) {
  // Big enough that the leaf passes split over threads; a deep random parm on top of compare-swaps.
  std::mt19937_64 rng(7);
  for (int r = 0; r < 4; ++r) {
    const int n = 18;
    const Program p = then(parm(random_mask(n, rng), parm(random_mask(n - 1, rng), compare_swap(n - 2))),
                           bmmc_program(random_bmmc(n, rng())));
    const auto in = random_ints(n, rng(), 1 << 20);
    const auto expect = run_interp(p, in);
    for (ExecStrategy s : {ExecStrategy::Folded, ExecStrategy::PermuteThenLeaf, ExecStrategy::Fused}) {
      auto got = in;
      CpuPolicy o;
      o.threads = 4;
      execute_cpu(lower(p), got.data(), DType::Int32, s, o);
      ASSERT_EQ(got, expect) << to_string(s);
    }
  }
}

TEST(Lower, LeafGeometryPicksOneRepresentativePerChunk) {
  std::mt19937_64 rng(8);
  for (int n = 1; n <= 10; ++n) {
    const Bmmc m = random_bmmc(n, rng());
    const LeafGeometry g = leaf_geometry(m, 1);
    std::vector<int> seen(std::size_t{1} << n, 0);
    for (BitVec t = 0; t < (BitVec{1} << (n - 1)); ++t) {
      const BitVec x = deposit_around(t, g.pivots, 1);
      ++seen[x];
      ++seen[x ^ g.dirs[0]];
      EXPECT_EQ(m.apply(x) ^ m.apply(x ^ g.dirs[0]), 1u);
    }
    for (int c : seen) ASSERT_EQ(c, 1);
  }
}

TEST(Program, ConstructorsRejectMismatches) {
  EXPECT_THROW(parm(0, compare_swap(1)), std::invalid_argument);
  EXPECT_THROW(parm(0b100, compare_swap(1)), std::invalid_argument);  // mask above 2^n
  EXPECT_THROW(then(compare_swap(2), compare_swap(3)), std::invalid_argument);
  EXPECT_THROW(compare_swap(0), std::invalid_argument);
  Program p(3);
  EXPECT_THROW(p.push(BmmcStep{identity(4)}), std::invalid_argument);
  std::vector<std::int32_t> v(4);
  EXPECT_THROW(interpret(compare_swap(3), std::span<std::int32_t>(v)), std::invalid_argument);
  EXPECT_THROW(interpret(compare_swap(3), nullptr, DType::Int32), std::invalid_argument);  // was a null reference
}

// Enumerations filled from integers (a binding, a configuration file): refused by value before anything moves.
TEST(Program, UnknownLeafKindsAndTypesAreRefused) {
  const Leaf unknown{static_cast<LeafKind>(7)};
  EXPECT_NE(test::error_message([&] { leaf(3, unknown); }).find("the leaf's kind holds 7, which names no LeafKind"),
            std::string::npos);
  LoweredProgram lp = lower(compare_swap(3));
  ASSERT_TRUE(lp.stages.back().leaf);
  lp.stages.back().leaf = unknown;
  EXPECT_NE(test::error_message([&] { schedule(lp, ExecStrategy::Folded); }).find("names no LeafKind"),
            std::string::npos);
  // A program whose first pass permutes: the type is checked before that pass writes.
  const LoweredProgram sorting = lower(then(bmmc_program(bit_reverse(3)), compare_swap(3)));
  std::vector<std::int32_t> v = {7, 6, 5, 4, 3, 2, 1, 0};
  const std::vector<std::int32_t> before = v;
  const auto bad = static_cast<DType>(9);
  EXPECT_NE(test::error_message([&] { execute_cpu(sorting, v.data(), bad); })
                .find("the element type holds 9, which names no DType"),
            std::string::npos);
  EXPECT_NE(test::error_message([&] { interpret(compare_swap(3), v.data(), bad); }).find("names no DType"),
            std::string::npos);
  CpuPolicy negative;
  negative.threads = -2;
  EXPECT_NE(test::error_message([&] { execute_cpu(sorting, v.data(), DType::Int32, ExecStrategy::Fused, negative); })
                .find("CPU threads = -2"),
            std::string::npos);
  EXPECT_EQ(v, before);
  EXPECT_THROW(check_dtype(bad), std::invalid_argument);
  // The leaf executors called directly with a hand-made leaf (kind 7 ran as an ascending compare-swap, or not at all).
  EXPECT_NE(test::error_message([&] { leaf_pass_cpu(identity(3), unknown, v.data(), DType::Int32); })
                .find("names no LeafKind"),
            std::string::npos);
  const std::vector<ScheduledPass> fused = schedule(lower(compare_swap(3)), ExecStrategy::Fused, FusionOptions{3, 0});
  ASSERT_EQ(fused.size(), 1u);
  FusedLeafPass hand = std::get<FusedLeafPass>(fused[0]);
  for (LeafPass& l : hand.leaves) l.leaf = unknown;
  EXPECT_NE(test::error_message([&] { fused_leaf_pass_cpu(hand, 3, v.data(), DType::Int32); }).find("names no LeafKind"),
            std::string::npos);
  EXPECT_EQ(v, before);
}

}  // namespace
}  // namespace bmmc
