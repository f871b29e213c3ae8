// Internal to the NCCL layer: the ordering of a pipeline whose transfers between ranks run on the copy engines
// (cudaMemcpyAsync into the receivers' NcclWindows through their load/store addresses) while the SMs do the local
// work before and after them — shared by the fused engine's pieces (copy_pieces.hpp) and the in-place engine's
// staged chunks (swap_permuter.cpp). Step i (of `count`, in the ring's order: dist/ring.hpp) uses slot b = i mod D
// on every rank: pack(i) fills this rank's send side of slot b, copy(i, lane) names each transfer out of it (one
// copy stream per lane: a destination), unpack(i) empties this rank's receive side of slot b.
//
//   caller's stream:  pack i → packed[b];  [arrived(i)] unpack i → unpacked[b]
//   copy streams:     [packed[b], arrived(i − 1) (the call's start for i = 0)] copy i → copied[lane][b]
//   barrier stream:   arrive(i) = [copied[·][b], unpacked of step i + 1 − D] a one-word ncclAllReduce → arrived
// so arrive(i) certifies on every rank both that step i has landed (its unpack may start) and that step i + 1 − D
// has been unpacked (slot (i + 1) mod D is free for step i + 1's copies). arrive(i) is enqueued just before step
// i + 1's copies (or before the last unpack), when the unpack it waits for has been enqueued already, so every
// wait finds the record it means; the send side of slot b is refilled (pack i + D) only after unpack i, which waited
// for arrive(i), which waited for the copies out of it. One barrier per step, all on one stream, in the same order on
// every rank; the caller's stream must already order the call after every rank's earlier work (the agreement or a
// barrier), and it ends after the last unpack, which covers every copy and barrier of the call.
// The waits, records and barriers are enqueue_copy_pipeline's (copy_pipeline_order.hpp), which a CPU test replays.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "collectives.hpp"

namespace bmmc::nccl_detail {

/// One transfer of a step: `bytes` from this rank's `from` to `to` (another rank's window, as this rank addresses it).
struct CopyLane {
  void* to = nullptr;
  const void* from = nullptr;
  std::size_t bytes = 0;
};

class NcclCopyPipeline {
 public:
  /// Streams and events for `lanes` transfers per step over a ring of `depth` slots (at least 2), on the context's
  /// device.
  NcclCopyPipeline(const RankContext& ctx, std::size_t lanes, int depth);
  ~NcclCopyPipeline();
  NcclCopyPipeline(const NcclCopyPipeline&) = delete;
  NcclCopyPipeline& operator=(const NcclCopyPipeline&) = delete;

  int depth() const { return depth_; }

  /// Collective: enqueues `count` steps (the header's ordering) on `stream` and the pipeline's own streams.
  void run(int count, cudaStream_t stream, const std::function<void(int, cudaStream_t)>& pack,
           const std::function<CopyLane(int, std::size_t)>& copy,
           const std::function<void(int, cudaStream_t)>& unpack) const;

 private:
  void release() noexcept;
  const RankContext& ctx_;
  int depth_;
  std::vector<cudaStream_t> copy_;                        // one per lane
  cudaStream_t barrier_ = nullptr;
  cudaEvent_t start_ = nullptr;
  std::vector<cudaEvent_t> packed_, unpacked_, arrived_;  // [b]
  std::vector<std::vector<cudaEvent_t>> copied_;          // [lane][b]
};

}  // namespace bmmc::nccl_detail
