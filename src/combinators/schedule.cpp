// Schedules of lowered programs (see schedule.hpp).
#include "bmmc/combinators/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "bmmc/core/named.hpp"
#include "bmmc/core/subspace.hpp"

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

FusionOptions gpu_fusion_options(int key_bytes) noexcept {
  return key_bytes <= 4 ? FusionOptions{14, 3} : FusionOptions{13, 2};
}

namespace {

// Greedy interval partition of the folded leaf passes into tiles (see schedule.hpp).
std::vector<ScheduledPass> fuse(const LoweredProgram& lp, std::vector<ScheduledPass> folded, const FusionOptions& f) {
  if (f.tile_bits > 24 || f.line_bits < 0 || f.line_bits >= f.tile_bits)
    throw std::invalid_argument(fmt::format(
        "fusion: tile_bits {} and line_bits {}: expected 0 <= line_bits < tile_bits <= 24", f.tile_bits, f.line_bits));
  const int lines = std::min(f.line_bits, lp.n);
  std::vector<ScheduledPass> out;
  std::optional<Subspace> v;
  FusedLeafPass run;
  auto close = [&] {
    if (run.leaves.empty()) return;
    run.tile = v->basis();
    out.emplace_back(std::move(run));
    run = FusedLeafPass{};
    v.reset();
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
    const BitVec dir = leaf->layout.inverse().matrix().col(0);  // the pair's direction in memory
    if (v) {
      Subspace t = *v;
      t.insert(dir);
      if (t.dim() <= f.tile_bits) {
        v = std::move(t);
        run.leaves.push_back(*leaf);
        continue;
      }
      close();
    }
    v = Subspace::low_bits(lp.n, lines);
    v->insert(dir);
    run.leaves.push_back(*leaf);
  }
  close();
  return out;
}

}  // namespace

std::vector<ScheduledPass> schedule(const LoweredProgram& lp, ExecStrategy s, const FusionOptions& fusion) {
  if (s == ExecStrategy::Fused) return fuse(lp, schedule(lp, ExecStrategy::Folded), fusion);
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

}  // namespace bmmc
