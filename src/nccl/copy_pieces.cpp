// The fused NCCL engine's pipeline on the copy engines (see copy_pieces.hpp).
#include "copy_pieces.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"

namespace bmmc::nccl_detail {

namespace {

cudaEvent_t new_event() {
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  return e;
}

}  // namespace

NcclPiecePipeline::NcclPiecePipeline(const DistPlan& plan, const RankContext& ctx, int pieces, int depth,
                                     const GpuOptions& gpu)
    : ctx_(ctx), plan_(plan), ps_(make_piece_schedule(plan, pieces, depth)) {
  const auto rank = static_cast<BitVec>(ctx.rank);
  at_ = piece_layout(plan_, ps_, rank);
  kernels_ = make_piece_kernels(plan_, ps_, rank, ctx.device, gpu);
  for (const SendStep& st : send_schedule(plan_, rank))
    if (st.dest != rank) sends_.push_back(st);
  ScopedDevice on(ctx.device);
  try {
    for (std::size_t s = 0; s < sends_.size(); ++s) {
      check(cudaStreamCreateWithFlags(&copy_.emplace_back(), cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      copied_.emplace_back();
      for (int b = 0; b < ps_.depth; ++b) copied_.back().push_back(new_event());
    }
    check(cudaStreamCreateWithFlags(&barrier_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    start_ = new_event();
    for (int b = 0; b < ps_.depth; ++b) {
      packed_.push_back(new_event());
      unpacked_.push_back(new_event());
      arrived_.push_back(new_event());
    }
  } catch (...) {
    release();
    throw;
  }
}

NcclPiecePipeline::~NcclPiecePipeline() { release(); }

void NcclPiecePipeline::release() noexcept {
  try {
    ScopedDevice on(ctx_.device);
    for (cudaStream_t& st : copy_)
      if (st) {
        cudaStreamSynchronize(st);
        cudaStreamDestroy(st);
      }
    copy_.clear();
    if (barrier_) {
      cudaStreamSynchronize(barrier_);  // the last barrier is done before its stream goes
      cudaStreamDestroy(barrier_);
      barrier_ = nullptr;
    }
    for (auto* events : {&packed_, &unpacked_, &arrived_}) {
      for (cudaEvent_t e : *events) cudaEventDestroy(e);
      events->clear();
    }
    for (auto& per_send : copied_)
      for (cudaEvent_t e : per_send) cudaEventDestroy(e);
    copied_.clear();
    if (start_) cudaEventDestroy(start_);
    start_ = nullptr;
  } catch (...) {  // a destructor must not throw; the device is gone anyway
  }
}

std::size_t NcclPiecePipeline::scratch_bytes() const {
  return static_cast<std::size_t>(ps_.scratch_elems) * static_cast<std::size_t>(plan_.elem_bytes);
}

void NcclPiecePipeline::run(const void* in, void* out, const NcclWindow& scratch, cudaStream_t stream) const {
  const std::size_t eb = static_cast<std::size_t>(plan_.elem_bytes);
  const int depth = ps_.depth, pieces = ps_.pieces;
  const BitVec slot = sender_slot(plan_, static_cast<BitVec>(ctx_.rank));
  auto* base = static_cast<unsigned char*>(scratch.data());
  const std::vector<void*>& peers = scratch.peers();
  check(cudaEventRecord(start_, stream), "cudaEventRecord (start)");
  check(cudaStreamWaitEvent(barrier_, start_, 0), "cudaStreamWaitEvent (start)");
  for (cudaStream_t cs : copy_) check(cudaStreamWaitEvent(cs, start_, 0), "cudaStreamWaitEvent (start)");
  // arrive(j): piece j has landed everywhere, and piece j + 1 − D has been unpacked everywhere.
  const auto arrive = [&](int j) {
    const int b = j % depth;
    for (const auto& per_send : copied_) check(cudaStreamWaitEvent(barrier_, per_send[b], 0), "cudaStreamWaitEvent");
    if (j + 1 - depth >= 0)
      check(cudaStreamWaitEvent(barrier_, unpacked_[(j + 1) % depth], 0), "cudaStreamWaitEvent (unpacked)");
    ctx_.barrier(barrier_);
    check(cudaEventRecord(arrived_[b], barrier_), "cudaEventRecord (arrived)");
  };
  const auto pack_and_copy = [&](int j) {
    const int b = j % depth;
    if (j >= 1) arrive(j - 1);
    launch_pack(kernels_, ps_, at_, j, in, base, stream);
    check(cudaEventRecord(packed_[b], stream), "cudaEventRecord (packed)");
    const std::size_t len = static_cast<std::size_t>(ps_.bounds[j + 1] - ps_.bounds[j]) * eb;
    for (std::size_t s = 0; s < sends_.size(); ++s) {
      const SendStep& st = sends_[s];
      check(cudaStreamWaitEvent(copy_[s], packed_[b], 0), "cudaStreamWaitEvent (packed)");
      if (j >= 1) check(cudaStreamWaitEvent(copy_[s], arrived_[(j - 1) % depth], 0), "cudaStreamWaitEvent (slot free)");
      auto* to = static_cast<unsigned char*>(peers[st.dest]) + at_.recv_at[b][slot] * eb;  // same layout everywhere
      check(cudaMemcpyAsync(to, base + at_.pack_at[b][st.chunk] * eb, len, cudaMemcpyDeviceToDevice, copy_[s]),
            "cudaMemcpyAsync", fmt::format("piece {} of rank {} to rank {}, {} bytes", j, ctx_.rank, st.dest, len));
      check(cudaEventRecord(copied_[s][b], copy_[s]), "cudaEventRecord (copied)");
    }
  };
  for (int i = 0; i < std::min(depth, pieces); ++i) pack_and_copy(i);
  for (int i = 0; i < pieces; ++i) {
    if (i == pieces - 1) arrive(i);  // every other piece's arrival came with the next piece's copies
    check(cudaStreamWaitEvent(stream, arrived_[i % depth], 0), "cudaStreamWaitEvent (arrived)");
    launch_unpack(kernels_, ps_, at_, i, base, out, stream);
    check(cudaEventRecord(unpacked_[i % depth], stream), "cudaEventRecord (unpacked)");
    if (i + depth < pieces) pack_and_copy(i + depth);
  }
}

}  // namespace bmmc::nccl_detail
