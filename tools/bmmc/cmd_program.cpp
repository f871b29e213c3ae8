// bmmc program NAME --n N: prints a combinator program as written, after the rewrite rules (simplify: fusion,
// cancellation, parm of bmmc), lowered to "permute, then leaf" stages with the pass counts, and the fused
// schedule (docs/DESIGN.md §10: runs of columns that fit one tile as one pass) with its passes over memory.
// --json prints the counts instead (at least "passes": the fused schedule's passes over memory).
//
// NAME is one of the paper's §7.1 programs: sort, merge, vcolumn. Deep programs are long, so the written form
// is cut at --depth levels of parm nesting and the stage list at --stages lines.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "bmmc/combinators/lower.hpp"
#include "bmmc/combinators/rewrite.hpp"
#include "bmmc/combinators/schedule.hpp"
#include "bmmc/combinators/sorting_network.hpp"
#include "cli_common.hpp"

namespace bmmc::cli {
namespace {

struct ProgramOptions {
  std::string name;
  int n = -1;
  int depth = 3;
  int stages = 40;
  bool expand = false, json = false, no_relayout = false, greedy_cut = false;
  int tile_bits = 0, line_bits = -1;  // unset: the GPU's cut for 2^n 4-byte keys (gpu_fusion_options)
};

// The fused schedule's passes, one line each: "pass i: fused, k columns, tile 2^t (runs of 2^c)" or "permute".
std::string fused_lines(const std::vector<ScheduledPass>& passes, std::size_t max_lines) {
  std::string s;
  for (std::size_t i = 0; i < passes.size() && i < max_lines; ++i) {
    if (const auto* f = std::get_if<FusedLeafPass>(&passes[i])) {
      int run = 0;
      while (run < static_cast<int>(f->tile.size()) && f->tile[run] == BitVec{1} << run) ++run;
      s += fmt::format("  pass {}: fused, {} columns in tiles of 2^{} keys (runs of 2^{})\n", i, f->leaves.size(),
                       f->tile.size(), run);
    } else if (std::holds_alternative<PermutePass>(passes[i])) {
      s += fmt::format("  pass {}: permute {}\n", i, to_string(std::get<PermutePass>(passes[i]).perm.classify()));
    } else {
      s += fmt::format("  pass {}: leaf\n", i);
    }
  }
  if (passes.size() > max_lines) s += fmt::format("  ... ({} more)\n", passes.size() - max_lines);
  return s;
}

Program build(const std::string& name, int n) {
  if (n < 0 || n > 34) throw UsageError(fmt::format("--n must be in 0..34, got {}", n));
  if (name == "sort") return sort_network(n);
  if (name == "merge") return merge_network(n);
  if (name == "vcolumn") return vcolumn(n);
  throw UsageError(fmt::format("unknown program '{}'; expected sort, merge or vcolumn", name));
}

void program_command(const ProgramOptions& o) {
  const Program p = build(o.name, o.n);
  ExecOptions exec;  // the options bmmc sort takes, on the GPU's cut for 4-byte keys
  exec.tile_bits = o.tile_bits;
  exec.line_bits = o.line_bits;
  exec.relayout = !o.no_relayout;
  exec.input_order_free = o.name == "sort";  // as bmmc sort runs it: a sort's output ignores the input's order
  FusionOptions fusion = with_exec_options(gpu_fusion_options(4, o.n), exec);
  fusion.cost_aware_cut = !o.greedy_cut;
  if (fusion.tile_bits < 1 || fusion.tile_bits > 24 || fusion.line_bits < 0 || fusion.line_bits >= fusion.tile_bits)
    throw UsageError(fmt::format("--tile-bits {} and --line-bits {}: expected 0 <= line bits < tile bits <= 24",
                                 fusion.tile_bits, fusion.line_bits));
  if (o.json) {
    const LoweredProgram lp = lower(p);
    const auto fused = schedule(lp, ExecStrategy::Fused, fusion);
    std::size_t fused_passes = 0, permutations = 0;
    for (const ScheduledPass& sp : fused) {
      fused_passes += std::holds_alternative<FusedLeafPass>(sp);
      permutations += std::holds_alternative<PermutePass>(sp);
    }
    nlohmann::ordered_json j;
    j["program"] = o.name;
    j["n"] = o.n;
    j["strategy"] = "fused";
    j["tile_bits"] = fusion.tile_bits;
    j["line_bits"] = fusion.line_bits;
    j["passes"] = fused.size();
    j["fused_passes"] = fused_passes;
    j["permutation_passes"] = permutations;
    FusionOptions kept = fusion;
    kept.relayout = false;
    j["passes_without_relayout"] = schedule(lp, ExecStrategy::Fused, kept).size();
    j["columns"] = lp.leaf_atoms;
    j["passes_folded"] = lp.passes_folded();
    j["passes_permute_then_leaf"] = lp.passes_permute_then_leaf();
    print_json(j);
    return;
  }
  fmt::print("== {} {} as written ({} steps in the unshared tree; parm nesting shown to depth {})\n", o.name, o.n,
             p.tree_size(), o.depth);
  fmt::print("{}", p.to_string(o.depth));
  const Program s = simplify(p);
  fmt::print("\n== after the rewrite rules (fusion, cancellation, parm of bmmc): {} steps{}\n", s.tree_size(),
             s == p ? " (unchanged: every parm here wraps a leaf)" : "");
  fmt::print("{}", s.to_string(o.depth));
  if (o.expand) {
    const Program e = expand_all(p);
    fmt::print("\n== every parm expanded to bmmc(P) ; two f ; bmmc(P^-1): {} steps\n", e.tree_size());
    fmt::print("{}", e.to_string(o.depth));
  }
  const LoweredProgram lp = lower(p);
  fmt::print("\n== lowered: stages \"permute, then leaf on every chunk\" (adjacent permutations fused)\n");
  fmt::print("{}", to_string(lp, static_cast<std::size_t>(o.stages)));
  const auto fused = schedule(lp, ExecStrategy::Fused, fusion);
  fmt::print("\n== fused (the default of bmmc sort): runs of columns whose pairs fit one tile of 2^{} keys made of runs "
             "of 2^{}, one pass each\n",
             fusion.tile_bits, fusion.line_bits);
  fmt::print("{}", fused_lines(fused, static_cast<std::size_t>(o.stages)));
  FusionOptions kept = fusion;
  kept.relayout = false;
  fmt::print("fused: {} passes over memory for {} columns (folded: {}; fused in the program's own memory order: {}{})\n",
             fused.size(), lp.leaf_atoms, lp.passes_folded(), schedule(lp, ExecStrategy::Fused, kept).size(),
             fusion.input_order_free ? "; a sort's output does not depend on its input's order, so no pass moves the "
                                       "input into the relayout"
                                     : "");
}

void add_program_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<ProgramOptions>();
  CLI::App* sub = app.add_subcommand(
      "program", "Print a combinator program (sort, merge, vcolumn of the paper's §7.1) before and after rewriting "
                 "and lowering to BMMC stages");
  sub->add_option("NAME", opts->name, "sort, merge or vcolumn")->required();
  sub->add_option("--n", opts->n, "log2 of the array size")->required();
  sub->add_option("--depth", opts->depth, "Show parm nesting to this depth")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  sub->add_option("--stages", opts->stages, "Show at most this many lowered stages")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  sub->add_flag("--expand", opts->expand, "Also print the program with every parm expanded to bmmc ; two ; bmmc");
  sub->add_option("--tile-bits", opts->tile_bits,
                  "Fused schedule: log2 of the tile (default: the GPU's for 4-byte keys, 13 up to n = 24, else 14)");
  sub->add_option("--line-bits", opts->line_bits,
                  "Fused schedule: log2 of the runs of consecutive keys a tile is made of (default 3: 32-byte sectors)");
  sub->add_flag("--no-relayout", opts->no_relayout, "Fused: keep the program's own memory order (no relayout)");
  sub->add_flag("--greedy-cut", opts->greedy_cut,
                "Fused: the greedy cut (longest runs first) instead of the GPU's least-cost cut with the same pass count");
  sub->add_flag("--json", opts->json, "Print the pass counts as JSON (\"passes\": the fused schedule's passes over memory)");
  sub->callback([opts, &run] { run = [opts] { program_command(*opts); }; });
}

Registrar r(76, add_program_command);

}  // namespace
}  // namespace bmmc::cli
