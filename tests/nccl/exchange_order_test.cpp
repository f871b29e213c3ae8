// The portable engine's pipeline (src/nccl/exchange_order.hpp) replayed on the CPU with the semantics of CUDA
// streams and events (work on one stream runs in order; a wait orders its stream after the event's latest record
// at the time of the wait, or after nothing) over every depth 1 … 5, piece count 0 … 12 and one or two
// communicators. Checked for every piece: its exchange after its pack and after the unpack of the slot's previous
// piece (NCCL writes a received piece from the receiver's own group), its pack after the slot's previous exchange
// (which read the send buffer), its unpack after its exchange; and, with two slots or more, the overlap: no
// exchange waits for the previous piece's unpack, no pack for the previous exchange, no unpack for the next
// exchange. Runs without a GPU.
#include "../../src/nccl/exchange_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace bmmc::nccl_detail {
namespace {

using Clock = std::vector<int>;  // a vector clock over the caller's stream (0) and the exchange streams (1 + comm)

struct Launch {
  int stream = 0;
  Clock at;
};
bool before(const Launch& a, const Launch& b) { return a.at[a.stream] <= b.at[a.stream]; }

struct Replay {
  explicit Replay(int comms) : clocks(1 + comms, Clock(1 + comms, 0)) {}
  std::vector<Clock> clocks;
  std::map<std::pair<int, int>, Clock> events;   // (kind, slot)
  std::map<std::pair<char, int>, Launch> launches;  // (kind, piece)

  void wait(int comm, const ExchangeEvent& e, const char*) {
    const auto it = events.find({static_cast<int>(e.kind), e.slot});
    if (it == events.end()) return;
    Clock& c = clocks[1 + comm];
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = std::max(c[i], it->second[i]);
  }
  void record(const ExchangeEvent& e, int comm, const char*) { events[{static_cast<int>(e.kind), e.slot}] = tick(1 + comm); }
  void pack(int i) { launch('p', i, 0); }
  void exchange(int i, int comm) { launch('x', i, 1 + comm); }
  void unpack(int i) { launch('u', i, 0); }
  Clock tick(int stream) {
    ++clocks[stream][stream];
    return clocks[stream];
  }
  void launch(char kind, int i, int stream) {
    EXPECT_TRUE(launches.emplace(std::pair{kind, i}, Launch{stream, tick(stream)}).second) << kind << " " << i << " twice";
  }
  const Launch& at(char kind, int i) const { return launches.at({kind, i}); }
};

TEST(ExchangeOrder, EachPieceWaitsForWhatItNeedsAndNoMore) {
  int configs = 0, checks = 0;
  for (int comms = 1; comms <= 2; ++comms)
    for (int depth = 1; depth <= 5; ++depth)
      for (int count = 0; count <= 12; ++count) {
        SCOPED_TRACE(::testing::Message() << count << " pieces over " << depth << " slots, " << comms << " comms");
        Replay rep(comms);
        enqueue_exchange_pipeline(depth, count, comms, rep);
        ASSERT_EQ(rep.launches.size(), 3u * static_cast<std::size_t>(count));
        for (int i = 0; i < count; ++i) {
          const Launch &pack = rep.at('p', i), &exchange = rep.at('x', i), &unpack = rep.at('u', i);
          EXPECT_EQ(exchange.stream, 1 + i % comms);
          EXPECT_TRUE(before(pack, exchange)) << "exchange " << i << " before its pack";
          EXPECT_TRUE(before(exchange, unpack)) << "unpack " << i << " before its exchange";
          ++checks;
          if (i >= depth) {
            EXPECT_TRUE(before(rep.at('u', i - depth), exchange)) << "exchange " << i << " overwrites a receive slot";
            EXPECT_TRUE(before(rep.at('x', i - depth), pack)) << "pack " << i << " overwrites a send slot";
            checks += 2;
          }
          if (depth >= 2 && i >= 1) {
            EXPECT_FALSE(before(rep.at('u', i - 1), exchange)) << "exchange " << i << " waits for unpack " << i - 1;
            EXPECT_FALSE(before(rep.at('x', i - 1), pack)) << "pack " << i << " waits for exchange " << i - 1;
            checks += 2;
          }
          if (depth >= 2 && i + 1 < count) {
            EXPECT_FALSE(before(rep.at('x', i + 1), unpack)) << "unpack " << i << " waits for exchange " << i + 1;
            ++checks;
          }
        }
        ++configs;
      }
  EXPECT_EQ(configs, 2 * 5 * 13);
  EXPECT_GT(checks, 1000);
}

}  // namespace
}  // namespace bmmc::nccl_detail
