// The persistent worker pool: every index exactly once for any count / chunk / thread count, the caller
// among the participants, concurrent callers (one gets the pool, the others run alone), nested calls,
// exceptions reaching the caller (with the pool still usable after), workers that share the caller's core,
// and workers that are started once and reused rather than per call.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bmmc/cpu/thread_pool.hpp"

#if defined(__linux__)
#include <sched.h>
#endif

namespace bmmc {
namespace {

// Counts how often each index is visited; every one must be exactly once.
void expect_each_once(ThreadPool& pool, std::uint64_t count, std::uint64_t chunk, int threads) {
  std::vector<std::atomic<int>> hits(count);
  std::atomic<int> max_slot{-1};
  pool.run(count, chunk, threads, [&](std::uint64_t begin, std::uint64_t end, int slot) {
    ASSERT_LE(begin, end);
    ASSERT_LE(end, count);
    ASSERT_GE(slot, 0);
    ASSERT_LT(slot, std::max(threads, 1));
    for (std::uint64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
    for (int m = max_slot.load(); slot > m && !max_slot.compare_exchange_weak(m, slot);) {
    }
  });
  for (std::uint64_t i = 0; i < count; ++i)
    ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << count << ", chunk " << chunk << ", " << threads
                                 << " threads";
}

TEST(ThreadPool, EveryIndexExactlyOnce) {
  ThreadPool pool(4);
  for (std::uint64_t count : {0, 1, 2, 7, 64, 1000, 4097})
    for (std::uint64_t chunk : {0, 1, 3, 16, 5000})
      for (int threads : {-1, 0, 1, 2, 3, 4, 9}) expect_each_once(pool, count, chunk, threads);
}

TEST(ThreadPool, SharedPoolIsSizedToTheCoresAndReused) {
  ThreadPool& pool = ThreadPool::shared();
  EXPECT_EQ(&pool, &ThreadPool::shared());
  EXPECT_EQ(pool.size(), cpu_cores());
  EXPECT_GE(cpu_cores(), 1);
  EXPECT_LE(cpu_cores(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  expect_each_once(pool, 10000, 10, 3);
  const int started = pool.workers();
  EXPECT_GE(started, 2);
  for (int r = 0; r < 50; ++r) expect_each_once(pool, 1000, 10, 3);
  EXPECT_EQ(pool.workers(), started) << "workers are kept between calls, not started per call";
}

TEST(ThreadPool, CallerParticipatesAndWorkersRunElsewhere) {
  ThreadPool pool(3);
  const auto caller = std::this_thread::get_id();
  std::mutex m;
  std::set<std::thread::id> seen;
  std::atomic<bool> slot0_on_caller{true};
  // Slow chunks so that every participant gets some.
  pool.run(300, 1, 3, [&](std::uint64_t, std::uint64_t, int slot) {
    if (slot == 0 && std::this_thread::get_id() != caller) slot0_on_caller = false;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    const std::lock_guard lock(m);
    seen.insert(std::this_thread::get_id());
  });
  EXPECT_TRUE(slot0_on_caller.load());
  EXPECT_TRUE(seen.count(caller));
  EXPECT_GE(seen.size(), 2u) << "the workers took part";
}

TEST(ThreadPool, SingleThreadRunsOnTheCallerAsOneRange) {
  ThreadPool pool(4);
  int calls = 0;
  pool.run(1000, 10, 1, [&](std::uint64_t begin, std::uint64_t end, int slot) {
    ++calls;
    EXPECT_EQ(begin, 0u);
    EXPECT_EQ(end, 1000u);
    EXPECT_EQ(slot, 0);
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(pool.workers(), 0) << "no worker is started for a single-threaded call";
}

TEST(ThreadPool, ConcurrentCallersAllComplete) {
  ThreadPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 6; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < 200; ++r) {
        const std::uint64_t count = 100 + static_cast<std::uint64_t>(c * 37 + r);
        std::vector<std::atomic<int>> hits(count);
        pool.run(count, 7, 2 + c % 3, [&](std::uint64_t b, std::uint64_t e, int) {
          for (std::uint64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        for (auto& h : hits)
          if (h.load() != 1) failures.fetch_add(1);
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPool, NestedCallsRunInline) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(64 * 64);
  pool.run(64, 1, 3, [&](std::uint64_t b, std::uint64_t e, int) {
    for (std::uint64_t i = b; i < e; ++i)
      pool.run(64, 4, 3, [&](std::uint64_t b2, std::uint64_t e2, int slot) {
        EXPECT_EQ(slot, 0) << "a nested call runs on the thread that made it";
        for (std::uint64_t j = b2; j < e2; ++j) hits[i * 64 + j].fetch_add(1);
      });
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  // And serial calls after a nested one still use the workers.
  expect_each_once(pool, 5000, 16, 3);
}

TEST(ThreadPool, ExceptionsReachTheCaller) {
  ThreadPool pool(3);
  for (int thrower_slot : {0, 1, 2}) {
    std::atomic<int> thrown{0};
    try {
      pool.run(10000, 1, 3, [&](std::uint64_t b, std::uint64_t, int slot) {
        // Whichever participant reaches index 5000 first (or slot `thrower_slot`) throws.
        if (b == 5000 || (slot == thrower_slot && b > 100)) {
          thrown.fetch_add(1);
          throw std::runtime_error("chunk failed");
        }
      });
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "chunk failed");
    }
    EXPECT_GE(thrown.load(), 1);
    expect_each_once(pool, 1000, 3, 3);  // still usable
  }
  EXPECT_THROW(pool.run(10, 1, 1, [](std::uint64_t, std::uint64_t, int) { throw std::logic_error("inline"); }),
               std::logic_error);
}

// Workers spin for a while after a call, then sleep; calls come back to back (spinning workers), after gaps
// around the spin time (the race between going to sleep and a new publication) and after long gaps (asleep).
// In every call the caller's first chunk waits until a worker has taken a chunk: a lost wake-up of the
// workers fails the call after 10 s instead of letting the caller quietly do all the work. (The caller's
// own sleep and wake-up: CallerSleepsUntilALateFinish.)
TEST(ThreadPool, SpinningAndSleepingWorkersBothWake) {
  using Clock = std::chrono::steady_clock;
  ThreadPool pool(3);
  for (int gap_us : {0, 20, 45, 50, 55, 80, 2000}) {
    for (int call = 0; call < 12; ++call) {
      const auto resume = Clock::now() + std::chrono::microseconds(gap_us);
      while (Clock::now() < resume) {
      }
      std::atomic<bool> worker_ran{false}, caller_waited{false};
      bool woke = true;
      std::vector<std::atomic<int>> hits(64);
      pool.run(64, 1, 3, [&](std::uint64_t begin, std::uint64_t end, int slot) {
        if (slot > 0) worker_ran.store(true);
        if (slot == 0 && !caller_waited.exchange(true)) {
          const auto give_up = Clock::now() + std::chrono::seconds(10);
          while (!worker_ran.load() && Clock::now() < give_up) std::this_thread::yield();
          woke = worker_ran.load();
        }
        for (std::uint64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
      });
      ASSERT_TRUE(woke) << "no worker took a chunk within 10 s (gap " << gap_us << " us, call " << call << ")";
      for (auto& h : hits) ASSERT_EQ(h.load(), 1) << "gap " << gap_us << " us, call " << call;
    }
  }
}

#if defined(__linux__)
// The workers on the caller's own core (as a VM that packs threads onto few vCPUs puts them, and as an
// oversubscribed machine may): the pool and its workers pinned to one CPU, so a worker runs only when the
// caller sleeps or is preempted. Calls must still do every index exactly once — whether a worker comes in
// early, late (after the caller has handed out every chunk and closed the call) or not at all — and pass
// exceptions on. A late worker that touched a closed call's body or range would be a data race, which the
// ThreadSanitizer step (scripts/test.sh thread_tests) reports; that a call does not wait for an absent worker
// is a speed property (BENCHMARKS.md, session 22), not checked here.
TEST(ThreadPool, WorkersSharingTheCallersCore) {
  cpu_set_t saved, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &saved)) {
      CPU_SET(c, &one);
      break;
    }
  if (sched_setaffinity(0, sizeof one, &one) != 0) GTEST_SKIP() << "this process may not set its CPU affinity";
  struct Restore {  // the test thread's own mask back, however the test ends
    const cpu_set_t& mask;
    ~Restore() { sched_setaffinity(0, sizeof mask, &mask); }
  } restore{saved};
  {
    ThreadPool pool(3);  // its workers start from this thread, and keep its one-CPU mask
    for (int call = 0; call < 400; ++call) {
      expect_each_once(pool, 2 + call % 7, 1, 3);             // a few chunks: the caller usually does them all
      if (call % 50 == 0) expect_each_once(pool, 3000, 1, 3);  // many: workers come in when it is preempted
    }
    for (int thrower_slot : {0, 1, 2}) {
      EXPECT_THROW(pool.run(2000, 1, 3,
                            [&](std::uint64_t b, std::uint64_t, int slot) {
                              if (b == 1500 || (slot == thrower_slot && b > 100)) throw std::runtime_error("chunk");
                            }),
                   std::runtime_error);
      expect_each_once(pool, 100, 1, 3);
    }
  }
}
#endif

// The caller's sleep on its workers' finish: a worker that came in holds its chunk for 50 ms (far past the
// caller's 50 µs spin, and past the few sched_yields that std::atomic::wait makes before its futex wait, each
// of which can last a 4 ms time slice on a loaded machine) while the caller has nothing left, so the caller
// must sleep and be woken by that worker's finish. A lost wake-up of the caller hangs the test (ctest's
// timeout). The caller's chunk waits until a worker has one, so the call always has a worker that came in.
TEST(ThreadPool, CallerSleepsUntilALateFinish) {
  using Clock = std::chrono::steady_clock;
  ThreadPool pool(2);
  for (int call = 0; call < 5; ++call) {
    std::atomic<bool> worker_in{false};
    bool woke = true;
    std::vector<std::atomic<int>> hits(2);
    const auto t0 = Clock::now();
    pool.run(2, 1, 2, [&](std::uint64_t begin, std::uint64_t end, int slot) {
      if (slot > 0) {
        worker_in.store(true);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      } else {
        const auto give_up = Clock::now() + std::chrono::seconds(10);
        while (!worker_in.load() && Clock::now() < give_up) std::this_thread::yield();
        woke = worker_in.load();
      }
      for (std::uint64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
    });
    ASSERT_TRUE(woke) << "no worker took a chunk within 10 s (call " << call << ")";
    for (auto& h : hits) ASSERT_EQ(h.load(), 1) << "call " << call;
    EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(50)) << "run() returned before its worker's chunk ended";
  }
}

TEST(ThreadPool, MoreThreadsThanTheDefaultStartMoreWorkers) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.size(), 1);
  expect_each_once(pool, 1000, 1, 5);
  EXPECT_EQ(pool.workers(), 4);
}

}  // namespace
}  // namespace bmmc
