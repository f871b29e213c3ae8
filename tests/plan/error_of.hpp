// Test support for the plan tests: the message of the std::invalid_argument a call throws ("" when it throws none).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

namespace bmmc::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace bmmc::test
