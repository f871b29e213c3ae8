// The persistent worker pool (see thread_pool.hpp).
#include "bmmc/cpu/thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "tuning.hpp"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace bmmc {

namespace {

// How long a worker waiting for the next call, or a caller waiting for its workers, spins before it sleeps.
// Long enough that back-to-back calls never sleep (a Python loop of small calls spaces them by 1–10 µs), short
// enough that an idle pool costs nothing measurable: a worker burns at most this much CPU after each call.
constexpr auto kSpin = cpu_tuning::kPoolSpin;  // tuning.hpp

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or kSpin has passed; whether done() held. The clock is read every 64 rounds (64 pause
// instructions: from a few hundred nanoseconds to a few microseconds, by CPU). YieldCore: yield the core at
// the same times — for a worker waiting for the next call, which the OS may have put on the caller's own
// core (the 2-vCPU VM packs a new worker onto the caller's vCPU): spinning there would keep the caller from
// running until the time slice ends. Not for the caller waiting on its workers: on a loaded machine a yield
// can hand the core to another process for a whole time slice (4 ms measured here during a build), long
// after the workers have finished; the caller spins, then sleeps until the last finish wakes it.
template <bool YieldCore, class Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (unsigned round = 1;; ++round) {
    if (done()) return true;
    cpu_relax();
    if (round % 64 == 0) {
      if (std::chrono::steady_clock::now() > until) return done();
      if constexpr (YieldCore) std::this_thread::yield();
    }
  }
}

// The door's open bit; below it, the count of workers that came in.
constexpr std::uint64_t kDoorOpen = std::uint64_t{1} << 31;

// Set while this thread runs a pooled call's chunks: a nested run() from a body goes inline instead of
// taking run_mutex_ (which the caller's own thread already holds).
thread_local bool t_in_pool_call = false;

struct InPoolCall {
  bool saved = t_in_pool_call;
  InPoolCall() { t_in_pool_call = true; }
  ~InPoolCall() { t_in_pool_call = saved; }
};

std::atomic<ThreadPool*> g_shared{nullptr};

}  // namespace

int cpu_cores() noexcept {
  static const int cores = [] {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return cores;
}

ThreadPool::ThreadPool(int threads) : size_(std::clamp(threads > 0 ? threads : cpu_cores(), 1, kMaxThreads)) {}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  wake_.fetch_add(1, std::memory_order_release);
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

ThreadPool& ThreadPool::shared() {
  if (ThreadPool* p = g_shared.load(std::memory_order_acquire)) return *p;
  auto made = std::make_unique<ThreadPool>();
  ThreadPool* expected = nullptr;
  if (g_shared.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel)) {
#if defined(__linux__)
    // In a forked child the workers do not exist (and run_mutex_ may be held): forget the parent's pool —
    // leaked, never touched again — so the child's first parallel call makes its own.
    static const int registered =
        pthread_atfork(nullptr, nullptr, [] { g_shared.store(nullptr, std::memory_order_relaxed); });
    (void)registered;
#endif
    return *made.release();  // never destroyed: workers may be parked when static destructors run
  }
  return *expected;
}

int ThreadPool::workers() const noexcept { return started_.load(std::memory_order_relaxed); }

void ThreadPool::grow(int workers) {
  // Under run_mutex_, before the call is published: a new worker starts from the current state, so it
  // wakes for the call about to be published even if its thread is scheduled only after the publication.
  const std::uint64_t now = state_.load(std::memory_order_relaxed);
  while (static_cast<int>(threads_.size()) < workers) {
    const int index = static_cast<int>(threads_.size()) + 1;  // slot 0 is always the caller
    threads_.emplace_back([this, index, now] { worker_loop(index, now); });
    started_.store(static_cast<int>(threads_.size()), std::memory_order_relaxed);
  }
}

