// NcclCopyPipeline's waits, records and barriers (src/nccl/copy_pipeline_order.hpp) replayed on the CPU: one
// thread per rank enqueues its part as the ranks do, with the semantics of CUDA streams and events (work on one
// stream runs in order; a wait orders its stream after the event's latest record at the time of the wait, or
// after nothing) and the one-word allreduce as a collective (each rank's barrier stream goes on after every rank's
// barrier stream reached it), over random rank counts, lanes, depths (2 … 5) and step counts. Checked for every step:
// its copies after its pack and after each receiver's unpack of the slot's previous step, its pack after that
// step's copies out of the slot, its unpack after every copy into the rank; and, with two slots or more, the
// overlap the ring exists for: no copy waits for the previous step's unpacks, no pack for the previous step's
// copies, no unpack for the next step's copies. And why one slot is refused: its first unpack would not wait for
// the copies into it. Runs without a GPU.
#include "../../src/nccl/copy_pipeline_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <map>
#include <numeric>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

namespace bmmc::nccl_detail {
namespace {

using Clock = std::vector<int>;  // a vector clock over every rank's streams

struct Launch {
  int stream = 0;
  Clock at;
};
using LaunchKey = std::tuple<std::size_t, char, int, int>;  // rank, kind, lane, step

// What the ranks share: where each rank's streams sit in the clocks, and the barrier's meeting point.
struct World {
  explicit World(const std::vector<std::size_t>& lanes)
      : sync(static_cast<std::ptrdiff_t>(lanes.size())), posted(lanes.size()) {
    for (std::size_t l : lanes) {
      first.push_back(streams);
      streams += 2 + static_cast<int>(l);
    }
  }
  std::barrier<> sync;
  std::vector<Clock> posted;
  std::vector<int> first;  // the first stream of each rank: caller, barrier, then its copy lanes
  int streams = 0;
};

class RankReplay {
 public:
  RankReplay(World& w, std::size_t rank) : w_(w), rank_(rank), clocks_(w.streams, Clock(w.streams, 0)) {}

  void wait(PipeStream s, const PipeEvent& e, const char*) {
    const auto it = events_.find(key(e));
    if (it == events_.end()) return;  // never recorded: no wait
    merge(clocks_[stream(s)], it->second);
  }
  void record(const PipeEvent& e, PipeStream s, const char*) { events_[key(e)] = tick(s); }
  void barrier(PipeStream s) {
    w_.posted[rank_] = tick(s);
    w_.sync.arrive_and_wait();
    Clock all(w_.streams, 0);
    for (const Clock& c : w_.posted) merge(all, c);
    w_.sync.arrive_and_wait();  // every rank has read every post before any posts again
    merge(clocks_[stream(s)], all);
  }
  void pack(int step, PipeStream s) { launch('p', -1, step, s); }
  void copy(int step, int lane, PipeStream s) {
    EXPECT_EQ(s.lane, lane);
    launch('c', lane, step, s);
  }
  void unpack(int step, PipeStream s) { launch('u', -1, step, s); }
  std::map<LaunchKey, Launch> launches;

