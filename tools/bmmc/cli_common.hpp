// Helpers shared by the bmmc subcommands: the SPEC + --n options, number arguments, raw array files,
// JSON output and the backend dispatch of a permutation.
//
// Keeping these in one place gives every command the same option names, the same error messages and the
// same safety rules for files (an output file is only ever replaced whole, after everything succeeded).
// Errors are exceptions; UsageError and std::invalid_argument map to exit code 2 (commands.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
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

/// A number argument in the spec language's formats (decimal, 0x…, 0b…); `what` names it in errors.
std::uint64_t parse_number_arg(const std::string& text, const std::string& what);

enum class Backend { Auto, Cpu, Cuda };

/// The backend names accepted by --backend.
inline const std::vector<std::string> kBackendNames = {"auto", "cpu", "cuda"};
Backend parse_backend(const std::string& name);
const char* to_string(Backend b) noexcept;

/// Adds --backend (auto|cpu|cuda, default auto) to `sub`.
void add_backend_option(CLI::App* sub, std::string& backend);

/// Resolves auto to what this build and machine can run, and throws UsageError for a backend that is
/// unavailable (cuda without a CUDA runtime wired into the CLI).
Backend resolve_backend(Backend requested);

/// Permutes host buffers on the chosen backend: out[A·x ⊕ c] = in[x]. Returns the backend that ran.
/// This is the single dispatch point of the CLI; a GPU path plugs in here.
Backend run_permute(const Bmmc& p, const void* in, void* out, int elem_bytes, Backend backend);

/// `bmmc permute`'s whole path after option parsing, shared with fuzz/cli_fuzz.cpp so the fuzzer exercises
/// exactly what users run: parse the spec, check the element size, check the input file's size against
/// 2^n · elem_bytes before reading it, permute on `backend` (auto|cpu|cuda), write `out_path` atomically.
/// Every bad input is a UsageError / std::invalid_argument thrown before `out_path` is touched.
void permute_file(const SpecOptions& spec, int elem_bytes, const std::string& in_path, const std::string& out_path,
                  const std::string& backend);

/// Reads a whole file; throws UsageError when it cannot be opened, or when `expected_bytes` is given and
/// the file has another size (checked before reading).
std::vector<std::byte> read_file(const std::string& path, std::optional<std::size_t> expected_bytes = {});

/// Writes `bytes` to `path` atomically: into a temporary file in the same directory, then renamed over
/// `path`. On any error `path` is left as it was and the temporary file is removed.
void write_file_atomic(const std::string& path, const void* data, std::size_t bytes);

/// {"n":N,"rows":[...],"c":C,"class":"BP|BPC|tiled|general"}.
nlohmann::ordered_json bmmc_json(const Bmmc& p);

/// Prints JSON to stdout followed by a newline.
void print_json(const nlohmann::ordered_json& j);

}  // namespace bmmc::cli
