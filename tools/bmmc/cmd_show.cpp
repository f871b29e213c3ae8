// bmmc show SPEC [--n N] [--json]: the matrix, complement and class of a permutation.
#include <fmt/format.h>

#include <memory>

#include "cli_common.hpp"

namespace bmmc::cli {
namespace {

struct ShowOptions {
  SpecOptions spec;
  bool json = false;
};

void show(const ShowOptions& o) {
  const Bmmc p = parse_spec_options(o.spec);
  if (o.json) return print_json(bmmc_json(p));
  fmt::print("n = {}\nclass = {}\nc = {:#x}\nA (row i = output bit i, column j = input bit j):\n{}", p.n(),
             to_string(p.classify()), p.complement(), p.matrix().to_string());
}

void add_show_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<ShowOptions>();
  CLI::App* sub = app.add_subcommand("show", "Print n, the matrix A, the complement c and the class of SPEC");
  add_spec_options(sub, opts->spec);
  sub->add_flag("--json", opts->json,
                "Print {\"n\":N,\"rows\":[...],\"c\":C,\"class\":\"BP|BPC|tiled|general\"} (row i as an integer: "
                "bit j = a_ij)");
  add_spec_footer(sub);
  sub->callback([opts, &run] { run = [opts] { show(*opts); }; });
}

Registrar r(10, add_show_command);

}  // namespace
}  // namespace bmmc::cli
