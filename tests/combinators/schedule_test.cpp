// schedule(): the pass lists of both strategies, by property — their counts are LoweredProgram's pass counts,
// folded moves the data once (last, by the total permutation), and running the list by the definitions
// (permutation: out[A·x ⊕ c] = in[x]; leaf: every chunk of the logical array seen through the layout)
// gives what the interpreter gives. No executor is involved: this is the contract both executors consume.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <variant>
#include <vector>

#include "bmmc/combinators/interpret.hpp"
#include "bmmc/combinators/lower.hpp"
#include "bmmc/combinators/schedule.hpp"
#include "bmmc/combinators/sorting_network.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/core/subspace.hpp"

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

void run_leaf(const LeafPass& l, Data& v);

// The passes run by their definitions, nothing shared with the executors (a fused pass is its leaves in order).
Data run_by_definition(const std::vector<ScheduledPass>& passes, Data v) {
  for (const ScheduledPass& pass : passes) {
    if (const auto* p = std::get_if<PermutePass>(&pass)) {
      Data out(v.size());
      for (BitVec x = 0; x < v.size(); ++x) out[p->perm.apply(x)] = v[x];
      v = std::move(out);
    } else if (const auto* f = std::get_if<FusedLeafPass>(&pass)) {
      for (const LeafPass& l : f->leaves) run_leaf(l, v);
    } else {
      run_leaf(std::get<LeafPass>(pass), v);
    }
  }
  return v;
}

