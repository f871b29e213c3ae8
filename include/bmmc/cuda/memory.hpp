// Small RAII owners for device memory, streams and events, for tests, benchmarks and examples.
//
// The public permute API takes raw device pointers and a stream (CUB style), so these types are conveniences,
// not requirements. They are move-only; destructors never throw and ignore errors (a destructor running
// during CUDA teardown has nobody to report to). Every other failure throws CudaError naming the call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace bmmc {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// cudaMalloc(bytes); throws CudaError (e.g. out of memory). Zero bytes allocate nothing.
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const noexcept { return ptr_; }
  template <class T>
  T* as() const noexcept { return static_cast<T*>(ptr_); }
  std::size_t size() const noexcept { return bytes_; }

  /// Synchronous copies of min(bytes, size()) bytes; throw CudaError.
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  /// cudaMemset of every byte (e.g. 0xff to poison an output before a test writes it).
  void fill_bytes(unsigned char value);

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class Stream {
 public:
  /// cudaStreamCreateWithFlags(cudaStreamNonBlocking).
  Stream();
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const noexcept { return stream_; }
  operator cudaStream_t() const noexcept { return stream_; }
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  /// cudaEventCreate (timing enabled).
  Event();
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const noexcept { return event_; }
  void record(cudaStream_t stream = nullptr);
  void synchronize() const;
  /// Milliseconds from `start` to this event (both recorded and complete).
  float elapsed_ms_since(const Event& start) const;

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace bmmc
