// Internal: an engine behind the distributed front door (bmmc/distributed.hpp: DistributedPermuter), not installed
// and not for callers outside the library; its own tests use it directly.
// The portable NCCL engine of the distributed plan (docs/DESIGN.md §9.4): any BMMC of an array split over the
// ranks of an NCCL communicator, one GPU per rank, in the CUB/NCCL style — the caller owns the communicator and
// the streams, calls are collective and stream-ordered.
//
// Rank r holds elements [r·2^m, (r+1)·2^m) of the 2^N-element array (the rank = the top g index bits). A call
// runs, on the caller's stream, the plan's all-to-all form (dist/alltoall.hpp) when it is not pipelined:
//   1. (check_agreement) ncclAllGather of (plan hash, N, element size, engine, pieces, communicators, whether the
//      engine's own registered scratch is used) and a host comparison: ranks that disagree all throw
//      std::invalid_argument naming every rank's view, before any data moves (this call synchronises the stream
//      once); a rank whose own arguments fail takes part as "refused", so that its peers throw instead of waiting;
//   2. the pre-pass, a CudaPermuter of the rank's `pre`: in → out (out is the send buffer);
//   3. one grouped ncclSend/ncclRecv per peer with its count (2^(m−k) elements to each of 2^k ranks);
//   4. the post-pass: the receive buffer → out.
// With the input preserved the exchange is pipelined (DistOptions::pieces; by default the fewest pieces whose scratch
// fits 1/8 of the local array — 26 for two ranks that each keep a chunk): the chunks are cut into
// the pieces of dist/schedule.hpp and, per piece, a pack kernel (the pre-pass over the piece's atoms, into one of
// DistOptions::depth send buffers, default 2), grouped ncclSend/ncclRecv on the engine's own stream (into one of
// `depth` receive buffers) and an unpack kernel (the post-pass over the same atoms, into out) run so that piece i's
// exchange overlaps the unpack of piece i−1 and the pack of piece i+1 (dist/piece_pass.hpp,
// codegen/piece_source.hpp); the chunk a rank keeps is packed straight into its receive slot and never goes
// through NCCL, nor takes room in a send buffer; scratch_bytes() is then depth·(2^k − 1 + 2^k) pieces where every
// rank keeps a chunk (else depth·2^(k+1)) — with depth 2: 15/128 of the local array for two ranks and 26 pieces,
// at most 1/8 for 32 pieces and any k — and the engine holds its own (ncclMemAlloc, registered with ncclCommRegister) for calls
// that pass none, whatever their streams: a call waits for the previous one to be done with it, and the
// destructor waits for the last. Where the pieces cannot be cut along whole
// tiles (small arrays: pipeline_note() says why) the call runs unpipelined, with one local array of scratch as the
// receive buffer. permute_destroying receives into the input itself (no scratch, not pipelined). A map that moves
// no element between ranks runs as one local pass and no communication (after the agreement check). The fused
// NVLink engine is NcclPushPermuter (push_permuter.hpp; PeerPermuter for one process driving several GPUs), the
// in-place mode PeerSwapPermuter's. DistOptions::exchange_comms = 2 alternates the exchange's groups between the
// caller's communicator and a second one split from it (its destructor then destroys that communicator, which NCCL
// may pair with the peers' destruction: destroy the engine on every rank). Destroy a DistPermuter before its
// communicator.
// This target (bmmc::nccl) is apart from bmmc::bmmc: the library, CLI and Python module never need NCCL.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <string>

#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/alltoall.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/tuning.hpp"

namespace bmmc {

struct DistOptions {
  bool check_agreement = true;  ///< all-gather and compare the plan hash on every call (one stream sync)
  /// Pipelined exchange in this many pieces (input preserved); 0 = the fewest pieces whose scratch fits 1/8 of the
  /// local array (pieces_within, dist/schedule.hpp; dist/tuning.hpp says why); 1 = one piece, not pipelined.
  int pieces = 0;
  int depth = 2;                ///< the pipeline's ring: this many send and receive buffers (2..128) of 2^k pieces
  /// The pipelined exchange alternates its groups between this many communicators (1 or 2): the caller's and, for
  /// 2, one the first pipelined call splits from it (ncclCommSplit, collective; destroyed with the engine, so then
  /// destroy the engine on every rank). The default: dist/tuning.hpp.
  int exchange_comms = kDefaultExchangeComms;
  GpuOptions gpu;               ///< how the local passes are planned and compiled

  friend bool operator==(const DistOptions&, const DistOptions&) = default;
};

class DistPermuter {
 public:
  /// Plans `global` (N bits) over the communicator's ranks for elements of elem_bytes and compiles the local
  /// passes on the communicator's device. Not collective. Throws std::invalid_argument when the world size is not
  /// a power of two or exceeds 2^N, and an error carrying NCCL's message when the communicator cannot be queried.
  DistPermuter(const Bmmc& global, int elem_bytes, ncclComm_t comm, const DistOptions& options = {});
  ~DistPermuter();
  DistPermuter(DistPermuter&&) noexcept;
  DistPermuter& operator=(DistPermuter&&) noexcept;

  /// Collective: every rank calls with its 2^m-element slices. in is preserved; scratch holds scratch_bytes()
  /// bytes of device memory (null: the engine's own registered scratch when registered_scratch(), else allocated
  /// stream-ordered for this call; a caller's scratch is fastest when registered with NCCL too — ncclMemAlloc and
  /// ncclCommRegister — since NCCL then moves the pieces without staging them through its own buffers). in, out and scratch must be device
  /// memory of the communicator's device, in and out aligned to elem_bytes, scratch to 256 bytes (as cudaMalloc
  /// returns it), pairwise disjoint; everything is checked before the first enqueue. One call at a time per
  /// DistPermuter: the pipeline's events and exchange stream belong to the object.
  void operator()(const void* in, void* out, void* scratch, cudaStream_t stream) const;
  /// Collective, input destroyed: `in` is the receive buffer of the exchange; no scratch.
  void permute_destroying(void* in, void* out, cudaStream_t stream) const;

  const DistPlan& plan() const noexcept;
  const AllToAllStep& step() const noexcept;
  int rank() const noexcept;
  int ranks() const noexcept;
  int device() const noexcept;
  std::size_t local_bytes() const noexcept;
  /// Scratch of operator(): the pipeline's send and receive buffers (PieceSchedule::scratch_elems), or one local
  /// array when not pipelined.
  std::size_t scratch_bytes() const noexcept;
  /// Whether operator() pipelines the exchange, in how many pieces, and if not, why ("" when it does).
  bool pipelined() const noexcept;
  int pieces() const noexcept;
  const std::string& pipeline_note() const noexcept;
  /// Whether the pipeline holds its own scratch (scratch_bytes(), from ncclMemAlloc, registered with the
  /// communicator by ncclCommRegister when the engine is built, freed with it): calls that pass no scratch use it.
  bool registered_scratch() const noexcept;

 private:
  struct State;
  void check_agreement(cudaStream_t stream, bool registered) const;
  void run(const void* in, void* out, void* recv, cudaStream_t stream) const;
  void run_pipelined(const void* in, void* out, void* scratch, cudaStream_t stream) const;
  std::unique_ptr<State> state_;
};

}  // namespace bmmc
