// Schedules of lowered programs (see schedule.hpp).
#include "bmmc/combinators/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "bmmc/core/named.hpp"
#include "bmmc/core/subspace.hpp"
#include "tuning.hpp"

namespace bmmc {

const char* to_string(ExecStrategy s) noexcept {
  switch (s) {
    case ExecStrategy::Folded: return "folded";
    case ExecStrategy::PermuteThenLeaf: return "permute-then-leaf";
    case ExecStrategy::Fused: return "fused";
  }
  return "?";
}

ExecStrategy parse_exec_strategy(const char* name) {
  const std::string_view v(name ? name : "");
  if (v == "folded") return ExecStrategy::Folded;
  if (v == "permute-then-leaf") return ExecStrategy::PermuteThenLeaf;
  if (v == "fused") return ExecStrategy::Fused;
  throw std::invalid_argument(fmt::format("unknown strategy '{}'; expected folded, permute-then-leaf or fused", v));
}

int fused_pass_cost(int windows, std::uint64_t run_bytes) noexcept {
  using namespace combinators_tuning;
  const int runs = run_bytes <= 32 ? kCostRuns32 : run_bytes == 64 ? kCostRuns64 : run_bytes == 128 ? kCostRuns128 : 0;
  return kCostPerWindow * windows + runs;
}

FusionOptions gpu_fusion_options(int key_bytes, int n) noexcept {
  using namespace combinators_tuning;
  FusionOptions f{key_bytes > 4 || n <= kFusionSmallMaxN ? kFusionTileBitsSmall : kFusionTileBitsLarge,
                  key_bytes > 4 ? kFusionLineBitsWide : kFusionLineBits};
  f.cost_aware_cut = true;
  f.key_bytes = key_bytes;
  return f;
}

namespace {

// The pair direction of a leaf pass in memory: layout maps memory to logical order, so the logical pair
// {y, y ⊕ e_0} sits at {x, x ⊕ layout⁻¹·e_0}.
BitVec direction(const LeafPass& leaf) { return leaf.layout.inverse().matrix().col(0); }

// Register windows the fused kernel needs (codegen/fused_source.hpp: greedy runs of columns whose directions span
// at most `bits` dimensions; none for the shared kernel, bits = 0), counted as the columns are added.
struct WindowCount {
  Subspace current;
  int bits = 5;
  int windows = 0;
  void add(BitVec d) {
    if (bits == 0) return;
    Subspace t = current;
    t.insert(d);
    if (windows > 0 && t.dim() <= bits) {
      current = std::move(t);
      return;
    }
    ++windows;
    current = Subspace::span(current.n(), {d});
  }
};

// Cuts one run of consecutive leaf passes (pair directions `dirs`) into tiles: the ends of each pass. Feasible
// pass [j, k): e_0 … e_(lines−1) and dirs[j..k) span at most tile_bits dimensions (monotone in k, so the greedy
// longest runs give the fewest passes). Cost-aware: best[k] = (passes, cost) lexicographically least over the
// feasible last passes [j, k). Quadratic in the run's length where whole runs fit one tile (every [j, k) is
// tried); a sorting network's runs are a few hundred leaves.
std::vector<std::size_t> cut(const std::vector<BitVec>& dirs, int n, int lines, const FusionOptions& f) {
  const std::size_t m = dirs.size();
  std::vector<std::size_t> ends;
  if (!f.cost_aware_cut) {
    std::optional<Subspace> v;
    for (std::size_t k = 0; k < m; ++k) {
      if (v) {
        Subspace t = *v;
        t.insert(dirs[k]);
        if (t.dim() <= f.tile_bits) {
          v = std::move(t);
          continue;
        }
        ends.push_back(k);
      }
      v = Subspace::low_bits(n, lines);
      v->insert(dirs[k]);
    }
    if (m) ends.push_back(m);
    return ends;
  }
  struct Best {
    std::size_t passes = std::numeric_limits<std::size_t>::max();
    long cost = 0;
    std::size_t from = 0;
  };
  std::vector<Best> best(m + 1);
  best[0] = {0, 0, 0};
  const int top = std::min(n, f.tile_bits);  // run bits worth knowing (the cost stops falling at 256-byte runs)
  for (std::size_t j = 0; j < m; ++j) {
    if (best[j].passes == std::numeric_limits<std::size_t>::max()) continue;
    std::vector<Subspace> with_runs;  // L_c + dirs[j..k) for c = lines .. min(6, top)
    for (int c = lines; c <= std::max(lines, std::min(6, top)); ++c) with_runs.push_back(Subspace::low_bits(n, c));
    WindowCount windows{Subspace(n), f.window_bits};
    for (std::size_t k = j; k < m; ++k) {
      for (Subspace& s : with_runs) s.insert(dirs[k]);
      if (with_runs.front().dim() > f.tile_bits) break;
      windows.add(dirs[k]);
      int run_bits = lines;
      for (std::size_t c = 1; c < with_runs.size() && with_runs[c].dim() <= f.tile_bits; ++c) run_bits = lines + static_cast<int>(c);
      const std::uint64_t run_bytes = (std::uint64_t{1} << run_bits) * static_cast<std::uint64_t>(f.key_bytes);
      const Best cand{best[j].passes + 1, best[j].cost + fused_pass_cost(windows.windows, run_bytes), j};
      Best& b = best[k + 1];
      if (cand.passes < b.passes || (cand.passes == b.passes && cand.cost < b.cost)) b = cand;
    }
  }
  for (std::size_t k = m; k > 0; k = best[k].from) ends.push_back(k);
  std::reverse(ends.begin(), ends.end());
  return ends;
}

// Interval partition of the folded leaf passes into tiles (see schedule.hpp).
std::vector<ScheduledPass> fuse(const LoweredProgram& lp, std::vector<ScheduledPass> folded, const FusionOptions& f) {
  const int lines = std::min(f.line_bits, lp.n);
  std::vector<ScheduledPass> out;
  std::vector<LeafPass> run;  // consecutive leaf passes, cut together
  auto close = [&] {
    std::vector<BitVec> dirs;
    for (const LeafPass& l : run) dirs.push_back(direction(l));
    std::size_t start = 0;
    for (std::size_t end : cut(dirs, lp.n, lines, f)) {
      FusedLeafPass pass;
      Subspace v = Subspace::low_bits(lp.n, lines);
      for (std::size_t i = start; i < end; ++i) {
        v.insert(dirs[i]);
        pass.leaves.push_back(run[i]);
      }
      pass.tile = v.basis();
      out.emplace_back(std::move(pass));
      start = end;
    }
    run.clear();
  };
  for (ScheduledPass& p : folded) {
    const auto* leaf = std::get_if<LeafPass>(&p);
    if (!leaf) {
      close();
      out.push_back(std::move(p));
      continue;
    }
    if (leaf_bits(leaf->leaf) != 1)
      throw std::invalid_argument("fusion: only pair leaves (leaf_bits = 1) can be fused so far");
    run.push_back(*leaf);
  }
  close();
  return out;
}

// The relayout R of the folded schedule (schedule.hpp): R⁻¹ sends e_0, e_1, … to the leaves' pair directions
// in order of how many leaves use them (ties: first use), skipping dependent ones, completed by unit vectors.
// Worked example: a bitonic network whose memory order has its pairs at e_23, e_22, … (the bit-reversed
// layout of the paper's network) uses e_23 in every merge, so R⁻¹·e_0 = e_23: after R the most used pair
// direction is memory bit 0, one of the line bits every tile holds anyway.
Bmmc relayout(const LoweredProgram& lp, const std::vector<ScheduledPass>& folded) {
  std::vector<std::pair<BitVec, int>> uses;  // direction, count; in order of first use
  for (const ScheduledPass& p : folded)
    if (const auto* leaf = std::get_if<LeafPass>(&p)) {
      const BitVec d = direction(*leaf);
      auto it = std::find_if(uses.begin(), uses.end(), [&](const auto& u) { return u.first == d; });
      if (it == uses.end()) uses.emplace_back(d, 1);
      else ++it->second;
    }
  std::stable_sort(uses.begin(), uses.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  Subspace seen(lp.n);
  std::vector<BitVec> cols;
  for (const auto& [d, count] : uses)
    if (seen.insert(d)) cols.push_back(d);
  for (int i = 0; i < lp.n; ++i)
    if (seen.insert(BitVec{1} << i)) cols.push_back(BitVec{1} << i);
  return Bmmc(BitMatrix::from_cols(lp.n, cols)).inverse();
}

// The folded schedule with the array first moved by R (not where the input's order does not matter): every
// layout becomes layout·R⁻¹ and the final permutation M·R⁻¹ (none when that is the identity).
std::vector<ScheduledPass> relaid(const LoweredProgram& lp, const Bmmc& r, bool input_order_free) {
  std::vector<ScheduledPass> passes;
  if (!input_order_free) passes.emplace_back(PermutePass{r});
  const Bmmc back = r.inverse();
  Bmmc layout = identity(lp.n);
  for (const Stage& stage : lp.stages) {
    layout = compose(stage.perm, layout);
    if (stage.leaf) passes.emplace_back(LeafPass{compose(layout, back), *stage.leaf});
  }
  if (const Bmmc last = compose(layout, back); !last.is_identity()) passes.emplace_back(PermutePass{last});
  return passes;
}

}  // namespace

int register_windows(const std::vector<BitVec>& dirs, int n, int bits) {
  WindowCount w{Subspace(n), bits};
  for (BitVec d : dirs) w.add(d);
  return w.windows;
}

std::vector<ScheduledPass> schedule(const LoweredProgram& lp, ExecStrategy s, const FusionOptions& fusion) {
  // A LoweredProgram is a plain struct a caller may build: every executor (CPU, GPU) schedules it through here,
  // so its sizes are checked here, before any pass runs.
  if (lp.n < 0 || lp.n > 62)
    throw std::invalid_argument(fmt::format("schedule: the lowered program has n = {}; expected 0..62", lp.n));
  for (std::size_t i = 0; i < lp.stages.size(); ++i) {
    const Stage& stage = lp.stages[i];
    if (stage.perm.n() != lp.n)
      throw std::invalid_argument(fmt::format("schedule: stage {} permutes {} bits in a program on {} bits", i,
                                              stage.perm.n(), lp.n));
    if (stage.leaf) check_leaf(*stage.leaf);
    if (stage.leaf && leaf_bits(*stage.leaf) > lp.n)
      throw std::invalid_argument(fmt::format("schedule: stage {}'s leaf reads chunks of 2^{} elements; the array "
                                              "has 2^{}",
                                              i, leaf_bits(*stage.leaf), lp.n));
  }
  if (s != ExecStrategy::Folded && s != ExecStrategy::PermuteThenLeaf && s != ExecStrategy::Fused)
    throw std::invalid_argument(fmt::format("schedule: unknown strategy {}", static_cast<int>(s)));
  if (s == ExecStrategy::Fused) {
    if (fusion.tile_bits > 24 || fusion.line_bits < 0 || fusion.line_bits >= fusion.tile_bits)
      throw std::invalid_argument(fmt::format("fusion: tile_bits {} and line_bits {}: expected 0 <= line_bits < "
                                              "tile_bits <= 24", fusion.tile_bits, fusion.line_bits));
    std::vector<ScheduledPass> folded = schedule(lp, ExecStrategy::Folded);
    std::vector<ScheduledPass> plain = fuse(lp, folded, fusion);
    if (!fusion.relayout) return plain;
    const Bmmc r = relayout(lp, folded);
    if (r.is_identity()) return plain;
    std::vector<ScheduledPass> moved = fuse(lp, relaid(lp, r, fusion.input_order_free), fusion);
    return moved.size() < plain.size() ? moved : plain;
  }
  std::vector<ScheduledPass> passes;
  if (s == ExecStrategy::PermuteThenLeaf) {
    for (const Stage& stage : lp.stages) {
      if (!stage.perm.is_identity()) passes.emplace_back(PermutePass{stage.perm});
      if (stage.leaf) passes.emplace_back(LeafPass{identity(lp.n), *stage.leaf});
    }
    return passes;
  }
  Bmmc layout = identity(lp.n);
  for (const Stage& stage : lp.stages) {
    layout = compose(stage.perm, layout);
    if (stage.leaf) passes.emplace_back(LeafPass{layout, *stage.leaf});
  }
  if (!layout.is_identity()) passes.emplace_back(PermutePass{layout});
  return passes;
}

FusionOptions with_exec_options(FusionOptions backend_cut, const ExecOptions& o) noexcept {
  if (o.tile_bits) backend_cut.tile_bits = o.tile_bits;
  if (o.line_bits >= 0) backend_cut.line_bits = o.line_bits;
  backend_cut.relayout = o.relayout;
  backend_cut.input_order_free = o.input_order_free;
  return backend_cut;
}

}  // namespace bmmc
