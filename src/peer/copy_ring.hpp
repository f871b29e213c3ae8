// Internal to the peer layer: a ring pipeline (dist/ring.hpp) whose transfers between the GPUs of one process run
// on the copy engines, ordered by events alone — shared by PeerPermuter's CopyPieces engine (piece_pipeline.hpp)
// and PeerSwapPermuter's staged chunks through the copies. The caller gives each rank's compute stream (packs
// and unpacks) and what a step does — pack(r, i, stream); copy(r, l, i, stream) for each lane l of rank r, where
// lanes(r)[l] is the rank it sends to and each lane has its own copy stream, so that every direction runs at
// once; unpack(d, i, stream) — and the ring orders them, per step i in slot b = i mod D (d the lane's receiver):
//   compute r:   [copied[r][·][b] of step i − D] pack(r, i) → packed[r][b]
//   copy r→d:    [packed[r][b], unpacked[d][b] of step i − D] copy(r, l, i) → copied[r][l][b]
//   compute d:   [copied[·][·→d][b] of step i] unpack(d, i) → unpacked[d][b]
// Every wait finds the event's latest record to be the step it means (the ring refills a slot only after its
// receive). The waits and records are enqueue_copy_ring's (copy_ring_order.hpp), which a CPU test replays. With first_round_waits the copies of the first D steps wait for unpacked[d][b] too: the receiver's
// unpack of that slot in the previous call (a no-op wait before any record). How a call starts after the caller's
// earlier work and how the caller's streams end after it are the engine's: copy_stream() and wait_for_copies().
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace bmmc::peer_detail {

class PeerCopyRing {
 public:
  using Local = std::function<void(std::size_t rank, int step, cudaStream_t stream)>;
  using Copy = std::function<void(std::size_t from, std::size_t lane, int step, cudaStream_t stream)>;

  /// Copy streams and events on every rank's device: lanes[r] lists the ranks r sends to in each step.
  PeerCopyRing(const std::vector<int>& devices, std::vector<std::vector<std::size_t>> lanes, int depth,
               bool first_round_waits);
  ~PeerCopyRing();  ///< waits for the copies of the last call
  PeerCopyRing(const PeerCopyRing&) = delete;
  PeerCopyRing& operator=(const PeerCopyRing&) = delete;

  int depth() const { return depth_; }
  const std::vector<std::size_t>& lanes(std::size_t rank) const { return lanes_[rank]; }
  cudaStream_t copy_stream(std::size_t rank, std::size_t lane) const { return copy_[rank][lane]; }

  /// Enqueues `count` steps in the ring's order; compute[r] is rank r's stream for its packs and unpacks.
  void run(int count, const std::vector<cudaStream_t>& compute, const Local& pack, const Copy& copy,
           const Local& unpack) const;
  /// `stream` (of rank's device) waits for the latest copy out of `rank` in every slot.
  void wait_for_copies(std::size_t rank, cudaStream_t stream) const;

 private:
  void release() noexcept;  // streams and events made so far (destructor, or a constructor that throws)
  std::vector<int> devices_;
  std::vector<std::vector<std::size_t>> lanes_;             // [r][lane]: the receiving rank
  int depth_;
  bool first_round_waits_;
  std::vector<std::vector<cudaStream_t>> copy_;             // [r][lane]
  std::vector<std::vector<cudaEvent_t>> packed_, unpacked_;  // [r][b]
  std::vector<std::vector<std::vector<cudaEvent_t>>> copied_;  // [r][lane][b]
};

}  // namespace bmmc::peer_detail
