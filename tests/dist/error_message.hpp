// Test helper (dist, peer, plan, dispatch and combinator tests): the message of the std::invalid_argument a call throws, so that a test can
// check what an error says ("no error" when the call returns).
#pragma once

#include <stdexcept>
#include <string>

namespace bmmc::test {

template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace bmmc::test
