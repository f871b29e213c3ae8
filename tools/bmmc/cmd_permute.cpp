// bmmc permute SPEC --elem-bytes B --in FILE --out FILE: permute a raw array file, out[A·x ⊕ c] = in[x].
// With --ranks R the distributed plan (docs/DESIGN.md §9) runs on R simulated ranks through the distributed front
// door (permute_file_distributed: a DistributedPermuter over SimulatedRanks), out of place or --in-place.
//
// The library's permute_file does the work: everything is validated (element size, input size, backend)
// before the output is touched, and the output is written through a temporary file and a rename, so an
// error never leaves a truncated or partial file.
//
// With --shape S the file is an array of shape S (C order) of B-byte elements, any B >= 1, and SPEC an any-shape
// map (bmmc/core/digit_spec.hpp), run by the library's permute_file(const DigitMap&, ...) on any backend (a map that
// is a BMMC as one), with the same file rules and the same order: everything validated before the input is read.
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bmmc/dispatch/array_file.hpp"
#include "cli_common.hpp"

namespace bmmc::cli {
namespace {

struct PermuteCommandOptions {
  SpecOptions spec;
  std::string shape;  ///< --shape: SPEC is an any-shape map of an array of this shape
  int elem_bytes = 0;
  std::string in, out, backend = "auto";
  std::uint64_t ranks = 0;  // 0: not distributed
  int pieces = 1;
  int depth = 2;
  std::string engine = "auto";
  bool in_place = false;
};

// One file as both --in and --out is what --in-place is for; without it, likely a slip of the shell. (The
// distributed path's output, in place or not, replaces the file only after everything succeeded.)
void refuse_same_file(const PermuteCommandOptions& o) {
  std::error_code ec;
  if (!o.in_place && o.ranks == 0 && o.in != "-" && o.out != "-" && std::filesystem::equivalent(o.in, o.out, ec))
    throw UsageError(fmt::format("--in and --out name the same file ('{}'): give --in-place to permute it in place, "
                                 "or another --out",
                                 o.out));
}

// --shape: an array of any shape and element size.
void permute_shape(const PermuteCommandOptions& o) {
  const DigitMap map = parse_shape_spec_options(o.spec, o.shape);
  if (o.ranks != 0 || o.pieces != 1 || o.depth != 2 || o.engine != "auto")
    throw UsageError("--ranks, --pieces, --depth and --engine split arrays of 2^n elements given by SPEC and --n; "
                     "they do not apply to --shape");
  if (o.elem_bytes < 1) throw UsageError(fmt::format("--elem-bytes {}: expected 1 byte or more", o.elem_bytes));
  if (map.size() > kMaxDigitElements / o.elem_bytes)
    throw UsageError(fmt::format("an array of shape {} of {}-byte elements has more than 2^62 bytes",
                                 shape_to_string(map.shape()), o.elem_bytes));
  refuse_same_file(o);
  // The input's size in the array's own terms (a stream's is checked as it is read).
  const auto bytes = static_cast<std::size_t>(map.size()) * static_cast<std::size_t>(o.elem_bytes);
  std::error_code ec;
  const std::uintmax_t size = o.in == "-" ? 0 : std::filesystem::file_size(o.in, ec);
  if (o.in != "-" && !ec && size != bytes)
    throw UsageError(fmt::format("'{}' has {} bytes, but an array of shape {} of {}-byte elements has {} bytes",
                                 o.in, size, shape_to_string(map.shape()), o.elem_bytes, bytes));
  PermuterOptions options;
  options.backend = cli_backend(o.backend);
  options.in_place = o.in_place;
  permute_file(map, o.elem_bytes, o.in, o.out, options);  // a BMMC's face or the digit planner, on any backend
}

void permute(const PermuteCommandOptions& o) {
  if (!o.shape.empty()) return permute_shape(o);
  const Bmmc b = parse_spec_options(o.spec);
  refuse_same_file(o);
  if (o.ranks != 0) {
    Backend requested;
    try {
      requested = parse_backend(o.backend);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (requested == Backend::Cuda)
      throw UsageError(
          "--ranks with --backend cuda: the CLI does not split a file over GPUs; --backend cpu runs the distributed "
          "plan on simulated ranks, `bmmc bench --gpus G` runs it on this machine's GPUs, and the C++ API's "
          "DistributedPermuter (bmmc/distributed.hpp) runs it over the GPUs of a process or an NCCL communicator");
    if (o.depth != 2 && o.pieces == 1)
      throw UsageError("--depth applies to the pipelined distributed path: give --pieces (0 or more than 1) too");
    if (o.pieces < 0) throw UsageError("--pieces must be at least 0 (0 = the fewest pieces within 1/8 scratch)");
    DistributedOptions options;
    // In place the pieces are the staged chunks, which only an NCCL group counts: --pieces' default (1, "not
    // pipelined") means none given there, and another count reaches the door, which refuses it.
    options.pieces = o.in_place && o.pieces == 1 ? 0 : o.pieces;
    options.depth = o.depth;
    options.in_place = o.in_place;
    try {
      options.engine = parse_dist_engine(o.engine);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    permute_file_distributed(b, o.elem_bytes, o.in, o.out, o.ranks, requested, options);
    return;
  }
  if (o.pieces != 1) throw UsageError("--pieces applies to the distributed path: give --ranks too");
  if (o.depth != 2) throw UsageError("--depth applies to the pipelined distributed path: give --ranks and --pieces");
  if (o.engine != "auto") throw UsageError("--engine applies to the distributed path: give --ranks too");
  PermuterOptions options;
  options.backend = cli_backend(o.backend);
  options.in_place = o.in_place;
  permute_file(b, o.elem_bytes, o.in, o.out, options);
}

void add_permute_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<PermuteCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "permute",
      "Permute a raw little-endian array file of 2^n elements: out[A·x ^ c] = in[x] (with --shape: an array of "
      "any shape, permuted by an any-shape map). The input must have exactly 2^n * B bytes (with --shape, the "
      "product of the extents * B); the output is replaced only after everything succeeded");
  add_spec_options(sub, opts->spec);
  add_shape_option(sub, opts->shape);
  sub->add_option("--elem-bytes,-b", opts->elem_bytes,
                  "Element size B in bytes: 1, 2, 4, 8 or 16; with --shape any B >= 1")
      ->required();
  sub->add_option("--in,-i", opts->in,
                  "Input file (2^n * B bytes; with --shape S the product of S's extents * B); - reads standard input "
                  "(all of it is read and its size checked before anything is written)")
      ->required()
      ->check(file_name());
  sub->add_option("--out,-o", opts->out, "Output file (created or replaced); - writes standard output (in order, "
                  "after everything succeeded; ./- names a file called -)")
      ->required()
      ->check(file_name());
  add_backend_option(sub, opts->backend);
  sub->add_option("--ranks", opts->ranks,
                  "run the distributed plan on R simulated ranks (a power of two <= 2^n; rank = the top log2(R) "
                  "index bits): the schedule the GPUs run, on the CPU; same output file");
  sub->add_option("--pieces", opts->pieces, "with --ranks: pipeline the exchange in this many pieces (default 1, not pipelined; 0 = the fewest "
                  "pieces whose scratch fits 1/8 of a rank's array, as the NCCL engine does by default)");
  sub->add_option("--depth", opts->depth,
                  "with --ranks and --pieces: the pipeline's ring of send and receive buffers (default 2, at least 2)");
  sub->add_option("--engine", opts->engine,
                  "with --ranks: the distributed engine, auto (default), exchange, pieces or push; in place auto, swap or "
                  "staged-swap");
  sub->add_flag("--in-place", opts->in_place,
                "permute the loaded array in place (a product of involution passes, no second array; same output "
                "bytes); --in and --out may name the same file");
  add_spec_footer(sub);
  sub->callback([opts, &run] { run = [opts] { permute(*opts); }; });
}

Registrar r(40, add_permute_command);

}  // namespace
}  // namespace bmmc::cli
