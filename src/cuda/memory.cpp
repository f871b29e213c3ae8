#include "bmmc/cuda/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "bmmc/cuda/error.hpp"

namespace bmmc {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  check(cudaMalloc(&ptr_, bytes), fmt::format("cudaMalloc(&p, {})", bytes).c_str());
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ && cudaFree(ptr_) != cudaSuccess) (void)cudaGetLastError();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer old(std::move(*this));
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  bytes = std::min(bytes, bytes_);
  if (bytes == 0) return;
  check(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice),
        fmt::format("cudaMemcpy(device, host, {}, HostToDevice)", bytes).c_str());
}

void DeviceBuffer::download(void* host, std::size_t bytes) const {
  bytes = std::min(bytes, bytes_);
  if (bytes == 0) return;
  check(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost),
        fmt::format("cudaMemcpy(host, device, {}, DeviceToHost)", bytes).c_str());
}

void DeviceBuffer::fill_bytes(unsigned char value) {
  if (bytes_ == 0) return;
  check(cudaMemset(ptr_, value, bytes_), fmt::format("cudaMemset(p, {:#x}, {})", value, bytes_).c_str());
}

Stream::Stream() { BMMC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

Stream::~Stream() {
  if (stream_ && cudaStreamDestroy(stream_) != cudaSuccess) (void)cudaGetLastError();
}

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Stream old(std::move(*this));
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::synchronize() const { BMMC_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

Event::Event() { BMMC_CUDA_CHECK(cudaEventCreate(&event_)); }

Event::~Event() {
  if (event_ && cudaEventDestroy(event_) != cudaSuccess) (void)cudaGetLastError();
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Event old(std::move(*this));
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record(cudaStream_t stream) { BMMC_CUDA_CHECK(cudaEventRecord(event_, stream)); }

void Event::synchronize() const { BMMC_CUDA_CHECK(cudaEventSynchronize(event_)); }

float Event::elapsed_ms_since(const Event& start) const {
  float ms = 0;
  BMMC_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
  return ms;
}

}  // namespace bmmc
