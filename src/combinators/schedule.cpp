// Schedules of lowered programs (see schedule.hpp).
#include "bmmc/combinators/schedule.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string_view>

#include "bmmc/core/named.hpp"

namespace bmmc {

const char* to_string(ExecStrategy s) noexcept {
  return s == ExecStrategy::Folded ? "folded" : "permute-then-leaf";
}

ExecStrategy parse_exec_strategy(const char* name) {
  const std::string_view v(name ? name : "");
  if (v == "folded") return ExecStrategy::Folded;
  if (v == "permute-then-leaf") return ExecStrategy::PermuteThenLeaf;
  throw std::invalid_argument(fmt::format("unknown strategy '{}'; expected folded or permute-then-leaf", v));
}

std::vector<ScheduledPass> schedule(const LoweredProgram& lp, ExecStrategy s) {
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
