// bmmc permute SPEC --elem-bytes B --in FILE --out FILE: permute a raw array file, out[A·x ⊕ c] = in[x].
//
// The library's permute_file does the work: everything is validated (element size, input size, backend)
// before the output is touched, and the output is written through a temporary file and a rename, so an
// error never leaves a truncated or partial file.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "bmmc/dispatch/array_file.hpp"
#include "cli_common.hpp"

namespace bmmc::cli {
namespace {

struct PermuteOptions {
  SpecOptions spec;
  int elem_bytes = 0;
  std::string in, out, backend = "auto";
};

void permute(const PermuteOptions& o) {
  const Bmmc b = parse_spec_options(o.spec);
  PermuterOptions options;
  options.backend = cli_backend(o.backend);
  permute_file(b, o.elem_bytes, o.in, o.out, options);
}

void add_permute_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<PermuteOptions>();
  CLI::App* sub = app.add_subcommand(
      "permute",
      "Permute a raw little-endian array file of 2^n elements: out[A·x ^ c] = in[x]. The input must have "
      "exactly 2^n * B bytes; the output is replaced only after everything succeeded");
  add_spec_options(sub, opts->spec);
  sub->add_option("--elem-bytes,-b", opts->elem_bytes, "Element size B in bytes: 1, 2, 4, 8 or 16")->required();
  sub->add_option("--in,-i", opts->in, "Input file (2^n * B bytes)")->required();
  sub->add_option("--out,-o", opts->out, "Output file (created or replaced)")->required();
  add_backend_option(sub, opts->backend);
  add_spec_footer(sub);
  sub->callback([opts, &run] { run = [opts] { permute(*opts); }; });
}

Registrar r(40, add_permute_command);

}  // namespace
}  // namespace bmmc::cli
