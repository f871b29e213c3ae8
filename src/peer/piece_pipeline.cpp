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
    for (std::size_t r = 0; r < g; ++r) {
      layouts_.push_back(piece_layout(plan, ps_, r));
      kernels_.push_back(make_piece_kernels(plan, ps_, r, devices[r], gpu));
      sends_.push_back(leaving_sends(plan, r));
    }
    copy_.assign(g, std::vector<cudaStream_t>(g, nullptr));
    copied_.assign(g, std::vector<std::vector<cudaEvent_t>>(g));
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices[r]);
      for (const SendStep& st : sends_[r]) {
        check(cudaStreamCreateWithFlags(&copy_[r][st.dest], cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        for (int b = 0; b < ps_.depth; ++b) copied_[r][st.dest].push_back(new_event(devices[r]));
      }
      packed_.emplace_back();
      unpacked_.emplace_back();
      for (int b = 0; b < ps_.depth; ++b) {
        packed_[r].push_back(new_event(devices[r]));
        unpacked_[r].push_back(new_event(devices[r]));
      }
      started_.push_back({new_event(devices[r])});
    }
  } catch (...) {
    release();
    throw;
  }
}

PiecePipeline::~PiecePipeline() { release(); }

void PiecePipeline::release() noexcept {
  try {
    for (std::size_t r = 0; r < copy_.size(); ++r) {
      ScopedDevice on(devices_[r]);
      for (cudaStream_t& st : copy_[r])
        if (st) {
          cudaStreamSynchronize(st);  // the last call's copies are done before their stream goes
          cudaStreamDestroy(st);
          st = nullptr;
        }
    }
    for (auto* events : {&packed_, &unpacked_, &started_})
      for (auto& per_rank : *events) {
        for (cudaEvent_t e : per_rank) cudaEventDestroy(e);
        per_rank.clear();
      }
    for (auto& per_rank : copied_)
      for (auto& per_pair : per_rank) {
        for (cudaEvent_t e : per_pair) cudaEventDestroy(e);
        per_pair.clear();
      }
  } catch (...) {  // a destructor must not throw; the device is gone anyway
  }
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
  const int depth = ps_.depth;
  CallEvents events(devices_);
  events.barrier(streams);  // no rank writes into a buffer another stream may still be using
  for (std::size_t r = 0; r < g; ++r) {
    ScopedDevice on(devices_[r]);
    check(cudaEventRecord(started_[r][0], streams[r]), "cudaEventRecord (start)");
  }
  for (std::size_t r = 0; r < g; ++r) {  // a copy stream starts with its two ends
    ScopedDevice on(devices_[r]);
    for (const SendStep& st : sends_[r]) {
      check(cudaStreamWaitEvent(copy_[r][st.dest], started_[r][0], 0), "cudaStreamWaitEvent (start)");
      check(cudaStreamWaitEvent(copy_[r][st.dest], started_[st.dest][0], 0), "cudaStreamWaitEvent (start)");
    }
  }
  const auto pack_and_send = [&](int i) {
    const int b = i % depth;
    const std::size_t len = static_cast<std::size_t>(ps_.bounds[i + 1] - ps_.bounds[i]) * eb;
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices_[r]);
      if (i >= depth)  // send buffer b is free once piece i − D's copies out of it are done
        for (const SendStep& st : sends_[r])
          check(cudaStreamWaitEvent(streams[r], copied_[r][st.dest][b], 0), "cudaStreamWaitEvent (copied)");
      launch_pack(kernels_[r], ps_, layouts_[r], i, in[r], scratch[r], streams[r]);
      check(cudaEventRecord(packed_[r][b], streams[r]), "cudaEventRecord (packed)");
    }
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices_[r]);
      const BitVec slot = sender_slot(plan_, r);
      for (const SendStep& st : sends_[r]) {
        cudaStream_t cs = copy_[r][st.dest];
        check(cudaStreamWaitEvent(cs, packed_[r][b], 0), "cudaStreamWaitEvent (packed)");
        // The receiver's slot b is free once it unpacked piece i − D (a no-op wait before its first record).
        check(cudaStreamWaitEvent(cs, unpacked_[st.dest][b], 0), "cudaStreamWaitEvent (unpacked)");
        const auto* from = static_cast<const unsigned char*>(scratch[r]) + layouts_[r].pack_at[b][st.chunk] * eb;
        auto* to = static_cast<unsigned char*>(scratch[st.dest]) + layouts_[st.dest].recv_at[b][slot] * eb;
        check(cudaMemcpyPeerAsync(to, devices_[st.dest], from, devices_[r], len, cs), "cudaMemcpyPeerAsync",
              fmt::format("piece {} of rank {} to rank {}, {} bytes", i, r, st.dest, len));
        check(cudaEventRecord(copied_[r][st.dest][b], cs), "cudaEventRecord (copied)");
      }
    }
  };
  const auto unpack = [&](int i) {
    const int b = i % depth;
    for (std::size_t r = 0; r < g; ++r)
      for (const SendStep& st : sends_[r]) {
        ScopedDevice on(devices_[st.dest]);
        check(cudaStreamWaitEvent(streams[st.dest], copied_[r][st.dest][b], 0), "cudaStreamWaitEvent (arrived)");
      }
    for (std::size_t d = 0; d < g; ++d) {
      ScopedDevice on(devices_[d]);
      launch_unpack(kernels_[d], ps_, layouts_[d], i, scratch[d], out[d], streams[d]);
      check(cudaEventRecord(unpacked_[d][b], streams[d]), "cudaEventRecord (unpacked)");
    }
  };
  for (int i = 0; i < std::min(depth, ps_.pieces); ++i) pack_and_send(i);
  for (int i = 0; i < ps_.pieces; ++i) {
    unpack(i);
    if (i + depth < ps_.pieces) pack_and_send(i + depth);
  }
  for (std::size_t r = 0; r < g; ++r) {  // the caller's stream ends after every copy out of the rank's scratch
    ScopedDevice on(devices_[r]);
    for (const SendStep& st : sends_[r])
      for (int b = 0; b < depth; ++b)
        check(cudaStreamWaitEvent(streams[r], copied_[r][st.dest][b], 0), "cudaStreamWaitEvent (copied)");
  }
}

}  // namespace bmmc::peer_detail
