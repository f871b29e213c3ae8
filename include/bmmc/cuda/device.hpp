// Which GPU we run on: whether there is one at all, and the facts the planner needs (DeviceCaps).
//
// gpu_available() is the single gate every GPU path and GPU test goes through; it must answer false, quietly,
// on machines without a GPU or without a driver (CI, laptops), because bmmc binaries link only the static CUDA
// runtime and NVRTC and are expected to start and run their CPU paths anywhere. device_caps() fills the plain
// DeviceCaps struct of bmmc/plan so that planning itself never touches CUDA.
#pragma once

#include "bmmc/plan/device_caps.hpp"

namespace bmmc {

/// True only if the CUDA runtime initialises and reports at least one device. Never throws, never prints;
/// the answer is computed once per process (devices do not appear while a process runs).
bool gpu_available() noexcept;

/// The current device (cudaGetDevice), or throws CudaError.
int current_device();

/// Compute capability major*10 + minor of `device` (-1: current) from two attribute queries — cheaper than
/// device_caps() on hot paths such as KernelCache::get(source, name). Throws CudaError.
int device_arch(int device = -1);

/// Capabilities of `device` (-1: the current device). Throws CudaError (e.g. no GPU, bad ordinal).
DeviceCaps device_caps(int device = -1);

/// Is `p` device or managed memory of the CUDA runtime (false for host memory, pinned or not, and for
/// null)? Never throws; false when no GPU is usable.
bool is_device_pointer(const void* p) noexcept;

/// The device that owns device or managed pointer `p`, or -1 when `p` is not device memory.
int pointer_device(const void* p) noexcept;

/// Makes `device` current for the scope and restores the previous current device at its end; device < 0
/// changes nothing. Throws std::invalid_argument for an ordinal that does not exist.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace bmmc
