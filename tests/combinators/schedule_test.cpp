// schedule(): the pass lists of both strategies, by property — their counts are LoweredProgram's pass counts,
// folded moves the data once (last, by the total permutation), and running the list by the definitions
// (permutation: out[A·x ⊕ c] = in[x]; leaf: every chunk of the logical array seen through the layout)
// gives what the interpreter gives. No executor is involved: this is the contract both executors consume.
#include <gtest/gtest.h>

#include <random>
#include <variant>
#include <vector>

#include "bmmc/combinators/interpret.hpp"
#include "bmmc/combinators/lower.hpp"
#include "bmmc/combinators/schedule.hpp"
#include "bmmc/combinators/sorting_network.hpp"
#include "bmmc/core/named.hpp"

namespace bmmc {
namespace {

using Data = std::vector<std::int32_t>;

// A random program on n bits: bmmcs, leaves and parms with random masks, nested up to `depth`.
Program random_program(int n, int depth, std::mt19937_64& rng) {
  Program p(n);
  const int steps = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < steps; ++i) {
    const int kind = static_cast<int>(rng() % 4);
    if (kind == 0) {
      p.push(BmmcStep{random_bmmc(n, rng())});
    } else if (kind == 1 || n < 2 || depth == 0) {
      p.push(LeafStep{Leaf{rng() % 3 ? LeafKind::CompareSwap : LeafKind::CompareSwapDesc}});
    } else {
      BitVec mask = 0;
      while (mask == 0) mask = rng() & low_mask(n);
      p.append(parm(mask, random_program(n - 1, depth - 1, rng)));
    }
  }
  return p;
}

// The passes run by their definitions, nothing shared with the executors.
Data run_by_definition(const std::vector<ScheduledPass>& passes, Data v) {
  for (const ScheduledPass& pass : passes) {
    if (const auto* p = std::get_if<PermutePass>(&pass)) {
      Data out(v.size());
      for (BitVec x = 0; x < v.size(); ++x) out[p->perm.apply(x)] = v[x];
      v = std::move(out);
    } else {
      const auto& l = std::get<LeafPass>(pass);
      const int bits = leaf_bits(l.leaf);
      const Bmmc inv = l.layout.inverse();  // logical index y lives at physical inv(y)
      for (BitVec h = 0; h < (v.size() >> bits); ++h) {
        std::int32_t chunk[256];
        for (BitVec j = 0; j < (BitVec{1} << bits); ++j) chunk[j] = v[inv.apply((h << bits) | j)];
        apply_leaf(l.leaf, chunk);
        for (BitVec j = 0; j < (BitVec{1} << bits); ++j) v[inv.apply((h << bits) | j)] = chunk[j];
      }
    }
  }
  return v;
}

std::size_t count_permutes(const std::vector<ScheduledPass>& passes) {
  std::size_t c = 0;
  for (const ScheduledPass& p : passes) c += std::holds_alternative<PermutePass>(p);
  return c;
}

void check_schedules(const Program& prog, std::uint64_t seed) {
  const LoweredProgram lp = lower(prog);
  std::size_t leaves = 0;
  for (const Stage& s : lp.stages) leaves += s.leaf.has_value();

  const auto ptl = schedule(lp, ExecStrategy::PermuteThenLeaf);
  EXPECT_EQ(ptl.size(), lp.passes_permute_then_leaf());
  EXPECT_EQ(count_permutes(ptl), lp.permutations());
  for (const ScheduledPass& p : ptl) {
    if (const auto* l = std::get_if<LeafPass>(&p)) EXPECT_TRUE(l->layout.is_identity()) << "leaves run on consecutive chunks";
    if (const auto* m = std::get_if<PermutePass>(&p)) EXPECT_FALSE(m->perm.is_identity());
  }

  const auto folded = schedule(lp, ExecStrategy::Folded);
  EXPECT_EQ(folded.size(), lp.passes_folded());
  EXPECT_EQ(folded.size() - count_permutes(folded), leaves);
  ASSERT_LE(count_permutes(folded), 1u);
  if (count_permutes(folded) == 1) {
    ASSERT_TRUE(std::holds_alternative<PermutePass>(folded.back())) << "folded moves the data last";
    EXPECT_EQ(std::get<PermutePass>(folded.back()).perm, lp.total_permutation());
  } else {
    EXPECT_TRUE(lp.total_permutation().is_identity());
  }

  std::mt19937_64 rng(seed);
  Data in(std::size_t{1} << prog.n());
  for (auto& x : in) x = static_cast<std::int32_t>(rng() % 1000) - 500;
  Data expect = in;
  interpret(prog, std::span<std::int32_t>(expect));
  EXPECT_EQ(run_by_definition(ptl, in), expect) << prog.to_string() << to_string(lp);
  EXPECT_EQ(run_by_definition(folded, in), expect) << prog.to_string() << to_string(lp);
}

TEST(Schedule, RandomProgramsBothStrategies) {
  std::mt19937_64 rng(21);
  for (int r = 0; r < 120; ++r) {
    const int n = 1 + static_cast<int>(rng() % 9);
    check_schedules(random_program(n, 4, rng), rng());
  }
}

TEST(Schedule, SortingNetwork) {
  for (int n = 1; n <= 8; ++n) check_schedules(sort_network(n), 100 + n);
}

TEST(Schedule, EmptyAndPurePermutationPrograms) {
  EXPECT_TRUE(schedule(lower(Program(5)), ExecStrategy::Folded).empty());
  EXPECT_TRUE(schedule(lower(Program(5)), ExecStrategy::PermuteThenLeaf).empty());
  const Bmmc b = random_bmmc(6, 3);
  for (ExecStrategy s : {ExecStrategy::Folded, ExecStrategy::PermuteThenLeaf}) {
    const auto passes = schedule(lower(bmmc_program(b)), s);
    ASSERT_EQ(passes.size(), 1u);
    EXPECT_EQ(std::get<PermutePass>(passes[0]).perm, b);
  }
}

TEST(Schedule, StrategyNames) {
  for (ExecStrategy s : {ExecStrategy::Folded, ExecStrategy::PermuteThenLeaf})
    EXPECT_EQ(parse_exec_strategy(to_string(s)), s);
  EXPECT_THROW(parse_exec_strategy("fast"), std::invalid_argument);
  EXPECT_THROW(parse_exec_strategy(nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace bmmc