 private:
  static std::tuple<int, int, int> key(const PipeEvent& e) { return {static_cast<int>(e.kind), e.lane, e.slot}; }
  static void merge(Clock& into, const Clock& c) {
    for (std::size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], c[i]);
  }
  int stream(PipeStream s) const {
    const int local = s.kind == PipeStream::Kind::Caller ? 0 : s.kind == PipeStream::Kind::Barrier ? 1 : 2 + s.lane;
    return w_.first[rank_] + local;
  }
  Clock tick(PipeStream s) {
    Clock& c = clocks_[stream(s)];
    ++c[stream(s)];
    return c;
  }
  void launch(char kind, int lane, int step, PipeStream s) {
    const bool fresh = launches.emplace(LaunchKey{rank_, kind, lane, step}, Launch{stream(s), tick(s)}).second;
    EXPECT_TRUE(fresh) << kind << " of rank " << rank_ << " lane " << lane << " step " << step << " twice";
  }
  World& w_;
  std::size_t rank_;
  std::vector<Clock> clocks_;
  std::map<std::tuple<int, int, int>, Clock> events_;
};

bool before(const Launch& a, const Launch& b) { return a.at[a.stream] <= b.at[a.stream]; }

// Every rank enqueues its part on its own thread, as the ranks of a communicator do; the launches of all of them.
std::map<LaunchKey, Launch> replay(const std::vector<std::size_t>& lanes, int depth, int count) {
  World world(lanes);
  std::vector<RankReplay> ranks;
  for (std::size_t r = 0; r < lanes.size(); ++r) ranks.emplace_back(world, r);
  {
    std::vector<std::jthread> threads;
    for (std::size_t r = 0; r < lanes.size(); ++r)
      threads.emplace_back([&, r] { enqueue_copy_pipeline(lanes[r], depth, count, ranks[r]); });
  }
  std::map<LaunchKey, Launch> all;
  for (const RankReplay& rank : ranks) all.insert(rank.launches.begin(), rank.launches.end());
  return all;
}

TEST(CopyPipelineOrder, OneSlotWouldUnpackBeforeTheCopiesLand) {
  const std::map<LaunchKey, Launch> all = replay({1, 1}, 1, 3);  // two ranks sending to each other
  EXPECT_FALSE(before(all.at({0, 'c', 0, 0}), all.at({1, 'u', -1, 0})));
  EXPECT_TRUE(before(all.at({0, 'c', 0, 0}), replay({1, 1}, 2, 3).at({1, 'u', -1, 0})));
}

TEST(CopyPipelineOrder, EachStepWaitsForWhatItNeedsAndNoMore) {
  std::mt19937 rng(45);
  int configs = 0, checks = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t g = 1 + rng() % 4;
    std::vector<std::vector<std::size_t>> dest(g);  // rank r's lane l sends to dest[r][l]
    std::vector<std::size_t> lanes(g);
    for (std::size_t r = 0; r < g; ++r) {
      for (std::size_t d = 0; d < g; ++d)
        if (rng() % 3 != 0) dest[r].push_back(d);
      std::shuffle(dest[r].begin(), dest[r].end(), rng);
      lanes[r] = dest[r].size();
    }
    const int depth = 2 + static_cast<int>(rng() % 4), count = static_cast<int>(rng() % 13);
    SCOPED_TRACE(::testing::Message() << g << " ranks, " << count << " steps over " << depth << " slots, trial "
                                      << trial);
    const std::map<LaunchKey, Launch> all = replay(lanes, depth, count);
    ASSERT_EQ(all.size(), static_cast<std::size_t>(count) * (2 * g + std::accumulate(lanes.begin(), lanes.end(), 0u)));
    const auto at = [&](std::size_t r, char kind, int lane, int step) -> const Launch& { return all.at({r, kind, lane, step}); };
    for (int i = 0; i < count; ++i)
      for (std::size_t r = 0; r < g; ++r) {
        const Launch& pack = at(r, 'p', -1, i);
        for (int l = 0; l < static_cast<int>(lanes[r]); ++l) {
          const std::size_t d = dest[r][l];
          const Launch& copy = at(r, 'c', l, i);
          EXPECT_TRUE(before(pack, copy)) << "copy " << r << "->" << d << " of step " << i << " before its pack";
          EXPECT_TRUE(before(copy, at(d, 'u', -1, i))) << "unpack of step " << i << " before a copy into it";
          ++checks;
          if (i >= depth) {
            EXPECT_TRUE(before(at(d, 'u', -1, i - depth), copy))
                << "copy " << r << "->" << d << " of step " << i << " overwrites a slot not yet unpacked";
            EXPECT_TRUE(before(at(r, 'c', l, i - depth), pack))
                << "pack of step " << i << " on rank " << r << " overwrites a slot its copies still read";
            checks += 2;
          }
          if (depth >= 2 && i >= 1)
            for (std::size_t x = 0; x < g; ++x) {
              EXPECT_FALSE(before(at(x, 'u', -1, i - 1), copy))
                  << "copy of step " << i << " waits for an unpack of step " << i - 1;
              ++checks;
            }
          if (depth >= 2 && i + 1 < count) {
            EXPECT_FALSE(before(at(r, 'c', l, i + 1), at(d, 'u', -1, i)))
                << "unpack of step " << i << " waits for a copy of step " << i + 1;
            ++checks;
          }
        }
        if (depth >= 2 && i >= 1)
          for (std::size_t x = 0; x < g; ++x)
            for (int l = 0; l < static_cast<int>(lanes[x]); ++l) {
              EXPECT_FALSE(before(at(x, 'c', l, i - 1), pack))
                  << "pack of step " << i << " on rank " << r << " waits for a copy of step " << i - 1;
              ++checks;
            }
      }
    ++configs;
  }
  EXPECT_EQ(configs, 200);
  EXPECT_GT(checks, 5000);
}

}  // namespace
}  // namespace bmmc::nccl_detail
