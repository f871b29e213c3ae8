// The ordering of the NCCL copy-engine pipelines (see copy_pipeline.hpp).
#include "copy_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/dist/ring.hpp"

namespace bmmc::nccl_detail {

namespace {

cudaEvent_t new_event() {
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  return e;
}

}  // namespace

NcclCopyPipeline::NcclCopyPipeline(const RankContext& ctx, std::size_t lanes, int depth) : ctx_(ctx), depth_(depth) {
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

void NcclCopyPipeline::run(int count, cudaStream_t stream, const std::function<void(int, cudaStream_t)>& pack,
                           const std::function<CopyLane(int, std::size_t)>& copy,
                           const std::function<void(int, cudaStream_t)>& unpack) const {
  const int depth = depth_;
  check(cudaEventRecord(start_, stream), "cudaEventRecord (start)");
  check(cudaStreamWaitEvent(barrier_, start_, 0), "cudaStreamWaitEvent (start)");
  for (cudaStream_t cs : copy_) check(cudaStreamWaitEvent(cs, start_, 0), "cudaStreamWaitEvent (start)");
  // arrive(j): step j has landed everywhere, and step j + 1 − D has been unpacked everywhere.
  const auto arrive = [&](int j) {
    const int b = j % depth;
    for (const auto& per_lane : copied_) check(cudaStreamWaitEvent(barrier_, per_lane[b], 0), "cudaStreamWaitEvent");
    if (j + 1 - depth >= 0)
      check(cudaStreamWaitEvent(barrier_, unpacked_[(j + 1) % depth], 0), "cudaStreamWaitEvent (unpacked)");
    ctx_.barrier(barrier_);
    check(cudaEventRecord(arrived_[b], barrier_), "cudaEventRecord (arrived)");
  };
  // Send j: step j's pack and copies, after arrive(j − 1), which frees the slot the copies land in.
  const auto send = [&](const RingStep& s) {
    const int j = s.step, b = s.slot;
    if (j >= 1) arrive(j - 1);
    pack(j, stream);
    check(cudaEventRecord(packed_[b], stream), "cudaEventRecord (packed)");
    for (std::size_t l = 0; l < copy_.size(); ++l) {
      const CopyLane c = copy(j, l);
      check(cudaStreamWaitEvent(copy_[l], packed_[b], 0), "cudaStreamWaitEvent (packed)");
      if (j >= 1) check(cudaStreamWaitEvent(copy_[l], arrived_[(j - 1) % depth], 0), "cudaStreamWaitEvent (slot free)");
      if (c.bytes)
        check(cudaMemcpyAsync(c.to, c.from, c.bytes, cudaMemcpyDeviceToDevice, copy_[l]), "cudaMemcpyAsync",
              fmt::format("step {} of rank {}, lane {}, {} bytes", j, ctx_.rank, l, c.bytes));
      check(cudaEventRecord(copied_[l][b], copy_[l]), "cudaEventRecord (copied)");
    }
  };
  // Receive i: step i's unpack once it has arrived everywhere.
  const auto receive = [&](const RingStep& s) {
    const int i = s.step;
    if (i == count - 1) arrive(i);  // every other step's arrival came with the next step's copies
    check(cudaStreamWaitEvent(stream, arrived_[s.slot], 0), "cudaStreamWaitEvent (arrived)");
    unpack(i, stream);
    check(cudaEventRecord(unpacked_[s.slot], stream), "cudaEventRecord (unpacked)");
  };
  for_each_ring_step(count, depth, [&](const RingStep& s) { s.kind == RingStep::Kind::Send ? send(s) : receive(s); });
}

}  // namespace bmmc::nccl_detail
