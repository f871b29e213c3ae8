#include "cli_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/digit_spec.hpp"
#include "bmmc/core/spec.hpp"

namespace bmmc::cli {

void add_spec_options(CLI::App* sub, SpecOptions& opts) {
  sub->add_option("SPEC", opts.spec, "The permutation, in the spec language below (quote it for the shell)")
      ->required();
  sub->add_option("--n", opts.n, "Number of index bits (arrays of 2^n elements) where SPEC does not define it")
      ->check(CLI::Range(0, 64));
}

void add_spec_footer(CLI::App* sub) { sub->footer(std::string(kSpecHelp) + "\n"); }

namespace {

// A SpecError about `text` as a UsageError that shows where: `label` and the text, then a caret under the
// column (columns are bytes, like the text). A long text is shown as the 80 bytes around the column, so that
// the caret stays on the screen.
UsageError with_caret(const SpecError& e, const std::string& text, const std::string& label = "") {
  if (e.column() <= 0) return UsageError(e.what());
  const std::size_t col = static_cast<std::size_t>(e.column()) - 1;
  const std::size_t from = col > 60 ? col - 60 : 0, to = std::min(text.size(), col + 20);
  const std::string before = label + (from > 0 ? "..." : ""), after = to < text.size() ? "..." : "";
  return UsageError(fmt::format("{}\n  {}{}{}\n  {}^", e.what(), before, text.substr(from, to - from), after,
                                std::string(before.size() + col - from, ' ')));
}

}  // namespace

Bmmc parse_spec_options(const SpecOptions& opts) {
  try {
    return parse_spec(opts.spec, opts.n, "--n");
  } catch (const SpecError& e) {
    throw with_caret(e, opts.spec);
  }
}

void add_shape_option(CLI::App* sub, std::string& shape) {
  sub->add_option("--shape", shape,
                  "An array of this shape (C order), e.g. 1000x1003x257: SPEC is then an any-shape map (axes:, flip, "
                  "roll:, fftshift; see the shape spec language below) and --n is not given")
      ->check(CLI::Validator(
          [](std::string& v) {
            return v.empty() ? std::string("the shape is empty; expected extents such as 1000x1003x257") : std::string();
          },
          "S"));
}

DigitMap parse_shape_spec_options(const SpecOptions& opts, const std::string& shape) {
  if (opts.n) throw UsageError("--shape and --n both give the array's size: give one");
  std::vector<Extent> extents;
  try {
    extents = parse_shape(shape);
  } catch (const SpecError& e) {
    throw with_caret(e, shape, "--shape ");
  }
  try {
    return parse_digit_spec(opts.spec, extents, "--shape");
  } catch (const SpecError& e) {
    throw with_caret(e, opts.spec);
  }
}

std::uint64_t parse_number_arg(const std::string& text, const std::string& what) {
  try {
    return parse_spec_number(text);
  } catch (const SpecError& e) {
    throw UsageError(fmt::format("{} '{}' is not a number (decimal, 0x... or 0b...): {}", what, text, e.what()));
  }
}

namespace {

// The value of an integer option rewritten as CLI11 reads it unambiguously (plain decimal), or an error message.
std::string canonical_integer(std::string& value, bool is_signed) {
  std::string_view text = value;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  const bool negative = !text.empty() && text.front() == '-';
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  std::uint64_t v = 0;
  try {
    v = parse_spec_number(text);
  } catch (const SpecError& e) {
    if (std::string_view(e.what()).find("does not fit") != std::string_view::npos)
      return fmt::format("'{}' is too large", value);
    return fmt::format("'{}' is not an integer (decimal, 0x... or 0b...)", value);
  }
  if (negative && !is_signed && v != 0) return fmt::format("'{}' is negative; expected 0 or more", value);
  value = (negative && v != 0 ? "-" : "") + std::to_string(v);  // CLI11 then refuses what its type cannot hold
  return {};
}

void read_integers_in(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    const bool is_signed = type.rfind("INT", 0) == 0, is_unsigned = type.rfind("UINT", 0) == 0;
    if (!is_signed && !is_unsigned) continue;
    opt->transform(CLI::Validator([is_signed](std::string& v) { return canonical_integer(v, is_signed); }, ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) read_integers_in(*sub);
}

}  // namespace

void read_integers_as_numbers(CLI::App& app) { read_integers_in(app); }

CLI::Validator file_name() {
  return CLI::Validator(
      [](std::string& v) { return v.empty() ? std::string("the file name is empty; expected a path") : std::string(); },
      "FILE");
}

void add_backend_option(CLI::App* sub, std::string& backend) {
  std::vector<std::string> names(backend_names().begin(), backend_names().end());
  sub->add_option("--backend", backend,
                  "Where to run: auto (the GPU when available, else the CPU), cpu, or cuda (an error when "
                  "unavailable)")
      ->check(CLI::IsMember(names))
      ->capture_default_str();
}

Backend cli_backend(const std::string& name) {
  try {
    return resolve_backend(parse_backend(name));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

std::string format_ms(double ms) {
  if (ms >= 1.0) return fmt::format("{:.3f} ms", ms);
  if (ms >= 1e-3) return fmt::format("{:.1f} \u00b5s", ms * 1e3);
  return fmt::format("{:.0f} ns", ms * 1e6);
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024;
  if (bytes >= kMiB) return fmt::format("{:g} MiB", static_cast<double>(bytes) / kMiB);
  if (bytes >= kKiB) return fmt::format("{:g} KiB", static_cast<double>(bytes) / kKiB);
  return fmt::format("{} bytes", bytes);
}

std::string pad_left(const std::string& text, std::size_t width) {
  // UTF-8 continuation bytes (10xxxxxx) do not start a character.
  const auto chars = static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  return chars >= width ? text : std::string(width - chars, ' ') + text;
}

nlohmann::ordered_json bmmc_json(const Bmmc& p) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (BitVec r : p.matrix().row_list()) rows.push_back(r);
  return {{"n", p.n()}, {"rows", rows}, {"c", p.complement()}, {"class", to_string(p.classify())}};
}

void print_json(const nlohmann::ordered_json& j) { fmt::print("{}\n", j.dump()); }

}  // namespace bmmc::cli
