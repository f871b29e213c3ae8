// The order of a ring pipeline (ring.hpp): the worked example verbatim, and over every count and depth up to 40 × 9
// the properties every engine's events rely on — each step sent once and received once after its send, in step
// order; slot = step mod depth; a slot refilled only after the step that held it was received; the ring full
// (min(depth, count) steps in flight at its peak) — and bad counts and depths refused.
#include "bmmc/dist/ring.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "dist/error_message.hpp"

namespace bmmc {
namespace {

using Kind = RingStep::Kind;

TEST(RingOrder, WorkedExample) {
  const std::vector<RingStep> expected{{Kind::Send, 0, 0, -2},    {Kind::Send, 1, 1, -1},   {Kind::Receive, 0, 0, -2},
                                       {Kind::Send, 2, 0, 0},     {Kind::Receive, 1, 1, -1}, {Kind::Send, 3, 1, 1},
                                       {Kind::Receive, 2, 0, 0},  {Kind::Receive, 3, 1, 1}};
  EXPECT_EQ(ring_order(4, 2), expected);
}

TEST(RingOrder, OneSlotIsSequentialAndManySlotsSendEverythingFirst) {
  EXPECT_EQ(ring_order(3, 1), (std::vector<RingStep>{{Kind::Send, 0, 0, -1},
                                                     {Kind::Receive, 0, 0, -1},
                                                     {Kind::Send, 1, 0, 0},
                                                     {Kind::Receive, 1, 0, 0},
                                                     {Kind::Send, 2, 0, 1},
                                                     {Kind::Receive, 2, 0, 1}}));
  EXPECT_EQ(ring_order(2, 5), (std::vector<RingStep>{{Kind::Send, 0, 0, -5},
                                                     {Kind::Send, 1, 1, -4},
                                                     {Kind::Receive, 0, 0, -5},
                                                     {Kind::Receive, 1, 1, -4}}));
  EXPECT_TRUE(ring_order(0, 3).empty());
}

TEST(RingOrder, EveryStepOnceInOrderWithinItsSlots) {
  int checked = 0;
  for (int depth = 1; depth <= 9; ++depth)
    for (int count = 0; count <= 40; ++count) {
      SCOPED_TRACE(::testing::Message() << count << " steps over " << depth << " slots");
      const std::vector<RingStep> order = ring_order(count, depth);
      ASSERT_EQ(order.size(), 2u * static_cast<std::size_t>(count));
      std::vector<int> sent_at(count, -1), received_at(count, -1);
      std::vector<int> holder(depth, -1);  // the step in each slot, -1 when free
      int next_send = 0, next_receive = 0, in_flight = 0, peak = 0;
      for (std::size_t at = 0; at < order.size(); ++at) {
        const RingStep& s = order[at];
        ASSERT_GE(s.step, 0);
        ASSERT_LT(s.step, count);
        EXPECT_EQ(s.slot, s.step % depth);
        EXPECT_EQ(s.previous, s.step - depth);
        if (s.kind == Kind::Send) {
          EXPECT_EQ(s.step, next_send++);  // sends in step order, each once
          EXPECT_EQ(holder[s.slot], -1) << "step " << s.step << " refills slot " << s.slot << " before step "
                                        << holder[s.slot] << " was received";
          if (s.previous >= 0) {
            EXPECT_GE(received_at[s.previous], 0);
          }
          holder[s.slot] = s.step;
          sent_at[s.step] = static_cast<int>(at);
          peak = std::max(peak, ++in_flight);
        } else {
          EXPECT_EQ(s.step, next_receive++);  // receives in step order, each once
          EXPECT_GE(sent_at[s.step], 0) << "step " << s.step << " received before it was sent";
          EXPECT_EQ(holder[s.slot], s.step);
          holder[s.slot] = -1;
          received_at[s.step] = static_cast<int>(at);
          --in_flight;
        }
      }
      EXPECT_EQ(next_send, count);
      EXPECT_EQ(next_receive, count);
      EXPECT_EQ(peak, std::min(depth, count)) << "the ring never fills";
      ++checked;
    }
  EXPECT_EQ(checked, 9 * 41);
}

TEST(RingOrder, VisitsWhatItLists) {
  std::vector<RingStep> visited;
  for_each_ring_step(7, 3, [&](const RingStep& s) { visited.push_back(s); });
  EXPECT_EQ(visited, ring_order(7, 3));
}

TEST(RingOrder, RefusesBadCountsAndDepths) {
  EXPECT_EQ(test::error_message([] { ring_order(-1, 2); }),
            "a ring pipeline of -1 steps over 2 slots: expected at least 0 steps and at least 1 slot");
  EXPECT_EQ(test::error_message([] { ring_order(4, 0); }),
            "a ring pipeline of 4 steps over 0 slots: expected at least 0 steps and at least 1 slot");
  EXPECT_EQ(test::error_message([] { for_each_ring_step(4, -3, [](const RingStep&) {}); }),
            "a ring pipeline of 4 steps over -3 slots: expected at least 0 steps and at least 1 slot");
}

}  // namespace
}  // namespace bmmc
