// The ordering of the NCCL copy-engine pipelines (see copy_pipeline.hpp).
#include "copy_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "copy_pipeline_order.hpp"

namespace bmmc::nccl_detail {

namespace {

cudaEvent_t new_event() {
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  return e;
}

}  // namespace

NcclCopyPipeline::NcclCopyPipeline(const RankContext& ctx, std::size_t lanes, int depth) : ctx_(ctx), depth_(depth) {
  if (depth < 2)  // one slot: a step's unpack would be enqueued before the barrier that says it has arrived
    throw std::invalid_argument(fmt::format("a copy pipeline of {} slots: expected at least 2", depth));
  ScopedDevice on(ctx.device);
  try {
    for (std::size_t l = 0; l < lanes; ++l) {
      check(cudaStreamCreateWithFlags(&copy_.emplace_back(), cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      copied_.emplace_back();
      for (int b = 0; b < depth; ++b) copied_.back().push_back(new_event());
    }
    check(cudaStreamCreateWithFlags(&barrier_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    start_ = new_event();
    for (int b = 0; b < depth; ++b) {
      packed_.push_back(new_event());
      unpacked_.push_back(new_event());
      arrived_.push_back(new_event());
    }
  } catch (...) {
    release();
    throw;
  }
}

NcclCopyPipeline::~NcclCopyPipeline() { release(); }

void NcclCopyPipeline::release() noexcept {
  try {
    ScopedDevice on(ctx_.device);
    for (cudaStream_t st : copy_)
      if (st) {
        cudaStreamSynchronize(st);  // the last call's copies are done before their stream goes
        cudaStreamDestroy(st);
      }
    copy_.clear();
    if (barrier_) {
      cudaStreamSynchronize(barrier_);
      cudaStreamDestroy(barrier_);
      barrier_ = nullptr;
    }
    for (auto* events : {&packed_, &unpacked_, &arrived_}) {
      for (cudaEvent_t e : *events) cudaEventDestroy(e);
      events->clear();
    }
    for (auto& per_lane : copied_)
      for (cudaEvent_t e : per_lane) cudaEventDestroy(e);
    copied_.clear();
    if (start_) cudaEventDestroy(start_);
    start_ = nullptr;
  } catch (...) {  // a destructor must not throw; the device is gone anyway
  }
}

namespace {

// The CUDA side of enqueue_copy_pipeline: the pipeline's streams and events by name.
struct CudaPipeOps {
  const RankContext& ctx;
  cudaStream_t caller, barrier_stream;
  const std::vector<cudaStream_t>& copy_streams;
  cudaEvent_t start;
  const std::vector<cudaEvent_t>& packed;
  const std::vector<cudaEvent_t>& unpacked;
  const std::vector<cudaEvent_t>& arrived;
  const std::vector<std::vector<cudaEvent_t>>& copied;
  const std::function<void(int, cudaStream_t)>& pack_step;
  const std::function<CopyLane(int, std::size_t)>& copy_lane;
  const std::function<void(int, cudaStream_t)>& unpack_step;

  cudaStream_t stream(PipeStream s) const {
    switch (s.kind) {
      case PipeStream::Kind::Caller: return caller;
      case PipeStream::Kind::Barrier: return barrier_stream;
      case PipeStream::Kind::Copy: break;
    }
    return copy_streams[static_cast<std::size_t>(s.lane)];
  }
  cudaEvent_t event(const PipeEvent& e) const {
    const auto b = static_cast<std::size_t>(e.slot);
    switch (e.kind) {
      case PipeEvent::Kind::Start: return start;
      case PipeEvent::Kind::Packed: return packed[b];
      case PipeEvent::Kind::Unpacked: return unpacked[b];
      case PipeEvent::Kind::Arrived: return arrived[b];
      case PipeEvent::Kind::Copied: break;
    }
    return copied[static_cast<std::size_t>(e.lane)][b];
  }
  void wait(PipeStream s, const PipeEvent& e, const char* call) const {
    check(cudaStreamWaitEvent(stream(s), event(e), 0), call);
  }
  void record(const PipeEvent& e, PipeStream s, const char* call) const { check(cudaEventRecord(event(e), stream(s)), call); }
  void barrier(PipeStream s) const { ctx.barrier(stream(s)); }
  void pack(int step, PipeStream s) const { pack_step(step, stream(s)); }
  void copy(int step, int lane, PipeStream s) const {
    const CopyLane c = copy_lane(step, static_cast<std::size_t>(lane));
    if (c.bytes)
      check(cudaMemcpyAsync(c.to, c.from, c.bytes, cudaMemcpyDeviceToDevice, stream(s)), "cudaMemcpyAsync",
            fmt::format("step {} of rank {}, lane {}, {} bytes", step, ctx.rank, lane, c.bytes));
  }
  void unpack(int step, PipeStream s) const { unpack_step(step, stream(s)); }
};

}  // namespace

void NcclCopyPipeline::run(int count, cudaStream_t stream, const std::function<void(int, cudaStream_t)>& pack,
                           const std::function<CopyLane(int, std::size_t)>& copy,
                           const std::function<void(int, cudaStream_t)>& unpack) const {
  CudaPipeOps ops{ctx_, stream, barrier_, copy_, start_, packed_, unpacked_, arrived_, copied_, pack, copy, unpack};
  enqueue_copy_pipeline(copy_.size(), depth_, count, ops);
}

}  // namespace bmmc::nccl_detail
