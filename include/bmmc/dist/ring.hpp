// The order of a pipeline over a ring of slots (docs/DESIGN.md §9.5): every multi-GPU engine that moves an array
// in steps — pieces of the out-of-place exchange, chunks of the in-place staged path — fills a slot with step i
// (pack), moves it to the receivers (transfer) and empties it at the receivers (unpack), with D = depth slots so
// that the links carry one step while the SMs pack and unpack its neighbours. Step i uses slot i mod D, and the
// engines enqueue the steps in one order, whoever moves the bytes (copy engines, NCCL, stores into peers):
//   Send 0, Send 1, …, Send D−1, then for i = 0, 1, …: Receive i, Send i + D
// where Send i is the pack and transfer of step i and Receive i its arrival and unpack. Slot b is refilled (Send
// i + D) only after the step that held it was received (Receive i), so at most D steps are in flight, and an event
// recorded once per slot is, at every wait on it, the record of the step the wait means. Example: 4 steps over 2
// slots are Send 0, Send 1, Receive 0, Send 2, Receive 1, Send 3, Receive 2, Receive 3.
#pragma once

#include <algorithm>
#include <vector>

namespace bmmc {

struct RingStep {
  enum class Kind { Send, Receive };
  Kind kind = Kind::Send;
  int step = 0;
  int slot = 0;       ///< step mod depth
  int previous = -1;  ///< the step that held the slot before (step − depth); negative in the first round

  friend bool operator==(const RingStep&, const RingStep&) = default;
};

/// Throws std::invalid_argument unless count ≥ 0 and depth ≥ 1.
void check_ring(int count, int depth);

/// Calls visit(RingStep) for each Send and Receive of `count` steps over `depth` slots, in the ring's order.
template <class Visit>
void for_each_ring_step(int count, int depth, Visit&& visit) {
  check_ring(count, depth);
  const auto step = [depth](RingStep::Kind kind, int i) { return RingStep{kind, i, i % depth, i - depth}; };
  for (int i = 0; i < std::min(depth, count); ++i) visit(step(RingStep::Kind::Send, i));
  for (int i = 0; i < count; ++i) {
    visit(step(RingStep::Kind::Receive, i));
    if (i + depth < count) visit(step(RingStep::Kind::Send, i + depth));
  }
}

/// The steps of for_each_ring_step as a list.
std::vector<RingStep> ring_order(int count, int depth);

}  // namespace bmmc
