// The CPU backend's persistent worker threads: one pool per process, created on first parallel use, so that
// a permutation call costs a wake-up of parked workers instead of starting threads (tens of microseconds
// each on a VM — the whole cost of permuting 2^16 elements).
//
// ThreadPool::run(count, chunk, threads, body) is a parallel-for over [0, count): the caller and up to
// threads − 1 workers take chunks of `chunk` consecutive indices from a shared counter and call
// body(begin, end, slot), slot ∈ [0, threads) naming the participant within this call (0 = the caller).
// Chunks from a counter rather than fixed slices, because on a shared VM one vCPU can stall for
// milliseconds and a fixed slice would then leave the others idle.
//
// Between calls the workers first spin for a short while (kPoolSpin, src/cpu/tuning.hpp), then sleep in a
// futex wait (std::atomic::wait): an idle pool burns no CPU, and calls that follow each other closely — a loop of
// permutations, a benchmark — find the workers awake and hand off without a system call, where a futex
// wake-up goes through the kernel's scheduler (slow on a VM). The caller likewise spins before it sleeps on the workers' finish,
// and each side makes the wake-up system call only when the other side has gone to sleep. A worker takes
// part in a call only if it comes in while chunks are still being handed out: once the caller has handed
// out the last chunk it closes the call and waits only for the workers that came in. So a call never waits
// for a worker that is asleep, or that the OS has put on the caller's own core (a VM that packs threads
// onto few vCPUs does, for tens of milliseconds after a worker starts): the caller then does the chunks
// itself, as fast as one thread can. Workers waiting for the next call yield the core every 64 pause
// instructions (a few microseconds at most), so that a caller sharing it gets to run. The pool
// runs one call at a time; a caller that finds it busy — another thread's call, or a call nested inside a
// body — does not queue: it runs its whole range on its own thread (slot 0). So concurrent callers never
// block each other, nesting cannot deadlock, and the cores are shared out anyway; per-thread scratch must
// therefore be keyed by the OS thread (thread_local), not by slot. An exception thrown by a body stops the
// handing out of further chunks and is rethrown to the caller (the first one, if several threw) after every
// participant has stopped. The workers never exit before the process does (the shared pool is never
// destroyed: no teardown race with static destructors); a child created by fork() gets a fresh pool on its
// first parallel call, since the parent's workers do not exist there.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace bmmc {

/// The CPUs this process may run on (its affinity mask; else std::thread::hardware_concurrency()), at least
/// 1. Read once and cached: hardware_concurrency() opens a /sys file on every call.
int cpu_cores() noexcept;

class ThreadPool {
 public:
  /// A non-owning callable reference (no allocation per call).
  class Body {
   public:
    template <class F>
      requires(!std::is_same_v<std::decay_t<F>, Body>)
    Body(F& f) noexcept  // NOLINT(google-explicit-constructor): built at the call site of run()
        : object_(static_cast<void*>(&f)), call_([](void* o, std::uint64_t b, std::uint64_t e, int s) {
            (*static_cast<F*>(o))(b, e, s);
          }) {}
    void operator()(std::uint64_t begin, std::uint64_t end, int slot) const { call_(object_, begin, end, slot); }

   private:
    void* object_;
    void (*call_)(void*, std::uint64_t, std::uint64_t, int);
  };

  /// The most participants one call has (each is a parked thread for the process's life); more are not started.
  static constexpr int kMaxThreads = 256;

  /// A pool whose default parallelism is `threads` (≤ 0: cpu_cores()); no thread starts until a call needs it.
  explicit ThreadPool(int threads = 0);
  /// Stops and joins the workers. Must not run while a call is in progress.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The process-wide pool sized to cpu_cores() (never destroyed).
  static ThreadPool& shared();

  /// Default parallelism: the caller plus the workers a call gets unless it asks for more.
  int size() const noexcept { return size_; }
  /// Workers started so far (they stay parked between calls).
  int workers() const noexcept;

  /// body(begin, end, slot) over chunks of [0, count) on `threads` participants (≥ 1; more than size()
  /// starts more workers, which then stay). chunk ≥ 1. threads == 1 or count ≤ chunk runs on the caller
  /// without touching the pool. Returns when every chunk is done; rethrows a body's exception.
  void run(std::uint64_t count, std::uint64_t chunk, int threads, Body body);
  template <class F>
  void run(std::uint64_t count, std::uint64_t chunk, int threads, F&& f) {
    run(count, chunk, threads, Body(f));
  }

 private:
  void work(int slot);
  bool join(std::uint64_t generation);
  void worker_loop(int index, std::uint64_t seen);
  void grow(int workers);

  int size_;
  std::mutex run_mutex_;  // held by the caller for the whole of a pooled call
  std::vector<std::thread> threads_;
  std::atomic<int> started_{0};
  // (generation << 32) | participants of the current call: one word, so a worker reads both consistently.
  std::atomic<std::uint64_t> state_{0};
  // Bumped after each publication; the workers sleep on it. 32 bits: a futex word, so the wait is the
  // kernel's futex itself (libstdc++ waits on 64-bit atomics through a shared proxy, far slower per wake-up on
  // a loaded VM).
  std::atomic<std::uint32_t> wake_{0};
  std::atomic<bool> stop_{false};
  // Workers asleep on wake_, and whether the caller is asleep on finished_: a publication or a last finish
  // makes the futex system call only when someone sleeps (checked in sequentially consistent order against
  // the sleeper's own announcement, so a wake-up is never lost).
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_asleep_{false};
  // The current call's door: (generation << 32) | kDoorOpen | workers that came in. A worker takes part only
  // by a compare-exchange while the door is open for the generation it saw; the caller closes it once every
  // chunk is handed out and then waits for those that came in, and for no other (join(), run()).
  std::atomic<std::uint64_t> door_{0};
  std::atomic<int> finished_{0};  // workers that came into the current call and are done with it
  // The current call (written under run_mutex_ before the door opens; read only by those that came in).
  const Body* body_ = nullptr;
  std::uint64_t count_ = 0, chunk_ = 0;
  std::atomic<std::uint64_t> next_{0};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace bmmc
