// PeerCopyRing's waits and records (src/peer/copy_ring_order.hpp) replayed on the CPU with the semantics of CUDA
// streams and events — work on one stream runs in order; a wait orders its stream after the event's latest
// record at the time of the wait, or after nothing when there is none — over random rank counts, lanes, depths and
// step counts. Checked for every step: its copies after its pack and after the receiver's unpack of the slot's
// previous step, its pack after the copies of that previous step out of the slot, its unpack after every copy into
// the rank; each record and launch on its rank's current device; and, with two slots or more, the overlap the ring
// exists for: no copy waits for the previous step's unpacks, no pack for the previous step's copies, no unpack for
// the next step's copies. Two calls in a row with first_round_waits: the second call's first copies wait for the
// first call's unpacks of their slots.
#include "../../src/peer/copy_ring_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace bmmc::peer_detail {
namespace {

using Clock = std::vector<int>;  // a vector clock over the streams

struct Launch {
  int stream = 0;
  Clock at;
};

// A CPU model of the streams and events, recording when each pack, copy and unpack was enqueued.
class Replay {
 public:
  explicit Replay(const std::vector<std::vector<std::size_t>>& lanes) : lanes_(lanes) {
    for (std::size_t r = 0; r < lanes.size(); ++r)
      for (int l = -1; l < static_cast<int>(lanes[r].size()); ++l) index_[{r, l}] = static_cast<int>(index_.size());
    clocks_.assign(index_.size(), Clock(index_.size(), 0));
  }

  struct Guard {
    Guard(int& current, int device) : current_(current), previous_(current) { current_ = device; }
    ~Guard() { current_ = previous_; }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    int& current_;
    int previous_;
  };
  Guard on(std::size_t r) { return Guard(current_, static_cast<int>(r)); }

  void wait(RingStream s, const RingEvent& e, const char*) {
    const auto it = events_.find(key(e));
    if (it == events_.end()) return;  // never recorded: no wait
    Clock& c = clocks_[stream(s)];
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = std::max(c[i], it->second[i]);
  }
  void record(const RingEvent& e, RingStream s, const char*) {
    EXPECT_EQ(current_, static_cast<int>(s.rank)) << "a record off its stream's device";
    EXPECT_EQ(e.rank, s.rank) << "an event recorded on another rank's stream";
    events_[key(e)] = tick(s);
  }
  void pack(std::size_t r, int step, RingStream s) { launch('p', r, -1, step, s); }
  void copy(std::size_t r, int lane, int step, RingStream s) {
    EXPECT_EQ(s.lane, lane);
    launch('c', r, lane, step, s);
  }
  void unpack(std::size_t r, int step, RingStream s) { launch('u', r, -1, step, s); }

  // The launch of (kind, rank, lane, step) in call `call`.
  const Launch& at(char kind, std::size_t r, int lane, int step, int call = 0) const {
    static const Launch none{0, Clock(1, -1)};
    const auto it = launches_.find({call, kind, r, lane, step});
    if (it != launches_.end()) return it->second;
    ADD_FAILURE() << kind << " of rank " << r << " lane " << lane << " step " << step << " never enqueued";
    return none;
  }
  static bool before(const Launch& a, const Launch& b) { return a.at[a.stream] <= b.at[a.stream]; }
  int call = 0;

