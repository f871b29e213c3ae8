// Internal to the peer layer: every wait and record of PeerCopyRing (copy_ring.hpp) in the order it enqueues them,
// written apart from CUDA over an `ops` object, so that the same code drives the GPUs (copy_ring.cpp) and a CPU
// replay of the streams' semantics (tests/peer/copy_ring_order_test.cpp), which checks that each step's pack,
// copies and unpack wait for exactly what the ring needs: a slot's previous step, the pack before its copies, the
// copies before the unpack — and nothing that would serialise neighbouring steps.
//
// Streams: RingStream{r, -1} is rank r's compute stream, RingStream{r, l} its copy stream of lane l (to rank
// lanes[r][l]). Events: Packed and Unpacked per rank and slot, Copied per rank, lane and slot. `ops` provides
//   on(r)                      a guard that makes rank r's device current for its scope
//   wait(stream, event, call)  the stream waits for the event's latest record (none yet: no wait)
//   record(event, stream, call)
//   pack(r, step, stream), copy(r, lane, step, stream), unpack(r, step, stream)
// where `call` names the CUDA call and its purpose for an error message.
#pragma once

#include <cstddef>
#include <vector>

#include "bmmc/dist/ring.hpp"

namespace bmmc::peer_detail {

struct RingStream {
  std::size_t rank = 0;
  int lane = -1;  ///< −1: the rank's compute stream
};

struct RingEvent {
  enum class Kind { Packed, Unpacked, Copied };
  Kind kind = Kind::Packed;
  std::size_t rank = 0;
  int lane = -1;  ///< Copied only
  int slot = 0;
};

/// Enqueues `count` steps over `depth` slots through `ops` (see above); with first_round_waits the copies of the
/// first round also wait for the receiver's Unpacked of their slot (recorded, if at all, by the previous call).
template <class Ops>
void enqueue_copy_ring(const std::vector<std::vector<std::size_t>>& lanes, int depth, int count,
                       bool first_round_waits, Ops& ops) {
  using E = RingEvent::Kind;
  const std::size_t g = lanes.size();
  const auto lane_count = [&](std::size_t r) { return static_cast<int>(lanes[r].size()); };
  const auto send = [&](const RingStep& s) {
    const int b = s.slot;
    for (std::size_t r = 0; r < g; ++r) {
      auto on = ops.on(r);
      if (s.previous >= 0)  // r's send side of slot b is free once the copies of step i − D out of it are done
        for (int l = 0; l < lane_count(r); ++l)
          ops.wait(RingStream{r, -1}, RingEvent{E::Copied, r, l, b}, "cudaStreamWaitEvent (copied)");
      ops.pack(r, s.step, RingStream{r, -1});
      ops.record(RingEvent{E::Packed, r, -1, b}, RingStream{r, -1}, "cudaEventRecord (packed)");
    }
    for (std::size_t r = 0; r < g; ++r) {
      auto on = ops.on(r);
      for (int l = 0; l < lane_count(r); ++l) {
        const RingStream cs{r, l};
        ops.wait(cs, RingEvent{E::Packed, r, -1, b}, "cudaStreamWaitEvent (packed)");
        // The receiver's slot b is free once it unpacked step i − D.
        if (s.previous >= 0 || first_round_waits)
          ops.wait(cs, RingEvent{E::Unpacked, lanes[r][l], -1, b}, "cudaStreamWaitEvent (unpacked)");
        ops.copy(r, l, s.step, cs);
        ops.record(RingEvent{E::Copied, r, l, b}, cs, "cudaEventRecord (copied)");
      }
    }
  };
  const auto receive = [&](const RingStep& s) {
    const int b = s.slot;
    for (std::size_t r = 0; r < g; ++r)
      for (int l = 0; l < lane_count(r); ++l) {
        const std::size_t d = lanes[r][l];
        auto on = ops.on(d);
        ops.wait(RingStream{d, -1}, RingEvent{E::Copied, r, l, b}, "cudaStreamWaitEvent (arrived)");
      }
    for (std::size_t d = 0; d < g; ++d) {
      auto on = ops.on(d);
      ops.unpack(d, s.step, RingStream{d, -1});
      ops.record(RingEvent{E::Unpacked, d, -1, b}, RingStream{d, -1}, "cudaEventRecord (unpacked)");
    }
  };
  for_each_ring_step(count, depth, [&](const RingStep& s) { s.kind == RingStep::Kind::Send ? send(s) : receive(s); });
}

}  // namespace bmmc::peer_detail
