// Launching a kernel loaded by the KernelCache, with the one piece of setup a launch may need.
//
// Tiles of the one-pass plan often want more than the 48 KiB of dynamic shared memory a kernel gets by default;
// beyond that the CUDA runtime requires an explicit opt-in (cudaFuncAttributeMaxDynamicSharedMemorySize) per
// kernel and device. launch() does the opt-in once per (kernel, device, size) and otherwise is a bare
// cudaLaunchKernel: asynchronous on the given stream, no device-wide synchronisation (docs/DESIGN.md §5).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "bmmc/cuda/kernel_cache.hpp"

namespace bmmc {

/// Dynamic shared memory any kernel may use without opting in.
inline constexpr std::size_t kDefaultDynamicSharedLimit = 48 * 1024;

/// Launches `kernel` with `args` (an array of pointers to each argument, as for cudaLaunchKernel). Throws
/// CudaError naming the kernel and the geometry when the opt-in, the launch, or the launch check fails.
void launch(const Kernel& kernel, dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
            void** args);

/// Loads `kernel` into the current device's context now and grants it `shared_bytes` of dynamic shared memory, so
/// that later launches of it on this device load nothing. Kernels from the cache are loaded lazily, at their first
/// launch on each device; a lazy load can wait for the device's running kernels, which deadlocks when those are
/// collective kernels (NCCL) waiting for a rank whose thread is itself blocked in a load (seen on two H100s with
/// one thread per rank). Engines that launch between collectives prepare every kernel when they are built.
/// Throws CudaError like launch().
void prepare_launch(const Kernel& kernel, std::size_t shared_bytes);

}  // namespace bmmc
