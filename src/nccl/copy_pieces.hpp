// Internal to the NCCL layer: the fused engine's path for maps whose push would need a finishing pass (docs/DESIGN.md
// §9.4) — the portable engine's pieces (pack and unpack kernels, scratch layout: peer/piece_kernels.hpp) with the
// copy engines moving each piece straight into the receivers' scratch windows through their load/store addresses
// (NcclWindow::peers(), cudaMemcpyAsync), as PeerPermuter's CopyPieces engine does in one process. The SMs pack and
// unpack the neighbouring pieces while the links carry one; NCCL only orders the ranks.
//
// Ordering, over a ring of D buffers (piece i in buffer b = i mod D), after the call's agreement on the caller's
// stream:
//   caller's stream:  pack i → packed[b];  [arrived(i)] unpack i → unpacked[b]
//   copy streams:     [packed[b], arrived(i − 1) (start for i = 0)] copy i to its receivers → copied[s][b]
//   barrier stream:   arrive(i) = [copied[·][b], unpacked of piece i + 1 − D] a one-word ncclAllReduce → arrived
// so arrive(i) certifies on every rank both that piece i has landed (its unpack may start) and that piece i + 1 − D
// has been unpacked (slot (i + 1) mod D is free for piece i + 1's copies). arrive(i) is enqueued just before piece
// i + 1's copies (or before the last unpack), when the unpack it waits for has been enqueued: every wait finds the
// record it means. One barrier per piece, all on one stream in the same order on every rank.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/nccl/window.hpp"
#include "bmmc/peer/piece_kernels.hpp"
#include "collectives.hpp"

namespace bmmc::nccl_detail {

class NcclPiecePipeline {
 public:
  /// Plans the pieces (`pieces`, 0 = the fewest within 1/8 scratch, over a ring of `depth` buffers), compiles this
  /// rank's kernels and makes its streams and events. Not collective. Throws std::invalid_argument where the pieces
  /// cannot be cut along tiles.
  NcclPiecePipeline(const DistPlan& plan, const RankContext& ctx, int pieces, int depth, const GpuOptions& gpu);
  ~NcclPiecePipeline();
  NcclPiecePipeline(const NcclPiecePipeline&) = delete;
  NcclPiecePipeline& operator=(const NcclPiecePipeline&) = delete;

  std::size_t scratch_bytes() const;
  std::size_t alignment() const { return kernels_.alignment; }
  int pieces() const { return ps_.pieces; }

  /// Collective; enqueues the permutation on `stream`, which must already order this call after every rank's
  /// earlier work (the agreement or a barrier). `scratch` is a window of scratch_bytes() with every rank's address.
  void run(const void* in, void* out, const NcclWindow& scratch, cudaStream_t stream) const;

 private:
  void release() noexcept;
  const RankContext& ctx_;
  DistPlan plan_;
  PieceSchedule ps_;
  PieceLayout at_;
  PieceKernels kernels_;
  std::vector<SendStep> sends_;                 // the chunks that leave this rank
  std::vector<cudaStream_t> copy_;              // one per send
  cudaStream_t barrier_ = nullptr;
  cudaEvent_t start_ = nullptr;
  std::vector<cudaEvent_t> packed_, unpacked_, arrived_;  // [b]
  std::vector<std::vector<cudaEvent_t>> copied_;          // [send][b]
};

}  // namespace bmmc::nccl_detail
