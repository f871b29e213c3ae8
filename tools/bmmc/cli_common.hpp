// Helpers shared by the bmmc subcommands: the SPEC + --n options (and --shape, which makes SPEC a map of an
// array of any shape), number arguments, the --backend option and JSON output. Everything else — backend dispatch, host/device staging, array files — is the library's
// (bmmc/permute.hpp, bmmc/dispatch/array_file.hpp), so every command and the fuzzer run the same code.
//
// Errors are exceptions; UsageError and std::invalid_argument map to exit code 2 (commands.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/digit_map.hpp"
#include "bmmc/dispatch/backend.hpp"
#include "commands.hpp"

namespace bmmc::cli {

/// The positional SPEC and the --n option, as most commands take them.
struct SpecOptions {
  std::string spec;
  std::optional<int> n;
};

/// Adds SPEC (positional, required) and --n to `sub`.
void add_spec_options(CLI::App* sub, SpecOptions& opts);

/// Sets the spec language summary (kSpecHelp) as the help footer of `sub`.
void add_spec_footer(CLI::App* sub);

/// Parses the spec with --n. A SpecError becomes a UsageError whose message shows the spec with a caret
/// under the offending column.
Bmmc parse_spec_options(const SpecOptions& opts);

/// Adds --shape S to `sub`: with it, SPEC is an any-shape map (a digit spec) of an array of shape S.
void add_shape_option(CLI::App* sub, std::string& shape);

/// SPEC as a digit spec on the array of shape `shape` (the --shape text). --n is refused beside --shape (both
/// would give the array's size); a malformed shape or spec is a UsageError with a caret under the column.
DigitMap parse_shape_spec_options(const SpecOptions& opts, const std::string& shape);


/// A number argument in the spec language's formats (decimal, 0x…, 0b…); `what` names it in errors.
std::uint64_t parse_number_arg(const std::string& text, const std::string& what);

/// Makes every integer option and argument of `app`'s subcommands read its value as the spec language reads a
/// number (decimal — a leading zero is not octal —, 0x…, 0b…), with a sign only where the option's type has
/// one, and say so when the value is not an integer. Call once all subcommands are added. (CLI11 alone reads
/// 010 as 8, "abc" through the range check's "not in range", and -1 in an unsigned option as 2^64 − 1.)
void read_integers_as_numbers(CLI::App& app);

/// A check for options that name a file: an empty name is refused (CLI11 would store "" as if the option were
/// absent, e.g. `gen -o ''` wrote to stdout and `sort --out ''` wrote nothing).
CLI::Validator file_name();

/// Adds --backend (auto|cpu|cuda, default auto) to `sub`.
void add_backend_option(CLI::App* sub, std::string& backend);

/// The backend named by --backend, resolved to what this build and machine can run (bmmc::resolve_backend);
/// an unknown or unavailable backend is a UsageError.
Backend cli_backend(const std::string& name);

/// A time in a printed table, with its unit: milliseconds from 1 ms ("12.345 ms"), microseconds from 1 µs
/// ("85.2 µs"), else nanoseconds ("640 ns") — so that a small run shows digits rather than 0.000 ms. One rule
/// for every table of demo and bench; their CSV and JSON keep plain milliseconds.
std::string format_ms(double ms);

/// A size in a printed line: MiB from 1 MiB, KiB from 1 KiB, else bytes ("64 MiB", "256 KiB", "64 bytes").
std::string format_bytes(std::uint64_t bytes);

/// `text` padded with spaces on the left to `width` characters (counting each UTF-8 character once, so a
/// column holding "µs" lines up with one holding "ms").
std::string pad_left(const std::string& text, std::size_t width);

/// {"n":N,"rows":[...],"c":C,"class":"BP|BPC|tiled|general"}.
nlohmann::ordered_json bmmc_json(const Bmmc& p);

/// Prints JSON to stdout followed by a newline.
void print_json(const nlohmann::ordered_json& j);

}  // namespace bmmc::cli
