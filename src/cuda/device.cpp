#include "bmmc/cuda/device.hpp"

#include <cuda_runtime_api.h>

#include <string>

#include "bmmc/cuda/error.hpp"

namespace bmmc {

bool gpu_available() noexcept {
  // Without a driver cudart_static fails to dlopen libcuda and returns cudaErrorInsufficientDriver (or
  // cudaErrorNoDevice); neither is sticky, and reading the last error clears it so later checks stay clean.
  static const bool available = [] {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return count >= 1;
  }();
  return available;
}

int current_device() {
  int device = 0;
  BMMC_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

namespace {
int attribute(cudaDeviceAttr attr, int device, const char* what) {
  int value = 0;
  check(cudaDeviceGetAttribute(&value, attr, device), what);
  return value;
}
}  // namespace

int device_arch(int device) {
  if (device < 0) device = current_device();
  const int major = attribute(cudaDevAttrComputeCapabilityMajor, device,
                              "cudaDeviceGetAttribute(cudaDevAttrComputeCapabilityMajor)");
  const int minor = attribute(cudaDevAttrComputeCapabilityMinor, device,
                              "cudaDeviceGetAttribute(cudaDevAttrComputeCapabilityMinor)");
  return major * 10 + minor;
}

DeviceCaps device_caps(int device) {
  if (device < 0) device = current_device();
  cudaDeviceProp prop{};
  BMMC_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceCaps caps;
  caps.name = prop.name;
  caps.arch = prop.major * 10 + prop.minor;
  caps.sm_count = prop.multiProcessorCount;
  caps.max_threads_per_block = prop.maxThreadsPerBlock;
  caps.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  // The opt-in limit is what a kernel can get after cudaFuncSetAttribute(MaxDynamicSharedMemorySize);
  // prop.sharedMemPerBlock is only the 48 KiB default.
  caps.max_shared_per_block = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device,
                                        "cudaDeviceGetAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin)");
  caps.max_shared_per_sm = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, device,
                                     "cudaDeviceGetAttribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor)");
  caps.l2_bytes = prop.l2CacheSize;
  return caps;
}

}  // namespace bmmc
