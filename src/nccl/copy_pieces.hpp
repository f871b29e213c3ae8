// Internal to the NCCL layer: the fused engine's path for maps whose push would need a finishing pass (docs/DESIGN.md
// §9.4) — the portable engine's pieces (pack and unpack kernels, scratch layout: exchange/piece_kernels.hpp) with the
// copy engines moving each piece straight into the receivers' scratch windows through their load/store addresses
// (NcclWindow::peers()), as PeerPermuter's CopyPieces engine does in one process. The SMs pack and unpack the
// neighbouring pieces while the links carry one; NCCL only orders the ranks (copy_pipeline.hpp: one one-word
// ncclAllReduce per piece). Piece i uses ring buffer i mod D of the PieceSchedule, whose receive layout is the same
// on every rank, so a sender knows where its chunk lands.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/nccl/window.hpp"
#include "../exchange/piece_kernels.hpp"
#include "collectives.hpp"
#include "copy_pipeline.hpp"

namespace bmmc::nccl_detail {

class NcclPiecePipeline {
 public:
  /// Plans the pieces (`pieces`, 0 = the fewest within 1/8 scratch, over a ring of `depth` buffers), compiles this
  /// rank's kernels and makes its streams and events. Not collective. Throws std::invalid_argument where the pieces
  /// cannot be cut along tiles.
  NcclPiecePipeline(const DistPlan& plan, const RankContext& ctx, int pieces, int depth, const GpuOptions& gpu);

  std::size_t scratch_bytes() const;
  std::size_t alignment() const { return kernels_.alignment; }
  int pieces() const { return ps_.pieces; }

  /// Collective; enqueues the permutation on `stream`, which must already order this call after every rank's
  /// earlier work (the agreement or a barrier). `scratch` is a window of scratch_bytes() with every rank's address.
  void run(const void* in, void* out, const NcclWindow& scratch, cudaStream_t stream) const;

 private:
  const RankContext& ctx_;
  DistPlan plan_;
  PieceSchedule ps_;
  PieceLayout at_;
  PieceKernels kernels_;
  std::vector<SendStep> sends_;  // the chunks that leave this rank: the pipeline's lanes
  NcclCopyPipeline pipe_;
};

}  // namespace bmmc::nccl_detail