void ThreadPool::worker_loop(int index, std::uint64_t seen) {
  for (;;) {
    // Read the wake word before the state: a call published after this read changes the word, so the wait
    // below returns at once instead of sleeping through it.
    const std::uint32_t word = wake_.load(std::memory_order_acquire);
    const std::uint64_t state = state_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed)) return;
    if (state == seen) {
      if (spin_until<true>([&] {
            return state_.load(std::memory_order_acquire) != seen || stop_.load(std::memory_order_relaxed);
          }))
        continue;
      // Announce the sleep, then sleep unless the word moved. A caller that published before seeing this
      // announcement bumped the word first, so the futex compare sees it and returns (seq_cst on both sides).
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(word, std::memory_order_seq_cst);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    seen = state;
    if (index < static_cast<int>(state & 0xffffffffu) && join(state >> 32)) {
      work(index);
      finished_.fetch_add(1, std::memory_order_seq_cst);
      if (caller_asleep_.load(std::memory_order_seq_cst)) finished_.notify_all();
    }
  }
}

// Comes into the call of this generation if its door is still open (counted there, so the caller that closes
// the door knows whom to wait for). Acquire on success: the call's body and range, written before the door
// opened, are visible.
bool ThreadPool::join(std::uint64_t generation) {
  std::uint64_t door = door_.load(std::memory_order_acquire);
  for (;;) {
    if ((door >> 32) != generation || (door & kDoorOpen) == 0) return false;
    if (door_.compare_exchange_weak(door, door + 1, std::memory_order_acq_rel, std::memory_order_acquire))
      return true;
  }
}

void ThreadPool::work(int slot) {
  const InPoolCall mark;
  try {
    for (;;) {
      const std::uint64_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
      if (begin >= count_) break;
      (*body_)(begin, std::min(count_, begin + chunk_), slot);
    }
  } catch (...) {
    const std::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
    next_.store(count_, std::memory_order_relaxed);  // hand out no more chunks
  }
}

void ThreadPool::run(std::uint64_t count, std::uint64_t chunk, int threads, Body body) {
  if (count == 0) return;
  chunk = std::max<std::uint64_t>(1, chunk);
  const std::uint64_t chunks = (count - 1) / chunk + 1;
  threads = static_cast<int>(std::min<std::uint64_t>(std::clamp(threads, 1, kMaxThreads), chunks));
  if (threads == 1 || t_in_pool_call) return body(0, count, 0);
  std::unique_lock lock(run_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return body(0, count, 0);  // busy with another thread's call: run it here, alone
  grow(threads - 1);
  body_ = &body;
  count_ = count;
  chunk_ = chunk;
  next_.store(0, std::memory_order_relaxed);
  error_ = nullptr;
  finished_.store(0, std::memory_order_relaxed);
  // 32 bits of generation in both words (the shift drops the rest), compared as such by join().
  const std::uint64_t generation = ((state_.load(std::memory_order_relaxed) >> 32) + 1) & 0xffffffffu;
  door_.store((generation << 32) | kDoorOpen, std::memory_order_release);
  state_.store((generation << 32) | static_cast<std::uint64_t>(threads), std::memory_order_release);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) wake_.notify_all();
  work(0);
  // Every chunk is handed out: close the door, and wait for the workers that came in (their last chunks may
  // be in flight) — not for any that did not, asleep or without a core. Spin first; then announce the sleep
  // and sleep while finished_ is unchanged (a worker that finishes after the announcement sees it). A worker
  // can still come in between the last chunk and the close, find nothing to do and be preempted before it
  // says so; the caller then waits for it, 50 µs of spin at most and then asleep, which gives a worker on
  // the same core its turn.
  const int joined = static_cast<int>(door_.fetch_and(~kDoorOpen, std::memory_order_acq_rel) & (kDoorOpen - 1));
  if (joined > 0 && !spin_until<false>([&] { return finished_.load(std::memory_order_acquire) == joined; })) {
    caller_asleep_.store(true, std::memory_order_seq_cst);
    for (int f = finished_.load(std::memory_order_seq_cst); f != joined; f = finished_.load(std::memory_order_seq_cst))
      finished_.wait(f, std::memory_order_seq_cst);
    caller_asleep_.store(false, std::memory_order_relaxed);
  }
  body_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace bmmc
