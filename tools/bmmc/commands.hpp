// The bmmc command-line tool: one file per subcommand, each registering itself on the CLI11 app.
//
// Contract (stable; scripts rely on it): exit 0 on success, 2 on bad usage or bad input (message on stderr,
// nothing written), 1 on any other failure. Subcommands throw; main() maps exceptions to exit codes:
// UsageError and std::invalid_argument / std::out_of_range → 2, anything else → 1.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <string>

namespace bmmc::cli {

/// Bad usage or bad input the user can fix: exit code 2.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// A subcommand adds itself to `app` (app.add_subcommand(...)) and, from its parse callback, stores the
/// action to run: `sub->callback([&run, opts] { run = [opts] { ... }; })`. main() calls `run` once parsing
/// succeeded, so a command never runs on half-parsed options.
using Action = std::function<void()>;
using AddCommand = void (*)(CLI::App& app, Action& run);

/// Each command file registers itself with a static Registrar, so adding a command touches only its own
/// file. `order` fixes the position in --help (lower first).
struct Registrar {
  Registrar(int order, AddCommand add);
};

/// The spec language summary shown by --help (docs/DESIGN.md §2).
extern const char* const kSpecHelp;

}  // namespace bmmc::cli
