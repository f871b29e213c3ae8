// Internal to the NCCL layer: every wait and record of the portable engine's pipeline (DistPermuter, pieces over
// grouped ncclSend/ncclRecv) in the order one rank enqueues them, written apart from CUDA and NCCL over an `ops`
// object, so that the same code drives the GPUs (dist_permuter.cpp) and a CPU replay of the streams' semantics
// (tests/nccl/exchange_order_test.cpp). NCCL writes a received piece from the receiver's own group on the
// receiver's exchange stream, so each rank's own streams decide when its buffers are reused.
//
// Streams: the caller's (packs and unpacks) and one exchange stream per communicator (piece i on i mod comms).
// Events per slot: Packed (recorded on the caller's stream), Exchanged (on the exchange stream). `ops` provides
//   wait(stream, event, call), record(event, stream, call)   as in CUDA; stream −1 is the caller's
//   pack(step), exchange(step, comm), unpack(step)           enqueued on the caller's stream, exchange stream comm,
//                                                            the caller's stream
#pragma once

#include "bmmc/dist/ring.hpp"

namespace bmmc::nccl_detail {

struct ExchangeEvent {
  enum class Kind { Packed, Exchanged };
  Kind kind = Kind::Packed;
  int slot = 0;
};

/// Enqueues `count` pieces over `depth` slots, the exchanges alternating over `comms` communicators, through `ops`:
///   caller:   pack 0 … pack D−1, [exchange 0 done] unpack 0, pack D, [exchange 1 done] unpack 1, pack D+1, ...
///   exchange: [pack i done] exchange i
/// Pack i+D overwrites send buffer i mod D only after exchange i (its unpack waited for it); exchange i+D overwrites
/// receive buffer i mod D only after unpack i (it waits for pack i+D, which the caller's stream runs after unpack i).
template <class Ops>
void enqueue_exchange_pipeline(int depth, int count, int comms, Ops& ops) {
  using E = ExchangeEvent::Kind;
  for_each_ring_step(count, depth, [&](const RingStep& s) {
    const int i = s.step, b = s.slot;
    if (s.kind == RingStep::Kind::Send) {
      ops.pack(i);
      ops.record(ExchangeEvent{E::Packed, b}, -1, "cudaEventRecord (packed)");
      const int c = i % comms;
      ops.wait(c, ExchangeEvent{E::Packed, b}, "cudaStreamWaitEvent (packed)");
      ops.exchange(i, c);
      ops.record(ExchangeEvent{E::Exchanged, b}, c, "cudaEventRecord (exchanged)");
    } else {
      ops.wait(-1, ExchangeEvent{E::Exchanged, b}, "cudaStreamWaitEvent (exchanged)");
      ops.unpack(i);
    }
  });
}

}  // namespace bmmc::nccl_detail
