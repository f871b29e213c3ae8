// Buffer checks and stream ordering for the peer engines (see rank_buffers.hpp).
#include "rank_buffers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/dist/dist_plan.hpp"

namespace bmmc::peer_detail {

// Events of one call, on the device they belong to; destroyed when the call has enqueued everything (CUDA
// releases an event's resources once the work it waits for completes).
CallEvents::CallEvents(const std::vector<int>& devices) : devices_(devices), events_(devices.size(), nullptr) {
  for (std::size_t r = 0; r < devices.size(); ++r) {
    ScopedDevice on(devices[r]);
    check(cudaEventCreateWithFlags(&events_[r], cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }
}

CallEvents::~CallEvents() {
  for (std::size_t r = 0; r < events_.size(); ++r)
    if (events_[r]) try {
        ScopedDevice on(devices_[r]);
        cudaEventDestroy(events_[r]);
      } catch (...) {  // a destructor must not throw; the device is gone anyway
      }
}

void CallEvents::barrier(const std::vector<cudaStream_t>& streams) const {
  const std::size_t g = devices_.size();
  for (std::size_t r = 0; r < g; ++r) {
    ScopedDevice on(devices_[r]);
    check(cudaEventRecord(events_[r], streams[r]), "cudaEventRecord");
  }
  for (std::size_t r = 0; r < g; ++r) {
    ScopedDevice on(devices_[r]);
    for (std::size_t d = 0; d < g; ++d)
      if (d != r) check(cudaStreamWaitEvent(streams[r], events_[d], 0), "cudaStreamWaitEvent");
  }
}

void RankBufferCheck::add(const void* p, std::size_t r, const char* what, std::size_t bytes) {
  const std::string name = fmt::format("{} of rank {}", what, r);
  if (!p) throw std::invalid_argument(fmt::format("the {} is null", name));
  if (reinterpret_cast<std::uintptr_t>(p) % alignment_)
    throw std::invalid_argument(fmt::format("the {} ({}) is not aligned to {} bytes", name, p, alignment_));
  check_device_pointer(p, name.c_str());
  if (const int d = pointer_device(p); d != devices_[r])
    throw std::invalid_argument(fmt::format("the {} lives on device {}, but rank {} is device {}", name, d, r, devices_[r]));
  ranges_.push_back({reinterpret_cast<std::uintptr_t>(p), bytes ? bytes : bytes_, name});
}

void RankBufferCheck::check_disjoint() {
  std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) { return a.start < b.start; });
  // Sorted by start, a range overlaps an earlier one iff it starts before the furthest end so far.
  std::size_t reach = 0;  // the range reaching furthest so far
  for (std::size_t i = 1; i < ranges_.size(); ++i) {
    const Range& far = ranges_[reach];
    if (ranges_[i].start < far.start + far.bytes)
      throw std::invalid_argument(
          far.bytes == ranges_[i].bytes
              ? fmt::format("the {} overlaps the {} ({} bytes each); every buffer must be disjoint", ranges_[i].name,
                            far.name, far.bytes)
              : fmt::format("the {} ({} bytes) overlaps the {} ({} bytes); every buffer must be disjoint",
                            ranges_[i].name, ranges_[i].bytes, far.name, far.bytes));
    if (ranges_[i].start + ranges_[i].bytes > far.start + far.bytes) reach = i;
  }
}

int rank_bits_of_devices(const std::vector<int>& devices, int n) {
  const int g = dist_rank_bits(devices.size(), n);
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  for (int d : devices)
    if (d < 0 || d >= count)
      throw std::invalid_argument(fmt::format("device {} does not exist: this machine has {} CUDA device(s)", d, count));
  return g;
}

void stream_waits(int device, cudaStream_t to, cudaStream_t from) {
  ScopedDevice on(device);
  cudaEvent_t e;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  check(cudaEventRecord(e, from), "cudaEventRecord");
  check(cudaStreamWaitEvent(to, e, 0), "cudaStreamWaitEvent");
  check(cudaEventDestroy(e), "cudaEventDestroy");
}

std::vector<cudaStream_t> rank_streams(const std::vector<cudaStream_t>& streams, std::size_t ranks) {
  return streams.empty() ? std::vector<cudaStream_t>(ranks, nullptr) : streams;
}

}  // namespace bmmc::peer_detail
