// bmmc: permute arrays of 2^n elements by BMMC permutations, and arrays of any shape (--shape). See commands.hpp for the exit-code contract.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "cli_common.hpp"
#include "commands.hpp"

namespace bmmc::cli {
namespace {
std::vector<std::pair<int, AddCommand>>& registry() {
  static std::vector<std::pair<int, AddCommand>> r;
  return r;
}
}  // namespace

Registrar::Registrar(int order, AddCommand add) { registry().emplace_back(order, add); }

}  // namespace bmmc::cli

int main(int argc, char** argv) {
  using namespace bmmc::cli;
  CLI::App app{"bmmc: permute arrays of 2^n elements by BMMC permutations y = A·x ^ c, and arrays of any shape by "
               "axis permutations, flips and rolls (--shape; GPU or CPU)"};
  app.footer(std::string(kSpecHelp) + "\n");  // the help text ends without a newline
  app.require_subcommand(1);
  Action run;
  auto cmds = registry();
  std::stable_sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [order, add] : cmds) add(app, run);
  read_integers_as_numbers(app);
  // A first word that is neither an option nor a command: say so (CLI11 alone says "A subcommand is required").
  if (argc > 1 && argv[1][0] != '-' && app.get_subcommands([&](CLI::App* c) { return c->check_name(argv[1]); }).empty()) {
    std::string names;
    for (const CLI::App* c : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + c->get_name();
    fmt::print(stderr, "bmmc: error: unknown command '{}'; the commands are {} (bmmc --help)\n", argv[1], names);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own errors (a missing or malformed option) in the form of every other error of the tool, with the
    // help that lists the options of the command given.
    const std::vector<CLI::App*> given = app.get_subcommands();
    fmt::print(stderr, "bmmc: error: {}\nRun 'bmmc{} --help' for more information.\n", e.what(),
               given.empty() ? std::string() : " " + given.front()->get_name());
    return 2;
  }
  try {
    if (run) run();
    return 0;
  } catch (const UsageError& e) {
    fmt::print(stderr, "bmmc: error: {}\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "bmmc: error: {}\n", e.what());
    return 2;
  } catch (const std::out_of_range& e) {
    fmt::print(stderr, "bmmc: error: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "bmmc: failed: out of memory (the arrays of this size do not fit this machine's memory)\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bmmc: failed: {}\n", e.what());
    return 1;
  }
}
