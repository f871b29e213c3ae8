// The order of a ring pipeline (see ring.hpp).
#include "bmmc/dist/ring.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace bmmc {

void check_ring(int count, int depth) {
  if (count < 0 || depth < 1)
    throw std::invalid_argument(fmt::format(
        "a ring pipeline of {} steps over {} slots: expected at least 0 steps and at least 1 slot", count, depth));
}

std::vector<RingStep> ring_order(int count, int depth) {
  std::vector<RingStep> order;
  for_each_ring_step(count, depth, [&](const RingStep& s) { order.push_back(s); });
  return order;
}

}  // namespace bmmc
