// Internal: an engine behind the distributed front door (bmmc/distributed.hpp: DistributedPermuter), not installed
// and not for callers outside the library; its own tests use it directly.
// The fused NCCL engine of the distributed plan (docs/DESIGN.md §9.4, §9.5): any BMMC of an array split over the
// ranks of an NCCL communicator, one process (or thread) per GPU, moved in ONE pass over NVLink — the push plan's
// kernel on every rank reads its own input and stores whole output runs straight into the destination ranks'
// buffers, which it addresses through NCCL symmetric memory (NcclWindow: ncclCommWindowRegister and the device
// API's ncclGetLsaPointer). No bytes pass through NCCL's buffers and none cross a link twice.
//
// A call (collective, stream-ordered, on the caller's stream):
//   1. the ranks' agreement on (plan hash, n, element size, engine) — an ncclAllGather and one stream
//      synchronisation (DistOptions::check_agreement = false replaces it by a one-word ncclAllReduce): it is also
//      the barrier that keeps a rank from storing into a peer's buffer before the peer's earlier work on it is done;
//   2. the push kernel: rank r's blocks over `in`, storing into `out` of every rank (PushPlan::one_pass(): the map
//      keeps each output run on one source rank) or into `scratch` of every rank (the other maps);
//   3. a one-word ncclAllReduce: every rank's stores have landed before any rank goes on;
//   4. for two-pass push plans, the finishing local pass Q: scratch → out on every rank.
// Maps whose push would need that finishing pass and that send to several ranks (k ≥ 2: every rank to 2^k) run on
// the portable engine (fused() false; dist/tuning.hpp kAutoPiecesMaxK says why). Where each rank sends
// to one other (k = 1), two-pass maps run instead, wherever their pieces can be cut along tiles (it
// depends on the map: the rank bit swapped with local bit 0 from 2^20 elements per rank, every map tested at 2^26),
// the portable engine's pieces on the copy engines (ring depth DistOptions::depth, pieces DistOptions::pieces): per piece the pack kernel,
// cudaMemcpyAsync of each chunk that leaves the rank straight into its receiver's scratch window (through the
// window's load/store address), a one-word ncclAllReduce, and the unpack kernel — the links carry one piece while
// the SMs pack and unpack its neighbours (pieces() > 0; scratch = the pieces' ring, about 1/8 of the array).
// Where the fused engine cannot run — a rank that is not load/store accessible from another (NCCL's LSA team is
// smaller than the communicator: other nodes, no peer path), ranks below one warp row — fused() is false,
// fallback_reason() says why, and calls run the portable engine (DistPermuter) on the windows' memory instead.
// Buffers: in is device memory of the communicator's device (2^m elements, aligned to alignment()); out is an
// NcclWindow of this communicator with at least local_bytes() bytes on every rank and, when fused() and
// scratch_bytes() > 0, scratch one with at least scratch_bytes() (when not fused, scratch is optional: the portable
// engine uses its own registered scratch). Which path a rank takes (one pass, pieces, push + finish) depends on its
// plan, options and device; the agreement check compares it — without the check (check_agreement = false), every
// rank must be built alike (same options, same kind of GPU).
// Example (every rank):
//   bmmc::NcclPushPermuter p(bmmc::random_bmmc(33, 1), 8, comm);
//   auto out = bmmc::NcclWindow::allocate(comm, p.local_bytes());
//   std::optional<bmmc::NcclWindow> scratch;
//   if (p.fused() && p.scratch_bytes()) scratch.emplace(bmmc::NcclWindow::allocate(comm, p.scratch_bytes()));
//   p(in, out, scratch ? &*scratch : nullptr, stream);
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <string>

#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/push_plan.hpp"
#include "dist_permuter.hpp"
#include "bmmc/nccl/window.hpp"

namespace bmmc {

class NcclPushPermuter {
 public:
  /// Plans `global` (N bits) over the communicator's ranks, compiles the push kernel and either the pieces' kernels
  /// or the finishing pass on the communicator's device (or builds the portable engine where the fused one cannot
  /// run). Not collective. Throws
  /// std::invalid_argument for a world size that is not a power of two or exceeds 2^N, errors carrying NCCL's
  /// message when the communicator cannot be queried.
  NcclPushPermuter(const Bmmc& global, int elem_bytes, ncclComm_t comm, const DistOptions& options = {});
  ~NcclPushPermuter();
  NcclPushPermuter(NcclPushPermuter&&) noexcept;
  NcclPushPermuter& operator=(NcclPushPermuter&&) noexcept;

  /// Collective: `in` is preserved; `out` receives the rank's 2^m output elements; `scratch` (a window of at
  /// least scratch_bytes()) is needed when fused() and scratch_bytes() > 0 and may be null otherwise. Everything is
  /// checked before anything is enqueued (std::invalid_argument naming the buffer; with the agreement check on, a
  /// rank that refuses its arguments makes every peer throw too). One call at a time per object.
  void operator()(const void* in, const NcclWindow& out, const NcclWindow* scratch, cudaStream_t stream) const;

  bool fused() const noexcept;                       ///< false: calls run the portable engine
  const std::string& fallback_reason() const noexcept;  ///< why not fused ("" when fused)
  /// Per rank: 0 for one-pass push plans, the pieces' ring when pieces() > 0, else one local array (the push lands
  /// there, Q finishes); the portable engine's scratch_bytes() when not fused.
  std::size_t scratch_bytes() const noexcept;
  /// Pieces of the copy-engine path (two-pass maps, ranks large enough to cut); 0 where the push runs.
  int pieces() const noexcept;
  std::size_t local_bytes() const noexcept;
  std::size_t alignment() const noexcept;
  const PushPlan& push_plan() const noexcept;
  const DistPlan& plan() const noexcept;
  int rank() const noexcept;
  int ranks() const noexcept;
  int device() const noexcept;
  const std::string& push_source() const noexcept;  ///< the push kernel's CUDA source ("" when not fused)

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace bmmc
