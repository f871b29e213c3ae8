// bmmc apply SPEC [--n N] X...: where each input index goes, y = A·x ⊕ c, one decimal per line.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "cli_common.hpp"

namespace bmmc::cli {
namespace {

struct ApplyOptions {
  SpecOptions spec;
  std::vector<std::string> xs;
};

void apply(const ApplyOptions& o) {
  const Bmmc p = parse_spec_options(o.spec);
  // Validate every index before printing anything, so an error leaves no partial output.
  std::vector<BitVec> xs;
  for (const std::string& t : o.xs) {
    // A minus sign is not a malformed number but an index below 0: say that.
    if (const std::size_t first = t.find_first_not_of(" \t"); first != std::string::npos && t[first] == '-')
      throw UsageError(fmt::format("index {} is negative: indices are 0..2^{}-1 (with n = {})", t, p.n(), p.n()));
    const BitVec x = parse_number_arg(t, "index");
    if (x & ~low_mask(p.n()))
      throw UsageError(fmt::format("index {} is out of range: with n = {} indices are 0..2^{}-1", t, p.n(), p.n()));
    xs.push_back(x);
  }
  for (BitVec x : xs) fmt::print("{}\n", p.apply(x));
}

void add_apply_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<ApplyOptions>();
  CLI::App* sub = app.add_subcommand(
      "apply", "Print the output index y = A·x ^ c of each input index X (one decimal per line)");
  add_spec_options(sub, opts->spec);
  sub->add_option("X", opts->xs, "Input indices: decimal, 0x... or 0b..., each below 2^n")->required();
  add_spec_footer(sub);
  sub->callback([opts, &run] { run = [opts] { apply(*opts); }; });
}

Registrar r(20, add_apply_command);

}  // namespace
}  // namespace bmmc::cli
