// bmmc show SPEC [--n N] [--json]: the matrix, complement and class of a permutation. With --shape S, an any-shape
// map of an array of shape S: its spec as given and as the map writes it, its input and output shapes, its
// canonical form (the same map on the fewest axes), whether it is an involution, and the Bmmc it is, if any.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli_common.hpp"

namespace bmmc::cli {
namespace {

struct ShowOptions {
  SpecOptions spec;
  std::string shape;
  bool json = false;
};

void show_shape(const ShowOptions& o) {
  const DigitMap map = parse_shape_spec_options(o.spec, o.shape);
  const DigitMap canonical = map.canonical();
  const std::optional<Bmmc> b = map.as_bmmc();
  if (o.json) {
    nlohmann::ordered_json j;
    j["spec"] = o.spec.spec;
    j["map"] = map.to_string();
    j["shape"] = map.shape();
    j["out_shape"] = map.out_shape();
    j["canonical"] = {{"map", canonical.to_string()}, {"shape", canonical.shape()}, {"out_shape", canonical.out_shape()}};
    j["involution"] = map.is_involution();
    j["identity"] = map.is_identity();
    j["bmmc"] = b ? bmmc_json(*b) : nlohmann::ordered_json(nullptr);
    return print_json(j);
  }
  fmt::print("spec = {}\nmap = {}\nshape = {} -> {}\ncanonical = {} on {} -> {}\ninvolution = {}\nidentity = {}\n",
             o.spec.spec, map.to_string(), shape_to_string(map.shape()), shape_to_string(map.out_shape()),
             canonical.to_string(), shape_to_string(canonical.shape()), shape_to_string(canonical.out_shape()),
             map.is_involution() ? "yes" : "no", map.is_identity() ? "yes" : "no");
  if (!b) return fmt::print("bmmc = none (runs on the digit planner)\n");
  fmt::print("bmmc = class {} on n = {} bits, c = {:#x}\nA (row i = output bit i, column j = input bit j):\n{}",
             to_string(b->classify()), b->n(), b->complement(), b->matrix().to_string());
}

void show(const ShowOptions& o) {
  if (!o.shape.empty()) return show_shape(o);
  const Bmmc p = parse_spec_options(o.spec);
  if (o.json) return print_json(bmmc_json(p));
  fmt::print("n = {}\nclass = {}\nc = {:#x}\nA (row i = output bit i, column j = input bit j):\n{}", p.n(),
             to_string(p.classify()), p.complement(), p.matrix().to_string());
}

void add_show_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<ShowOptions>();
  CLI::App* sub = app.add_subcommand("show", "Print n, the matrix A, the complement c and the class of SPEC (with "
                                             "--shape: the any-shape map, its canonical form and its BMMC, if any)");
  add_spec_options(sub, opts->spec);
  add_shape_option(sub, opts->shape);
  sub->add_flag("--json", opts->json,
                "Print {\"n\":N,\"rows\":[...],\"c\":C,\"class\":\"BP|BPC|tiled|general\"} (row i as an integer: "
                "bit j = a_ij); with --shape {\"spec\", \"map\", \"shape\", \"out_shape\", \"canonical\", "
                "\"involution\", \"identity\", \"bmmc\" (that object, or null)}");
  add_spec_footer(sub);
  sub->callback([opts, &run] { run = [opts] { show(*opts); }; });
}

Registrar r(10, add_show_command);

}  // namespace
}  // namespace bmmc::cli
