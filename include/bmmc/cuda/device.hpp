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

}  // namespace bmmc