 private:
  using Key = std::tuple<int, std::size_t, int, int>;
  static Key key(const RingEvent& e) { return {static_cast<int>(e.kind), e.rank, e.lane, e.slot}; }
  int stream(RingStream s) const { return index_.at({s.rank, s.lane}); }
  Clock tick(RingStream s) {
    Clock& c = clocks_[stream(s)];
    ++c[stream(s)];
    return c;
  }
  void launch(char kind, std::size_t r, int lane, int step, RingStream s) {
    EXPECT_EQ(current_, static_cast<int>(s.rank)) << "a launch off its stream's device";
    EXPECT_EQ(s.rank, r);
    const bool fresh = launches_.emplace(std::make_tuple(call, kind, r, lane, step), Launch{stream(s), tick(s)}).second;
    EXPECT_TRUE(fresh) << kind << " of rank " << r << " lane " << lane << " step " << step << " twice";
  }
  const std::vector<std::vector<std::size_t>>& lanes_;
  std::map<std::pair<std::size_t, int>, int> index_;
  std::vector<Clock> clocks_;
  std::map<Key, Clock> events_;
  std::map<std::tuple<int, char, std::size_t, int, int>, Launch> launches_;
  int current_ = -1;
};

// Random lanes: each rank sends to a random set of ranks (itself possibly included), in random order.
std::vector<std::vector<std::size_t>> random_lanes(std::size_t g, std::mt19937& rng) {
  std::vector<std::vector<std::size_t>> lanes(g);
  for (std::size_t r = 0; r < g; ++r) {
    for (std::size_t d = 0; d < g; ++d)
      if (rng() % 3 != 0) lanes[r].push_back(d);
    std::shuffle(lanes[r].begin(), lanes[r].end(), rng);
  }
  return lanes;
}

TEST(CopyRingOrder, EachStepWaitsForWhatItNeedsAndNoMore) {
  std::mt19937 rng(45);
  int configs = 0, checks = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t g = 1 + rng() % 4;
    const auto lanes = random_lanes(g, rng);
    const int depth = 1 + static_cast<int>(rng() % 4), count = static_cast<int>(rng() % 13);
    const bool first_round_waits = rng() % 2;
    SCOPED_TRACE(::testing::Message() << g << " ranks, " << count << " steps over " << depth << " slots, trial "
                                      << trial);
    Replay rep(lanes);
    enqueue_copy_ring(lanes, depth, count, first_round_waits, rep);
    for (int i = 0; i < count; ++i)
      for (std::size_t r = 0; r < g; ++r) {
        const Launch& pack = rep.at('p', r, -1, i);
        for (int l = 0; l < static_cast<int>(lanes[r].size()); ++l) {
          const std::size_t d = lanes[r][l];
          const Launch& copy = rep.at('c', r, l, i);
          EXPECT_TRUE(Replay::before(pack, copy)) << "copy " << r << "->" << d << " of step " << i << " before its pack";
          EXPECT_TRUE(Replay::before(copy, rep.at('u', d, -1, i))) << "unpack of step " << i << " before a copy into it";
          ++checks;
          if (i >= depth) {
            EXPECT_TRUE(Replay::before(rep.at('u', d, -1, i - depth), copy))
                << "copy " << r << "->" << d << " of step " << i << " overwrites a slot not yet unpacked";
            EXPECT_TRUE(Replay::before(rep.at('c', r, l, i - depth), pack))
                << "pack of step " << i << " on rank " << r << " overwrites a slot its copies still read";
            checks += 2;
          }
          if (depth >= 2 && i >= 1)
            for (std::size_t x = 0; x < g; ++x) {
              EXPECT_FALSE(Replay::before(rep.at('u', x, -1, i - 1), copy))
                  << "copy of step " << i << " waits for an unpack of step " << i - 1;
              ++checks;
            }
          if (depth >= 2 && i + 1 < count) {
            EXPECT_FALSE(Replay::before(rep.at('c', r, l, i + 1), rep.at('u', d, -1, i)))
                << "unpack of step " << i << " waits for a copy of step " << i + 1;
            ++checks;
          }
        }
        if (depth >= 2 && i >= 1)
          for (std::size_t x = 0; x < g; ++x)
            for (int l = 0; l < static_cast<int>(lanes[x].size()); ++l) {
              EXPECT_FALSE(Replay::before(rep.at('c', x, l, i - 1), pack))
                  << "pack of step " << i << " on rank " << r << " waits for a copy of step " << i - 1;
              ++checks;
            }
      }
    ++configs;
  }
  EXPECT_EQ(configs, 300);
  EXPECT_GT(checks, 10000);
}

TEST(CopyRingOrder, FirstRoundWaitsOrderACallAfterThePreviousOnesUnpacks) {
  std::mt19937 rng(9);
  int checks = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const std::size_t g = 1 + rng() % 4;
    const auto lanes = random_lanes(g, rng);
    const int depth = 1 + static_cast<int>(rng() % 4), count = 1 + static_cast<int>(rng() % 12);
    SCOPED_TRACE(::testing::Message() << g << " ranks, " << count << " steps over " << depth << " slots");
    Replay rep(lanes);
    enqueue_copy_ring(lanes, depth, count, true, rep);
    rep.call = 1;
    enqueue_copy_ring(lanes, depth, count, true, rep);
    for (int i = 0; i < std::min(depth, count); ++i) {
      // The last step of the first call that used slot i mod D.
      const int last = i + (count - 1 - i) / depth * depth;
      for (std::size_t r = 0; r < g; ++r)
        for (int l = 0; l < static_cast<int>(lanes[r].size()); ++l) {
          EXPECT_TRUE(Replay::before(rep.at('u', lanes[r][l], -1, last, 0), rep.at('c', r, l, i, 1)));
          ++checks;
        }
    }
  }
  EXPECT_GT(checks, 100);
}

}  // namespace
}  // namespace bmmc::peer_detail
