// Internal to the peer layer: the copy engine of PeerPermuter pipelined in pieces (engine CopyPieces, docs/DESIGN.md
// §9.5). Per piece, every rank packs its chunks' piece into its scratch (the pack kernel, SMs), the copy engines
// move each chunk that leaves a rank into its receiver's slot (cudaMemcpyPeerAsync, one stream per sending pair),
// and every receiver unpacks the piece into its output (the unpack kernel, SMs) — the portable NCCL engine's
// pipeline (exchange/piece_kernels.hpp, dist/schedule.hpp) with the copy engines in NCCL's place, so that the bytes
// cross the links while the SMs pack and unpack the neighbouring pieces.
//
// Ordering over a ring of D buffers (piece i uses buffer b = i mod D), enqueued piece by piece:
//   rank r's stream:   [copies of piece i−D out of r done] pack i → packed[r][b];  … [copies into r of i] unpack i
//   copy stream r→d:   [packed[r][b], unpacked[d][b] of piece i−D] copy → copied[r][d][b]
// and the host enqueues pack/copy 0..D−1, then per i: unpack i on every rank, pack/copy i+D — so every wait finds
// the event's latest record to be the piece it means. Every stream first waits for every other (the call's start)
// and each rank's stream ends after the copies out of its scratch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/exchange/piece_kernels.hpp"

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
  void release() noexcept;  // streams and events made so far (destructor, or a constructor that throws)
  DistPlan plan_;
  std::vector<int> devices_;
  PieceSchedule ps_;
  std::vector<PieceLayout> layouts_;                 // per rank
  std::vector<PieceKernels> kernels_;                // per rank, on its device
  std::vector<std::vector<SendStep>> sends_;         // per rank: the chunks that leave it
  std::vector<std::vector<cudaStream_t>> copy_;      // [r][d]: r's copy stream to d (null where r sends nothing)
  std::vector<std::vector<cudaEvent_t>> packed_, unpacked_, started_;  // [r][b]; started_[r][0]
  std::vector<std::vector<std::vector<cudaEvent_t>>> copied_;          // [r][d][b]
};

}  // namespace bmmc::peer_detail
