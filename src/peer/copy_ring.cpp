// A ring pipeline on the copy engines of one process (see copy_ring.hpp).
#include "copy_ring.hpp"

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/dist/ring.hpp"
#include "copy_ring_order.hpp"

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

namespace {

// The CUDA side of enqueue_copy_ring: the ring's streams and events by name.
struct CudaRingOps {
  const std::vector<int>& devices;
  const std::vector<cudaStream_t>& compute;
  const std::vector<std::vector<cudaStream_t>>& copy_streams;
  const std::vector<std::vector<cudaEvent_t>>& packed;
  const std::vector<std::vector<cudaEvent_t>>& unpacked;
  const std::vector<std::vector<std::vector<cudaEvent_t>>>& copied;
  const PeerCopyRing::Local& pack_step;
  const PeerCopyRing::Copy& copy_step;
  const PeerCopyRing::Local& unpack_step;

  ScopedDevice on(std::size_t rank) const { return ScopedDevice(devices[rank]); }
  cudaStream_t stream(RingStream s) const {
    return s.lane < 0 ? compute[s.rank] : copy_streams[s.rank][static_cast<std::size_t>(s.lane)];
  }
  cudaEvent_t event(const RingEvent& e) const {
    switch (e.kind) {
      case RingEvent::Kind::Packed: return packed[e.rank][static_cast<std::size_t>(e.slot)];
      case RingEvent::Kind::Unpacked: return unpacked[e.rank][static_cast<std::size_t>(e.slot)];
      case RingEvent::Kind::Copied: break;
    }
    return copied[e.rank][static_cast<std::size_t>(e.lane)][static_cast<std::size_t>(e.slot)];
  }
  void wait(RingStream s, const RingEvent& e, const char* call) const {
    check(cudaStreamWaitEvent(stream(s), event(e), 0), call);
  }
  void record(const RingEvent& e, RingStream s, const char* call) const { check(cudaEventRecord(event(e), stream(s)), call); }
  void pack(std::size_t r, int step, RingStream s) const { pack_step(r, step, stream(s)); }
  void copy(std::size_t r, int lane, int step, RingStream s) const {
    copy_step(r, static_cast<std::size_t>(lane), step, stream(s));
  }
  void unpack(std::size_t r, int step, RingStream s) const { unpack_step(r, step, stream(s)); }
};

}  // namespace

void PeerCopyRing::run(int count, const std::vector<cudaStream_t>& compute, const Local& pack, const Copy& copy,
                       const Local& unpack) const {
  CudaRingOps ops{devices_, compute, copy_, packed_, unpacked_, copied_, pack, copy, unpack};
  enqueue_copy_ring(lanes_, depth_, count, first_round_waits_, ops);
}

void PeerCopyRing::wait_for_copies(std::size_t rank, cudaStream_t stream) const {
  ScopedDevice on(devices_[rank]);
  for (const auto& per_lane : copied_[rank])
    for (cudaEvent_t e : per_lane) check(cudaStreamWaitEvent(stream, e, 0), "cudaStreamWaitEvent (copied)");
}

}  // namespace bmmc::peer_detail
