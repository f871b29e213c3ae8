// The persistent worker pool (see thread_pool.hpp).
#include "bmmc/cpu/thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace bmmc {

namespace {

// More participants than this in one call are not started (each is a parked thread for the process's life).
constexpr int kMaxThreads = 256;

// How long a worker waiting for the next call, or a caller waiting for its workers, spins before it sleeps.
// Long enough that back-to-back calls never sleep (a Python loop of small calls spaces them by 1–10 µs), short
// enough that an idle pool costs nothing measurable: a worker burns at most this much CPU after each call.
constexpr auto kSpin = std::chrono::microseconds(50);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or kSpin has passed; whether done() held. The clock is read every 64 rounds only.
template <class Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (unsigned round = 1;; ++round) {
    if (done()) return true;
    cpu_relax();
    if (round % 64 == 0 && std::chrono::steady_clock::now() > until) return done();
  }
}

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
      if (spin_until([&] {
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
    if (index < static_cast<int>(state & 0xffffffffu)) {
      work(index);
      if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 && caller_asleep_.load(std::memory_order_seq_cst))
        pending_.notify_all();
    }
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
  pending_.store(threads - 1, std::memory_order_relaxed);
  const std::uint64_t generation = (state_.load(std::memory_order_relaxed) >> 32) + 1;
  state_.store((generation << 32) | static_cast<std::uint64_t>(threads), std::memory_order_release);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) wake_.notify_all();
  work(0);
  // Wait for the workers: their last chunks are in flight. Spin first; then announce the sleep and sleep
  // while pending_ is unchanged (a worker that finishes after the announcement sees it and wakes us).
  if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
    caller_asleep_.store(true, std::memory_order_seq_cst);
    for (int p = pending_.load(std::memory_order_seq_cst); p != 0; p = pending_.load(std::memory_order_seq_cst))
      pending_.wait(p, std::memory_order_seq_cst);
    caller_asleep_.store(false, std::memory_order_relaxed);
  }
  body_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace bmmc
