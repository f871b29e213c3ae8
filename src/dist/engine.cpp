// The distributed engines' names (see engine.hpp).
#include "bmmc/dist/engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>

namespace bmmc {

const std::vector<std::string_view>& dist_engine_names() noexcept {
  static const std::vector<std::string_view> names = {"auto", "exchange", "pieces", "push", "swap", "staged-swap"};
  return names;
}

const char* to_string(DistEngine e) noexcept {
  const auto i = static_cast<std::size_t>(e);
  return i < dist_engine_names().size() ? dist_engine_names()[i].data() : "?";
}

DistEngine parse_dist_engine(std::string_view name) {
  const auto& names = dist_engine_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<DistEngine>(i);
  throw std::invalid_argument(
      fmt::format("'{}' names no distributed engine; expected one of {}", name, fmt::join(names, ", ")));
}

void check_dist_engine(DistEngine e) {
  if (static_cast<std::size_t>(e) >= dist_engine_names().size())
    throw std::invalid_argument(fmt::format("distributed engine {} is outside the enumeration; expected one of {}",
                                            static_cast<int>(e), fmt::join(dist_engine_names(), ", ")));
}

bool in_place_engine(DistEngine e) noexcept { return e == DistEngine::Swap || e == DistEngine::StagedSwap; }

}  // namespace bmmc
