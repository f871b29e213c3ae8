// Internal: an engine behind the distributed front door (bmmc/distributed.hpp: DistributedPermuter), not installed
// and not for callers outside the library; its own tests use it directly.
// In place across the ranks of an NCCL communicator (docs/DESIGN.md §9.6), one process (or thread) per GPU: an
// involution f of an array split over the ranks — cuStateVec's multi-device index-bit swap, for any involutive
// BMMC — with no output buffer (and no scratch but the staged path's staging of at most 4 GiB, below). The array lives in an NcclWindow (symmetric memory), so that each
// rank's threads can swap pairs of 16-byte vectors {x, f'(x)} wherever they live, addressing the other ranks'
// buffers through the window's ncclGetLsaPointer addresses — the RankSwapPlan's pass across ranks, between a local
// in-place involution Q on every rank where f moves low bits (a rank bit with local bit 0, say).
//
// A call (collective, stream-ordered): the ranks' agreement (an ncclAllGather; a one-word ncclAllReduce without
// the check), Q, a one-word ncclAllReduce (every rank's Q is done before any thread reaches into it), the pass
// across ranks, a one-word ncclAllReduce (every pair touching this rank is swapped), Q. Needs every rank load/
// store accessible from every other (NCCL's LSA team = the communicator); otherwise construction throws and says
// to permute out of place (DistPermuter). Where f moves low bits but fixes the top local bits (a rank bit swapped
// with local bit 0, say) the call runs staged chunks instead of Q and the pass across ranks (docs/DESIGN.md §9.6):
// chunk by chunk (at most 1 GiB each, or local_bytes() / DistOptions::pieces; where f fixes too few top local bits
// for chunks that small, the three passes run instead), f_c's pre-pass into a staging window, the segments copied
// by the copy engines into the receivers' staging through its load/store addresses, a one-word ncclAllReduce, the
// post-pass back into the chunk — pipelined so that the links carry one chunk while the SMs pack and unpack its
// neighbours (chunks() > 0; the staging, staging_bytes() = 4 chunks, is allocated with the engine, registered as a
// window by the first call and freed with the engine: destroy it on every rank). The path a rank takes depends on
// its options: the agreement compares it; without the check (check_agreement = false) build every rank alike. The
// single-process twin is PeerSwapPermuter, whose staged path does the same with cudaMemcpyPeerAsync. Example (every rank):
//   bmmc::NcclSwapPermuter swap(bmmc::parse_spec("swap:30,31", 32), 8, comm);   // rank bit <-> top local bit
//   auto sv = bmmc::NcclWindow::allocate(comm, swap.local_bytes());               // the state vector's slice
//   swap(sv, stream);
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <string>

#include "bmmc/dist/rank_swap_plan.hpp"
#include "dist_permuter.hpp"
#include "bmmc/nccl/window.hpp"

namespace bmmc {

class NcclSwapPermuter {
 public:
  /// Plans involution `f` (N bits) over the communicator's ranks and compiles, on the communicator's device, the
  /// pass across ranks and Q — or, for the staged path, f_c's pre- and post-pass, with the staging memory
  /// (ncclMemAlloc) and the copy pipeline's streams and events. Not collective. Throws std::invalid_argument for a
  /// map that is not an involution (saying to permute out of place), a world size that is not a power of two or
  /// exceeds 2^N, ranks that are not all load/store accessible and pieces < 0; errors carrying NCCL's message when
  /// the communicator cannot be queried or the staging cannot be allocated. Of the options check_agreement, gpu and
  /// pieces (the staged chunks) apply; the staging ring is always 2 slots.
  NcclSwapPermuter(const Bmmc& f, int elem_bytes, ncclComm_t comm, const DistOptions& options = {});
  ~NcclSwapPermuter();
  NcclSwapPermuter(NcclSwapPermuter&&) noexcept;
  NcclSwapPermuter& operator=(NcclSwapPermuter&&) noexcept;

  /// Collective: permutes the rank's 2^m elements at data.data() in place (a window of this communicator holding at
  /// least local_bytes() on every rank). Everything is checked before anything is enqueued.
  void operator()(const NcclWindow& data, cudaStream_t stream) const;

  const RankSwapPlan& plan() const noexcept;
  std::size_t local_bytes() const noexcept;
  int rank() const noexcept;
  int ranks() const noexcept;
  int device() const noexcept;
  const std::string& source() const noexcept;  ///< the pass across ranks' CUDA source ("" on the staged path)
  /// The staged path (f moves low bits and fixes top local bits): its chunks per rank, 0 where the three passes run.
  int chunks() const noexcept;
  /// The staged path's staging window per rank (4 chunks, allocated by the first call; 0 for the three passes).
  std::size_t staging_bytes() const noexcept;

 private:
  struct State;
  void run_staged(const NcclWindow& data, cudaStream_t stream) const;
  std::unique_ptr<State> state_;
};

}  // namespace bmmc
