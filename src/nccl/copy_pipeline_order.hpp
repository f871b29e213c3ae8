// Internal to the NCCL layer: every wait, record and barrier of NcclCopyPipeline (copy_pipeline.hpp) in the order
// one rank enqueues them, written apart from CUDA and NCCL over an `ops` object, so that the same code drives the
// GPUs (copy_pipeline.cpp) and a CPU replay of G ranks with the streams' semantics and the barrier as a collective
// (tests/nccl/copy_pipeline_order_test.cpp), which checks that each step waits for exactly what the ring needs.
//
// Streams of the rank: its caller's stream (packs and unpacks), its barrier stream, and one copy stream per lane.
// Events: Start; Packed, Unpacked and Arrived per slot; Copied per lane and slot. `ops` provides
//   wait(stream, event, call)   the stream waits for the event's latest record (none yet: no wait)
//   record(event, stream, call)
//   barrier(stream)             the one-word allreduce of every rank, in the same order on every rank
//   pack(step, stream), copy(step, lane, stream), unpack(step, stream)
// where `call` names the CUDA call and its purpose for an error message.
#pragma once

#include <cstddef>

#include "bmmc/dist/ring.hpp"

namespace bmmc::nccl_detail {

struct PipeStream {
  enum class Kind { Caller, Barrier, Copy };
  Kind kind = Kind::Caller;
  int lane = -1;  ///< Copy only
};

struct PipeEvent {
  enum class Kind { Start, Packed, Unpacked, Arrived, Copied };
  Kind kind = Kind::Start;
  int lane = -1;  ///< Copied only
  int slot = 0;
};

/// Enqueues this rank's part of `count` steps over `depth` ≥ 2 slots with `lanes` transfers each through `ops` (with
/// one slot, a step's unpack would come before the barrier that says it has arrived).
template <class Ops>
void enqueue_copy_pipeline(std::size_t lanes, int depth, int count, Ops& ops) {
  using S = PipeStream::Kind;
  using E = PipeEvent::Kind;
  const PipeStream caller{S::Caller, -1}, barrier{S::Barrier, -1};
  const int lane_count = static_cast<int>(lanes);
  ops.record(PipeEvent{E::Start, -1, 0}, caller, "cudaEventRecord (start)");
  ops.wait(barrier, PipeEvent{E::Start, -1, 0}, "cudaStreamWaitEvent (start)");
  for (int l = 0; l < lane_count; ++l)
    ops.wait(PipeStream{S::Copy, l}, PipeEvent{E::Start, -1, 0}, "cudaStreamWaitEvent (start)");
  // arrive(j): step j has landed everywhere, and step j + 1 − D has been unpacked everywhere.
  const auto arrive = [&](int j) {
    const int b = j % depth;
    for (int l = 0; l < lane_count; ++l) ops.wait(barrier, PipeEvent{E::Copied, l, b}, "cudaStreamWaitEvent");
    if (j + 1 - depth >= 0)
      ops.wait(barrier, PipeEvent{E::Unpacked, -1, (j + 1) % depth}, "cudaStreamWaitEvent (unpacked)");
    ops.barrier(barrier);
    ops.record(PipeEvent{E::Arrived, -1, b}, barrier, "cudaEventRecord (arrived)");
  };
  // Send j: step j's pack and copies, after arrive(j − 1), which frees the slot the copies land in.
  const auto send = [&](const RingStep& s) {
    const int j = s.step, b = s.slot;
    if (j >= 1) arrive(j - 1);
    ops.pack(j, caller);
    ops.record(PipeEvent{E::Packed, -1, b}, caller, "cudaEventRecord (packed)");
    for (int l = 0; l < lane_count; ++l) {
      const PipeStream cs{S::Copy, l};
      ops.wait(cs, PipeEvent{E::Packed, -1, b}, "cudaStreamWaitEvent (packed)");
      if (j >= 1) ops.wait(cs, PipeEvent{E::Arrived, -1, (j - 1) % depth}, "cudaStreamWaitEvent (slot free)");
      ops.copy(j, l, cs);
      ops.record(PipeEvent{E::Copied, l, b}, cs, "cudaEventRecord (copied)");
    }
  };
  // Receive i: step i's unpack once it has arrived everywhere.
  const auto receive = [&](const RingStep& s) {
    const int i = s.step;
    if (i == count - 1) arrive(i);  // every other step's arrival came with the next step's copies
    ops.wait(caller, PipeEvent{E::Arrived, -1, s.slot}, "cudaStreamWaitEvent (arrived)");
    ops.unpack(i, caller);
    ops.record(PipeEvent{E::Unpacked, -1, s.slot}, caller, "cudaEventRecord (unpacked)");
  };
  for_each_ring_step(count, depth, [&](const RingStep& s) { s.kind == RingStep::Kind::Send ? send(s) : receive(s); });
}

}  // namespace bmmc::nccl_detail
