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

}  // namespace bmmc
