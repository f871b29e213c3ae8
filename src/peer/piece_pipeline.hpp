// Internal to the peer layer: the copy engine of PeerPermuter pipelined in pieces (engine CopyPieces, docs/DESIGN.md
// §9.5). Per piece, every rank packs its chunks' piece into its scratch (the pack kernel, SMs), the copy engines
// move each chunk that leaves a rank into its receiver's slot (cudaMemcpyPeerAsync, one stream per sending pair),
// and every receiver unpacks the piece into its output (the unpack kernel, SMs) — the portable NCCL engine's
// pipeline (exchange/piece_kernels.hpp, dist/schedule.hpp) with the copy engines in NCCL's place, so that the bytes
// cross the links while the SMs pack and unpack the neighbouring pieces.
//
// The ordering is the ring's (copy_ring.hpp: piece i uses buffer i mod D of the PieceSchedule on every rank, the
// copies into a receiver's slot wait for its unpack of the slot's previous piece, in the previous call too). Every
// stream first waits for every other (the call's start), and each rank's stream ends after the copies out of its
// scratch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/schedule.hpp"
#include "../exchange/piece_kernels.hpp"
#include "copy_ring.hpp"

namespace bmmc::peer_detail {

class PiecePipeline {
 public:
  /// Plans the pieces (`pieces`, 0 = the fewest within 1/8 scratch) and makes every rank's kernels, copy streams and
  /// events. Throws std::invalid_argument where the pieces cannot be cut along tiles (PieceKernels says why).
  PiecePipeline(const DistPlan& plan, const std::vector<int>& devices, int pieces, const GpuOptions& gpu);
  ~PiecePipeline();
  PiecePipeline(const PiecePipeline&) = delete;
  PiecePipeline& operator=(const PiecePipeline&) = delete;

  std::size_t scratch_bytes() const;  ///< per rank
  std::size_t alignment() const;      ///< of in and out: the widest vector of the packs and unpacks
  const PieceSchedule& schedule() const { return ps_; }

  /// Enqueues the whole permutation on checked buffers (scratch: scratch_bytes() per rank).
  void run(const std::vector<const void*>& in, const std::vector<void*>& out, const std::vector<void*>& scratch,
           const std::vector<cudaStream_t>& streams) const;

 private:
  void release() noexcept;  // the start events made so far (destructor, or a constructor that throws)
  DistPlan plan_;
  std::vector<int> devices_;
  PieceSchedule ps_;
  std::vector<PieceLayout> layouts_;                 // per rank
  std::vector<PieceKernels> kernels_;                // per rank, on its device
  std::vector<std::vector<SendStep>> sends_;         // per rank: the chunks that leave it (the ring's lanes)
  std::vector<cudaEvent_t> started_;                 // per rank
  std::unique_ptr<PeerCopyRing> ring_;
};

}  // namespace bmmc::peer_detail
