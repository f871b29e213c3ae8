// bmmc factor SPEC [--n N] [--tile-bits T] [--json]: the ULP factorisation A = U·L·P of a permutation's
// matrix and the paper's §5.2 split (A, c) = (U·R, c) ∘ (R·L·P, 0) into two tiled BMMCs, with the tiled
// columns of each factor and an explicit check that everything multiplies back.
//
// The check line is recomputed here from the printed factors rather than trusted from the library, so the
// output is self-verifying: "check: U·L·P == A: yes; second∘first == (A, c): yes". A "no" (which would be
// a library bug) still prints everything, then exits 1.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <optional>

#include "bmmc/core/factorize.hpp"
#include "bmmc/core/spec.hpp"
#include "commands.hpp"

namespace bmmc::cli {
namespace {

struct FactorOptions {
  std::string spec;
  std::optional<int> n;
  int tile_bits = 5;
  bool json = false;
};

nlohmann::ordered_json rows_json(const BitMatrix& m) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (BitVec r : m.row_list()) rows.push_back(r);
  return rows;
}

std::vector<int> columns_or_empty(const Bmmc& f, int t) {
  // The split guarantees the tile (tiled_split checks it); an empty list would only show a library bug,
  // which the check line reports independently.
  return f.tiled_columns(t).value_or(std::vector<int>{});
}

nlohmann::ordered_json factor_json(const Bmmc& f, int t) {
  nlohmann::ordered_json cols = nlohmann::ordered_json::array();
  for (int c : columns_or_empty(f, t)) cols.push_back(c);
  return {{"rows", rows_json(f.matrix())}, {"c", f.complement()}, {"tiled_columns", cols}};
}

const char* yes_no(bool b) { return b ? "yes" : "no"; }

void factor(const FactorOptions& o) {
  if (o.tile_bits < 0 || o.tile_bits > 64)
    throw UsageError(fmt::format("--tile-bits must be 0..64, got {}", o.tile_bits));
  // SpecError is a std::invalid_argument whose message names the column: exit code 2 as it stands.
  const Bmmc a = parse_spec(o.spec, o.n, "--n");
  const int n = a.n(), t = std::min(o.tile_bits, n);
  const UlpFactors f = ulp(a.matrix());
  const TiledSplit s = tiled_split(a, o.tile_bits);
  const bool ulp_ok = f.u * f.l * f.p == a.matrix();
  const bool split_ok = compose(s.second, s.first) == a;
  const bool tiled_ok = s.first.is_tiled(t) && s.second.is_tiled(t);
  const bool ok = ulp_ok && split_ok && tiled_ok;

  if (o.json) {
    nlohmann::ordered_json j = {{"n", n},
                                {"tile_bits", t},
                                {"u", rows_json(f.u)},
                                {"l", rows_json(f.l)},
                                {"p", rows_json(f.p)},
                                {"first", factor_json(s.first, t)},
                                {"second", factor_json(s.second, t)},
                                {"check", ok}};
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("n = {}, tile = {} bits (row i = output bit i, column j = input bit j)\n", n, t);
    fmt::print("A = U·L·P\nU (upper triangular):\n{}L (lower triangular):\n{}P (permutation):\n{}",
               f.u.to_string(), f.l.to_string(), f.p.to_string());
    fmt::print("first = (R·L·P, 0), applied first; tiled on columns {}:\n{}c = {:#x}\n",
               fmt::join(columns_or_empty(s.first, t), ", "), s.first.matrix().to_string(),
               s.first.complement());
    fmt::print("second = (U·R, c), applied second; tiled on columns {}:\n{}c = {:#x}\n",
               fmt::join(columns_or_empty(s.second, t), ", "), s.second.matrix().to_string(),
               s.second.complement());
    fmt::print("check: U·L·P == A: {}; second∘first == (A, c): {}; both tiled: {}\n", yes_no(ulp_ok),
               yes_no(split_ok), yes_no(tiled_ok));
  }
  if (!ok) throw std::runtime_error("the factorisation does not multiply back (a bug in bmmc; please report it)");
}

void add_factor_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<FactorOptions>();
  CLI::App* sub = app.add_subcommand(
      "factor", "Factor SPEC as A = U·L·P and split it into two tiled BMMCs (paper §5.2), with a check");
  sub->add_option("SPEC", opts->spec, "The permutation, in the spec language below (quote it for the shell)")
      ->required();
  sub->add_option("--n", opts->n, "Number of index bits (arrays of 2^n elements) where SPEC does not define it")
      ->check(CLI::Range(0, 64));
  sub->add_option("--tile-bits", opts->tile_bits, "Tile width in bits for the tiled columns (default 5; min(T, n) is used)");
  sub->add_flag("--json", opts->json,
                "Print {\"n\",\"tile_bits\",\"u\",\"l\",\"p\" (rows as integers: bit j = a_ij),\"first\" and "
                "\"second\" ({\"rows\",\"c\",\"tiled_columns\"}),\"check\"}");
  sub->footer(kSpecHelp);
  sub->callback([opts, &run] { run = [opts] { factor(*opts); }; });
}

static Registrar r(30, add_factor_command);

}  // namespace
}  // namespace bmmc::cli
