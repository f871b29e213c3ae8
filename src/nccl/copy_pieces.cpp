// The fused NCCL engine's pieces on the copy engines (see copy_pieces.hpp).
#include "copy_pieces.hpp"

namespace bmmc::nccl_detail {

NcclPiecePipeline::NcclPiecePipeline(const DistPlan& plan, const RankContext& ctx, int pieces, int depth,
                                     const GpuOptions& gpu)
    : ctx_(ctx),
      plan_(plan),
      ps_(make_piece_schedule(plan, pieces, depth)),
      at_(piece_layout(plan_, ps_, static_cast<BitVec>(ctx.rank))),
      kernels_(make_piece_kernels(plan_, ps_, static_cast<BitVec>(ctx.rank), ctx.device, gpu)),
      sends_(leaving_sends(plan_, static_cast<BitVec>(ctx.rank))),
      pipe_(ctx, sends_.size(), ps_.depth) {}

std::size_t NcclPiecePipeline::scratch_bytes() const {
  return static_cast<std::size_t>(ps_.scratch_elems) * static_cast<std::size_t>(plan_.elem_bytes);
}

void NcclPiecePipeline::run(const void* in, void* out, const NcclWindow& scratch, cudaStream_t stream) const {
  const std::size_t eb = static_cast<std::size_t>(plan_.elem_bytes);
  const BitVec slot = sender_slot(plan_, static_cast<BitVec>(ctx_.rank));
  auto* base = static_cast<unsigned char*>(scratch.data());
  const std::vector<void*>& peers = scratch.peers();
  pipe_.run(
      ps_.pieces, stream, [&](int i, cudaStream_t s) { launch_pack(kernels_, ps_, at_, i, in, base, s); },
      [&](int i, std::size_t lane) {
        const SendStep& st = sends_[lane];
        const int b = i % ps_.depth;
        return CopyLane{static_cast<unsigned char*>(peers[st.dest]) + at_.recv_at[b][slot] * eb,  // same everywhere
                        base + at_.pack_at[b][st.chunk] * eb,
                        static_cast<std::size_t>(ps_.bounds[i + 1] - ps_.bounds[i]) * eb};
      },
      [&](int i, cudaStream_t s) { launch_unpack(kernels_, ps_, at_, i, base, out, s); });
}

}  // namespace bmmc::nccl_detail
