// An in-process stand-in for an NCCL communicator of G ranks, for the simulated distributed permutation.
//
// It models grouped point-to-point semantics (ncclGroupStart; ncclSend/ncclRecv; ncclGroupEnd): within a group
// every send from r to d must meet exactly one receive posted by d from r with the same element count, and the
// copies happen at group end. Anything else would hang or race on GPUs, so here it is a std::logic_error naming
// the ranks — a bug of the schedule, never of the caller's input. It also enforces the schedule's promise that
// each round is a perfect matching (a rank sends at most once and receives at most once per group), and counts
// what moved. Example: group_start(); send(0, 1, p, 4); recv(1, 0, q, 4); group_end() copies 4 elements.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace bmmc::detail {

class SimComm {
 public:
  SimComm(std::uint64_t ranks, int elem_bytes) : ranks_(ranks), elem_bytes_(elem_bytes) {}

  void group_start() {
    if (open_) throw std::logic_error("SimComm: group_start inside an open group");
    open_ = true;
  }

  void send(std::uint64_t rank, std::uint64_t peer, const void* buf, std::uint64_t count) {
    post(rank, peer, count);
    auto& e = pending_[{rank, peer}];
    if (e.src) throw std::logic_error(fmt::format("SimComm: rank {} sends to rank {} twice in one group", rank, peer));
    e.src = buf;
    e.send_count = count;
  }

  void recv(std::uint64_t rank, std::uint64_t peer, void* buf, std::uint64_t count) {
    post(peer, rank, count);
    auto& e = pending_[{peer, rank}];
    if (e.dst) throw std::logic_error(fmt::format("SimComm: rank {} receives from rank {} twice in one group", rank, peer));
    e.dst = buf;
    e.recv_count = count;
  }

  void group_end() {
    if (!open_) throw std::logic_error("SimComm: group_end without group_start");
    std::map<std::uint64_t, int> sends, recvs;
    for (const auto& [key, e] : pending_) {
      const auto [src, dst] = key;
      if (!e.src || !e.dst)
        throw std::logic_error(fmt::format("SimComm: {} from rank {} to rank {} has no matching {}",
                                           e.src ? "send" : "receive", src, dst, e.src ? "receive" : "send"));
      if (e.send_count != e.recv_count)
        throw std::logic_error(fmt::format("SimComm: rank {} sends {} elements to rank {}, which expects {}", src,
                                           e.send_count, dst, e.recv_count));
      if (++sends[src] > 1 || ++recvs[dst] > 1)
        throw std::logic_error(fmt::format("SimComm: round is not a matching (rank {} → rank {})", src, dst));
    }
    for (const auto& [key, e] : pending_) {
      const std::size_t bytes = e.send_count * static_cast<std::size_t>(elem_bytes_);
      if (bytes) std::memcpy(e.dst, e.src, bytes);
      ++messages_;
      if (key.first != key.second) remote_bytes_ += bytes;
    }
    pending_.clear();
    open_ = false;
    ++groups_;
  }

  std::uint64_t messages() const { return messages_; }
  std::uint64_t remote_bytes() const { return remote_bytes_; }
  std::uint64_t groups() const { return groups_; }

 private:
  struct Entry {
    const void* src = nullptr;
    void* dst = nullptr;
    std::uint64_t send_count = 0, recv_count = 0;
  };

  void post(std::uint64_t src, std::uint64_t dst, std::uint64_t) const {
    if (!open_) throw std::logic_error("SimComm: send/recv outside a group");
    if (src >= ranks_ || dst >= ranks_)
      throw std::logic_error(fmt::format("SimComm: rank {} or {} is outside 0..{}", src, dst, ranks_ - 1));
  }

  std::uint64_t ranks_;
  int elem_bytes_;
  bool open_ = false;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Entry> pending_;
  std::uint64_t messages_ = 0, remote_bytes_ = 0, groups_ = 0;
};

}  // namespace bmmc::detail
