// A ring pipeline on the copy engines of one process (see copy_ring.hpp).
#include "copy_ring.hpp"

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/dist/ring.hpp"

namespace bmmc::peer_detail {

namespace {

cudaEvent_t new_event() {  // on the current device
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  return e;
}

}  // namespace

PeerCopyRing::PeerCopyRing(const std::vector<int>& devices, std::vector<std::vector<std::size_t>> lanes, int depth,
                           bool first_round_waits)
    : devices_(devices), lanes_(std::move(lanes)), depth_(depth), first_round_waits_(first_round_waits) {
  check_ring(0, depth);
  const std::size_t g = devices_.size();
  try {
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices_[r]);
      copy_.emplace_back();
      copied_.emplace_back();
      for (std::size_t l = 0; l < lanes_[r].size(); ++l) {
        check(cudaStreamCreateWithFlags(&copy_[r].emplace_back(), cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        copied_[r].emplace_back();
        for (int b = 0; b < depth; ++b) copied_[r][l].push_back(new_event());
      }
      packed_.emplace_back();
      unpacked_.emplace_back();
      for (int b = 0; b < depth; ++b) {
        packed_[r].push_back(new_event());
        unpacked_[r].push_back(new_event());
      }
    }
  } catch (...) {
    release();
    throw;
  }
}

PeerCopyRing::~PeerCopyRing() { release(); }

void PeerCopyRing::release() noexcept {
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
    for (auto* events : {&packed_, &unpacked_})
      for (auto& per_rank : *events) {
        for (cudaEvent_t e : per_rank) cudaEventDestroy(e);
        per_rank.clear();
      }
    for (auto& per_rank : copied_)
      for (auto& per_lane : per_rank) {
        for (cudaEvent_t e : per_lane) cudaEventDestroy(e);
        per_lane.clear();
      }
  } catch (...) {  // a destructor must not throw; the device is gone anyway
  }
}

void PeerCopyRing::run(int count, const std::vector<cudaStream_t>& compute, const Local& pack, const Copy& copy,
                       const Local& unpack) const {
  const std::size_t g = devices_.size();
  const auto send = [&](const RingStep& s) {
    const int b = s.slot;
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices_[r]);
      if (s.previous >= 0)  // r's send side of slot b is free once the copies of step i − D out of it are done
        for (const auto& per_lane : copied_[r])
          check(cudaStreamWaitEvent(compute[r], per_lane[b], 0), "cudaStreamWaitEvent (copied)");
      pack(r, s.step, compute[r]);
      check(cudaEventRecord(packed_[r][b], compute[r]), "cudaEventRecord (packed)");
    }
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices_[r]);
      for (std::size_t l = 0; l < lanes_[r].size(); ++l) {
        const std::size_t d = lanes_[r][l];
        cudaStream_t cs = copy_[r][l];
        check(cudaStreamWaitEvent(cs, packed_[r][b], 0), "cudaStreamWaitEvent (packed)");
        // The receiver's slot b is free once it unpacked step i − D.
        if (s.previous >= 0 || first_round_waits_)
          check(cudaStreamWaitEvent(cs, unpacked_[d][b], 0), "cudaStreamWaitEvent (unpacked)");
        copy(r, l, s.step, cs);
        check(cudaEventRecord(copied_[r][l][b], cs), "cudaEventRecord (copied)");
      }
    }
  };
  const auto receive = [&](const RingStep& s) {
    const int b = s.slot;
    for (std::size_t r = 0; r < g; ++r)
      for (std::size_t l = 0; l < lanes_[r].size(); ++l) {
        const std::size_t d = lanes_[r][l];
        ScopedDevice on(devices_[d]);
        check(cudaStreamWaitEvent(compute[d], copied_[r][l][b], 0), "cudaStreamWaitEvent (arrived)");
      }
    for (std::size_t d = 0; d < g; ++d) {
      ScopedDevice on(devices_[d]);
      unpack(d, s.step, compute[d]);
      check(cudaEventRecord(unpacked_[d][b], compute[d]), "cudaEventRecord (unpacked)");
    }
  };
  for_each_ring_step(count, depth_, [&](const RingStep& s) { s.kind == RingStep::Kind::Send ? send(s) : receive(s); });
}

void PeerCopyRing::wait_for_copies(std::size_t rank, cudaStream_t stream) const {
  ScopedDevice on(devices_[rank]);
  for (const auto& per_lane : copied_[rank])
    for (cudaEvent_t e : per_lane) check(cudaStreamWaitEvent(stream, e, 0), "cudaStreamWaitEvent (copied)");
}

}  // namespace bmmc::peer_detail
