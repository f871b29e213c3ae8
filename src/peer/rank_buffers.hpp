// Internal to the peer layer: what every multi-GPU engine of one process does around its kernels — checking the
// ranks' buffers before anything is enqueued and ordering the ranks' streams with events (peer access itself is
// public: bmmc/peer/peer_access.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bmmc/peer/peer_access.hpp"

namespace bmmc::peer_detail {

// Events of one call, on the device they belong to; destroyed when the call has enqueued everything (CUDA
// releases an event's resources once the work it waits for completes).
class CallEvents {
 public:
  explicit CallEvents(const std::vector<int>& devices);
  ~CallEvents();
  CallEvents(const CallEvents&) = delete;
  CallEvents& operator=(const CallEvents&) = delete;

  // Every stream waits until every other stream has reached this point.
  void barrier(const std::vector<cudaStream_t>& streams) const;

 private:
  std::vector<int> devices_;
  std::vector<cudaEvent_t> events_;
};

// Buffers of 2^m elements (or of `bytes` where add says so: a smaller scratch), one or more per rank: each must be
// device memory of its rank's device, aligned, and no two may overlap (same device or not: managed memory can
// alias across devices). Throws std::invalid_argument naming the buffer and the rank.
class RankBufferCheck {
 public:
  RankBufferCheck(const std::vector<int>& devices, std::size_t bytes, std::size_t alignment)
      : devices_(devices), bytes_(bytes), alignment_(alignment) {}
  void add(const void* p, std::size_t rank, const char* what, std::size_t bytes = 0);  // 0: the array's bytes
  void check_disjoint();

 private:
  struct Range {
    std::uintptr_t start = 0;
    std::size_t bytes = 0;
    std::string name;
  };
  const std::vector<int>& devices_;
  std::size_t bytes_, alignment_;
  std::vector<Range> ranges_;
};

// log2 of the device count (a power of two, at most 2^n: dist_rank_bits), after checking that every ordinal exists.
int rank_bits_of_devices(const std::vector<int>& devices, int n);
// `to` (a stream of `device`) waits for what `from` has enqueued so far (one event, destroyed at once).
void stream_waits(int device, cudaStream_t to, cudaStream_t from);
// streams, or each device's default stream when empty.
std::vector<cudaStream_t> rank_streams(const std::vector<cudaStream_t>& streams, std::size_t ranks);

}  // namespace bmmc::peer_detail
