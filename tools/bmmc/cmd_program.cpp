// bmmc program NAME --n N: prints a combinator program as written, after the rewrite rules (simplify: fusion,
// cancellation, parm of bmmc), and lowered to "permute, then leaf" stages with the pass counts.
//
// NAME is one of the paper's §7.1 programs: sort, merge, vcolumn. Deep programs are long, so the written form
// is cut at --depth levels of parm nesting and the stage list at --stages lines.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "bmmc/combinators/lower.hpp"
#include "bmmc/combinators/rewrite.hpp"
#include "bmmc/combinators/sorting_network.hpp"
#include "cli_common.hpp"

namespace bmmc::cli {
namespace {

struct ProgramOptions {
  std::string name;
  int n = -1;
  int depth = 3;
  int stages = 40;
  bool expand = false;
};

Program build(const std::string& name, int n) {
  if (n < 0 || n > 34) throw UsageError(fmt::format("--n must be in 0..34, got {}", n));
  if (name == "sort") return sort_network(n);
  if (name == "merge") return merge_network(n);
  if (name == "vcolumn") return vcolumn(n);
  throw UsageError(fmt::format("unknown program '{}'; expected sort, merge or vcolumn", name));
}

void program_command(const ProgramOptions& o) {
  const Program p = build(o.name, o.n);
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
}

void add_program_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<ProgramOptions>();
  CLI::App* sub = app.add_subcommand(
      "program", "Print a combinator program (sort, merge, vcolumn of the paper's §7.1) before and after rewriting "
                 "and lowering to BMMC stages");
  sub->add_option("NAME", opts->name, "sort, merge or vcolumn")->required();
  sub->add_option("--n", opts->n, "log2 of the array size")->required();
  sub->add_option("--depth", opts->depth, "Show parm nesting to this depth")->capture_default_str();
  sub->add_option("--stages", opts->stages, "Show at most this many lowered stages")->capture_default_str();
  sub->add_flag("--expand", opts->expand, "Also print the program with every parm expanded to bmmc ; two ; bmmc");
  sub->callback([opts, &run] { run = [opts] { program_command(*opts); }; });
}

Registrar r(76, add_program_command);

}  // namespace
}  // namespace bmmc::cli
