// The copy engine pipelined in pieces (see piece_pipeline.hpp).
#include "piece_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "rank_buffers.hpp"

namespace bmmc::peer_detail {

namespace {

cudaEvent_t new_event(int device) {
  ScopedDevice on(device);
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  return e;
}

}  // namespace

PiecePipeline::PiecePipeline(const DistPlan& plan, const std::vector<int>& devices, int pieces, const GpuOptions& gpu)
    : plan_(plan), devices_(devices), ps_(make_piece_schedule(plan, pieces)) {
  const std::size_t g = devices.size();
  try {
    std::vector<std::vector<std::size_t>> lanes(g);
    for (std::size_t r = 0; r < g; ++r) {
      layouts_.push_back(piece_layout(plan, ps_, r));
      kernels_.push_back(make_piece_kernels(plan, ps_, r, devices[r], gpu));
      sends_.push_back(leaving_sends(plan, r));
      for (const SendStep& st : sends_[r]) lanes[r].push_back(st.dest);
    }
    ring_ = std::make_unique<PeerCopyRing>(devices, std::move(lanes), ps_.depth, true);
    for (std::size_t r = 0; r < g; ++r) started_.push_back(new_event(devices[r]));
  } catch (...) {
    release();
    throw;
  }
}

PiecePipeline::~PiecePipeline() { release(); }

void PiecePipeline::release() noexcept {
  ring_.reset();  // waits for the last call's copies
  for (cudaEvent_t e : started_) cudaEventDestroy(e);
  started_.clear();
}

std::size_t PiecePipeline::scratch_bytes() const {
  return static_cast<std::size_t>(ps_.scratch_elems) * static_cast<std::size_t>(plan_.elem_bytes);
}

std::size_t PiecePipeline::alignment() const {
  std::size_t a = static_cast<std::size_t>(plan_.elem_bytes);
  for (const PieceKernels& k : kernels_) a = std::max(a, k.alignment);
  return a;
}

void PiecePipeline::run(const std::vector<const void*>& in, const std::vector<void*>& out,
                        const std::vector<void*>& scratch, const std::vector<cudaStream_t>& streams) const {
  const std::size_t g = devices_.size(), eb = static_cast<std::size_t>(plan_.elem_bytes);
  CallEvents events(devices_);
  events.barrier(streams);  // no rank writes into a buffer another stream may still be using
  for (std::size_t r = 0; r < g; ++r) {
    ScopedDevice on(devices_[r]);
    check(cudaEventRecord(started_[r], streams[r]), "cudaEventRecord (start)");
  }
  for (std::size_t r = 0; r < g; ++r) {  // a copy stream starts with its two ends
    ScopedDevice on(devices_[r]);
    for (std::size_t l = 0; l < sends_[r].size(); ++l) {
      check(cudaStreamWaitEvent(ring_->copy_stream(r, l), started_[r], 0), "cudaStreamWaitEvent (start)");
      check(cudaStreamWaitEvent(ring_->copy_stream(r, l), started_[sends_[r][l].dest], 0), "cudaStreamWaitEvent (start)");
    }
  }
  std::vector<BitVec> slots;  // where each rank's chunks land at their receivers
  for (std::size_t r = 0; r < g; ++r) slots.push_back(sender_slot(plan_, r));
  ring_->run(
      ps_.pieces, streams,
      [&](std::size_t r, int i, cudaStream_t s) { launch_pack(kernels_[r], ps_, layouts_[r], i, in[r], scratch[r], s); },
      [&](std::size_t r, std::size_t lane, int i, cudaStream_t cs) {
        const SendStep& st = sends_[r][lane];
        const int b = i % ps_.depth;
        const std::size_t len = static_cast<std::size_t>(ps_.bounds[i + 1] - ps_.bounds[i]) * eb;
        const auto* from = static_cast<const unsigned char*>(scratch[r]) + layouts_[r].pack_at[b][st.chunk] * eb;
        auto* to = static_cast<unsigned char*>(scratch[st.dest]) + layouts_[st.dest].recv_at[b][slots[r]] * eb;
        check(cudaMemcpyPeerAsync(to, devices_[st.dest], from, devices_[r], len, cs), "cudaMemcpyPeerAsync",
              fmt::format("piece {} of rank {} to rank {}, {} bytes", i, r, st.dest, len));
      },
      [&](std::size_t d, int i, cudaStream_t s) {
        launch_unpack(kernels_[d], ps_, layouts_[d], i, scratch[d], out[d], s);
      });
  // The caller's stream ends after every copy out of the rank's scratch.
  for (std::size_t r = 0; r < g; ++r) ring_->wait_for_copies(r, streams[r]);
}

}  // namespace bmmc::peer_detail
