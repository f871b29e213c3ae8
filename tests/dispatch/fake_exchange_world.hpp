// Test helper (dispatch and cuda tests): G ranks of one process as threads over an in-process transport for the
// distributed door's ExchangeGroup — an all-gather and an all-to-all that meet at a rendezvous with a timeout, so
// that a rank left waiting fails the test instead of hanging it — and on_every_rank, which runs a body per rank.
// The bytes move through `copy` (host memcpy by default; the GPU tests pass a device copy and a stream sync).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bmmc/distributed.hpp"

namespace bmmc::test {

class FakeWorld {
 public:
  using Copy = std::function<void(void* dst, const void* src, std::size_t bytes, StreamHandle stream)>;
  using Sync = std::function<void(StreamHandle stream)>;

  /// `copy` moves one segment; `sync` (if any) runs before the exchange's rendezvous (the sender's pass finished)
  /// and after its copies (the receiver's bytes landed).
  explicit FakeWorld(int ranks, Copy copy = nullptr, Sync sync = nullptr)
      : ranks_(ranks), copy_(std::move(copy)), sync_(std::move(sync)), words_(ranks), sends_(ranks),
        send_bytes_(ranks) {
    if (!copy_) copy_ = [](void* d, const void* s, std::size_t n, StreamHandle) { std::memcpy(d, s, n); };
  }

  ExchangeGroup group(int rank) {
    ExchangeGroup g;
    g.rank = rank;
    g.ranks = ranks_;
    g.gather = [this, rank](std::span<const std::uint64_t> mine, std::span<std::uint64_t> every) {
      {
        std::lock_guard lock(mutex_);
        words_[rank].assign(mine.begin(), mine.end());
        ++gathers;
      }
      meet();
      for (int r = 0; r < ranks_; ++r) {
        if (words_[r].size() * ranks_ != every.size()) throw std::logic_error("torn gather");
        std::memcpy(every.data() + r * words_[r].size(), words_[r].data(), words_[r].size() * sizeof(std::uint64_t));
      }
      meet();  // every rank has read the slots before any writes them again
    };
    g.exchange = [this, rank](const void* send, std::span<const std::size_t> send_bytes, void* recv,
                              std::span<const std::size_t> recv_bytes, StreamHandle stream) {
      if (sync_) sync_(stream);
      {
        std::lock_guard lock(mutex_);
        sends_[rank] = static_cast<const unsigned char*>(send);
        send_bytes_[rank].assign(send_bytes.begin(), send_bytes.end());
        ++exchanges;
      }
      meet();
      std::size_t at = 0;
      for (int s = 0; s < ranks_; ++s) {  // source s's segment for this rank, into slot s
        std::size_t from = 0;
        for (int d = 0; d < rank; ++d) from += send_bytes_[s][d];
        if (send_bytes_[s][rank] != recv_bytes[s]) throw std::logic_error("unpaired counts");
        if (recv_bytes[s]) copy_(static_cast<unsigned char*>(recv) + at, sends_[s] + from, recv_bytes[s], stream);
        at += recv_bytes[s];
      }
      if (sync_) sync_(stream);
      meet();  // no sender reuses its buffer before every receiver has copied
    };
    return g;
  }

  int gathers = 0, exchanges = 0;  // over every rank

 private:
  void meet() {
    std::unique_lock lock(mutex_);
    if (broken_) throw std::runtime_error("the world is broken: a rank waited in vain");
    const std::uint64_t generation = generation_;
    if (++arrived_ == ranks_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    if (!cv_.wait_for(lock, std::chrono::seconds(5), [&] { return generation_ != generation || broken_; }) ||
        broken_) {
      broken_ = true;
      cv_.notify_all();
      throw std::runtime_error("a rank waited 5 s in a collective: a peer never came");
    }
  }

  int ranks_;
  Copy copy_;
  Sync sync_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  bool broken_ = false;
  std::vector<std::vector<std::uint64_t>> words_;
  std::vector<const unsigned char*> sends_;
  std::vector<std::vector<std::size_t>> send_bytes_;
};

/// Runs body(rank) on one thread per rank; returns each rank's error message ("" when it returned).
inline std::vector<std::string> on_every_rank(int ranks, const std::function<void(int)>& body) {
  std::vector<std::string> errors(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception& e) {
        errors[r] = e.what();
        if (errors[r].empty()) errors[r] = "(empty message)";
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace bmmc::test