void run_leaf(const LeafPass& l, Data& v) {
  const int bits = leaf_bits(l.leaf);
  const Bmmc inv = l.layout.inverse();  // logical index y lives at physical inv(y)
  for (BitVec h = 0; h < (v.size() >> bits); ++h) {
    std::int32_t chunk[256];
    for (BitVec j = 0; j < (BitVec{1} << bits); ++j) chunk[j] = v[inv.apply((h << bits) | j)];
    apply_leaf(l.leaf, chunk);
    for (BitVec j = 0; j < (BitVec{1} << bits); ++j) v[inv.apply((h << bits) | j)] = chunk[j];
  }
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

  // Fused, at several tile shapes, in the program's own memory order and with the relayout: the folded passes
  // regrouped (same leaves in the same order; with a relayout R first, every layout times R⁻¹ and the final
  // permutation M·R⁻¹), every tile within its size with whole lines, every leaf's pair inside its tile, and no two
  // neighbouring fused passes that would fit one tile together (any cut with the fewest passes has none).
  for (const bool relayout : {false, true})
    for (FusionOptions f : {FusionOptions{2, 0}, FusionOptions{3, 1}, FusionOptions{5, 2}, FusionOptions{13, 5}}) {
      f.relayout = relayout;
      f.cost_aware_cut = f.tile_bits % 2 == 1;  // the greedy and the cost-aware cut, both by definition
      const auto fused = schedule(lp, ExecStrategy::Fused, f);
      Bmmc back = identity(prog.n());  // R⁻¹
      std::size_t first = 0;
      if (!fused.empty() && relayout)
        if (const auto* r = std::get_if<PermutePass>(&fused[0]); r && lp.leaf_atoms) {
          back = r->perm.inverse();
          first = 1;
        }
      std::vector<LeafPass> regrouped;
      for (std::size_t i = first; i < fused.size(); ++i) {
        if (const auto* m = std::get_if<PermutePass>(&fused[i])) {
          EXPECT_EQ(i + 1, fused.size()) << "the permutation comes last";
          EXPECT_EQ(m->perm, compose(lp.total_permutation(), back));
          continue;
        }
        const auto& fp = std::get<FusedLeafPass>(fused[i]);
        const Subspace t = Subspace::span(prog.n(), fp.tile);
        EXPECT_EQ(t.dim(), static_cast<int>(fp.tile.size()));
        EXPECT_LE(t.dim(), f.tile_bits);
        for (int b = 0; b < std::min(f.line_bits, prog.n()); ++b) EXPECT_TRUE(t.contains(BitVec{1} << b));
        for (const LeafPass& l : fp.leaves) {
          EXPECT_TRUE(t.contains(l.layout.inverse().matrix().col(0)));
          regrouped.push_back(l);
        }
        if (i + 1 < fused.size() && std::holds_alternative<FusedLeafPass>(fused[i + 1])) {
          Subspace both = t;
          for (const LeafPass& l : std::get<FusedLeafPass>(fused[i + 1]).leaves) both.insert(l.layout.inverse().matrix().col(0));
          EXPECT_GT(both.dim(), f.tile_bits) << "two fused passes that fit one tile";
        }
      }
      std::vector<LeafPass> folded_leaves;
      for (const ScheduledPass& p : folded)
        if (const auto* l = std::get_if<LeafPass>(&p)) folded_leaves.push_back(LeafPass{compose(l->layout, back), l->leaf});
      EXPECT_EQ(regrouped, folded_leaves);
      EXPECT_EQ(run_by_definition(fused, in), expect) << prog.to_string() << to_string(lp);
    }
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

// A LoweredProgram built by hand with a stage on another n, a leaf wider than the array, n = -1 or an unknown
// strategy is refused by schedule, which every executor calls first (before: a stage on 6 bits ran inside an
// 8-bit program, and n = -1 shifted by a negative count).
TEST(Schedule, HandMadeLoweredProgramsAreRefused) {
  LoweredProgram lp;
  lp.n = 8;
  lp.stages.push_back(Stage{random_bmmc(6, 1), Leaf{}});
  EXPECT_THROW(schedule(lp, ExecStrategy::PermuteThenLeaf), std::invalid_argument);
  lp.stages = {Stage{identity(0), Leaf{}}};
  lp.n = 0;
  EXPECT_THROW(schedule(lp, ExecStrategy::Folded), std::invalid_argument);  // a compare-swap needs 2 elements
  lp.n = -1;
  lp.stages.clear();
  EXPECT_THROW(schedule(lp, ExecStrategy::Folded), std::invalid_argument);
  EXPECT_THROW(schedule(lower(Program(4)), static_cast<ExecStrategy>(9)), std::invalid_argument);
  EXPECT_NO_THROW(schedule(lower(Program(4)), ExecStrategy::Folded));
}

TEST(Schedule, FusedSortingNetworkPassCounts) {
  // The paper's network at n = 24 (300 compare-swap columns, 300 folded passes), whole 128-byte lines of int32
  // (c = 5). In the network's own memory order (the folded layouts; its permutations cancel, so no permutation
  // pass): 45 passes at t = 11, 38 at 12, 33 at 13, 24 at 15 — its pair directions are high bits, so every tile
  // spends c dimensions on lines no column uses. With the relayout (the most used directions made low bits, one
  // permutation pass first and one last): 32 / 27 / 23 / 17, against issue 18's 34 / 27 / 21 / 13.
  // A sort leaves out the first of those two passes (its output does not depend on its input's order).
  // The GPU's cut at n = 24 (t = 13, 32-byte runs): 25 passes in the network's own order, 20 for the sort (19
  // fused + the last permutation); above n = 24 t = 14.
  const LoweredProgram lp = lower(sort_network(24));
  const std::tuple<int, std::size_t, std::size_t> expected[] = {{11, 45, 32}, {12, 38, 27}, {13, 33, 23}, {15, 24, 17}};
  for (auto [t, own_order, relaid] : expected) {
    FusionOptions f{t, 5};
    EXPECT_EQ(schedule(lp, ExecStrategy::Fused, f).size(), relaid) << "t = " << t;
    f.relayout = false;
    EXPECT_EQ(schedule(lp, ExecStrategy::Fused, f).size(), own_order) << "t = " << t;
  }
  EXPECT_EQ(gpu_fusion_options(4, 24).tile_bits, 13);
  EXPECT_EQ(gpu_fusion_options(4, 25).tile_bits, 14);
  EXPECT_EQ(gpu_fusion_options(8, 24).tile_bits, 13);
  FusionOptions gpu = gpu_fusion_options(4, 24);
  gpu.input_order_free = true;
  const auto passes = schedule(lp, ExecStrategy::Fused, gpu);
  EXPECT_EQ(passes.size(), 20u);
  EXPECT_TRUE(std::holds_alternative<FusedLeafPass>(passes.front()));
  EXPECT_TRUE(std::holds_alternative<PermutePass>(passes.back()));
  gpu.relayout = false;
  EXPECT_EQ(schedule(lp, ExecStrategy::Fused, gpu).size(), 25u);
  EXPECT_THROW(schedule(lp, ExecStrategy::Fused, {5, 5}), std::invalid_argument);
}

// The summed fused_pass_cost of a schedule's fused passes, computed here from the leaves and the tiles.
long schedule_cost(const std::vector<ScheduledPass>& passes, int n, int t) {
  long cost = 0;
  for (const ScheduledPass& p : passes)
    if (const auto* f = std::get_if<FusedLeafPass>(&p)) {
      std::vector<BitVec> dirs;
      for (const LeafPass& l : f->leaves) dirs.push_back(l.layout.inverse().matrix().col(0));
      const int windows = register_windows(dirs, n, 5);  // equal to the kernel plan's (fused_source_test)
      // The runs the kernel's tile gets when widened to t dimensions with the lowest unit vectors (capped at 2^6).
      Subspace tile = Subspace::span(n, f->tile);
      int runs = 0;
      while (runs < std::min({n, 6, t}) && tile.contains(BitVec{1} << runs)) ++runs;
      for (Subspace wider = tile; runs < std::min({n, 6, t}); ++runs) {
        wider.insert(BitVec{1} << runs);
        if (wider.dim() > t) break;
      }
      cost += fused_pass_cost(windows, std::uint64_t{4} << runs);
    }
  return cost;
}

// The cost-aware cut keeps the greedy cut's pass count (the fewest) and never costs more (the model evaluated
// here on the passes it returned: windows of span 5, runs of 4-byte keys); both cut the same leaves in the same order.
TEST(Schedule, CostAwareCutKeepsTheFewestPasses) {
  std::mt19937_64 rng(31);
  int cheaper = 0;
  auto compare = [&](const LoweredProgram& lp, FusionOptions f, const char* what) {
    f.cost_aware_cut = false;
    const auto greedy = schedule(lp, ExecStrategy::Fused, f);
    f.cost_aware_cut = true;
    const auto aware = schedule(lp, ExecStrategy::Fused, f);
    EXPECT_EQ(aware.size(), greedy.size()) << what;
    EXPECT_LE(schedule_cost(aware, lp.n, f.tile_bits), schedule_cost(greedy, lp.n, f.tile_bits)) << what;
    cheaper += schedule_cost(aware, lp.n, f.tile_bits) < schedule_cost(greedy, lp.n, f.tile_bits);
    auto flat = [](const std::vector<ScheduledPass>& passes) {  // the leaves in order, permutations as markers
      std::vector<LeafPass> leaves;
      for (const auto& p : passes)
        if (const auto* fp = std::get_if<FusedLeafPass>(&p)) leaves.insert(leaves.end(), fp->leaves.begin(), fp->leaves.end());
        else if (std::holds_alternative<PermutePass>(p)) leaves.push_back(LeafPass{std::get<PermutePass>(p).perm, Leaf{}});
      return leaves;
    };
    EXPECT_TRUE(flat(aware) == flat(greedy)) << what;
    if (const int n = lp.n; n <= 12) {
      Data v(std::size_t{1} << n);
      for (auto& x : v) x = static_cast<std::int32_t>(rng() % 1000);
      EXPECT_EQ(run_by_definition(aware, v), run_by_definition(greedy, v)) << what;
    }
  };
  for (int n : {16, 20, 22, 24, 26})
    for (int t : {12, 13, 14}) {
      FusionOptions f{t, 3};
      f.input_order_free = true;
      compare(lower(sort_network(n)), f, "network");
    }
  for (int i = 0; i < 40; ++i) {
    const int n = 6 + static_cast<int>(rng() % 7);
    compare(lower(random_program(n, 3, rng)), FusionOptions{4 + static_cast<int>(rng() % 3), 2}, "random");
  }
  EXPECT_GT(cheaper, 0) << "the cost-aware cut never found a cheaper cut";
  EXPECT_EQ(fused_pass_cost(3, 32), 31);
  EXPECT_EQ(fused_pass_cost(2, 256), 14);
}

TEST(Schedule, StrategyNames) {
  for (ExecStrategy s : {ExecStrategy::Folded, ExecStrategy::PermuteThenLeaf, ExecStrategy::Fused})
    EXPECT_EQ(parse_exec_strategy(to_string(s)), s);
  EXPECT_THROW(parse_exec_strategy("fast"), std::invalid_argument);
  EXPECT_THROW(parse_exec_strategy(nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace bmmc
