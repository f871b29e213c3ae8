#include "bmmc/cuda/device.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include <stdexcept>
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

namespace {
// cudaPointerGetAttributes of a pointer the runtime has never seen reports it as unregistered host memory;
// errors (no driver) are cleared so that later checks stay clean.
bool attributes(const void* p, cudaPointerAttributes& attr) noexcept {
  if (p == nullptr || !gpu_available()) return false;
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return true;
}
}  // namespace

bool is_device_pointer(const void* p) noexcept {
  cudaPointerAttributes attr{};
  return attributes(p, attr) && (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged);
}

int pointer_device(const void* p) noexcept {
  cudaPointerAttributes attr{};
  if (!attributes(p, attr) || (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)) return -1;
  return attr.device;
}

ScopedDevice::ScopedDevice(int device) {
  if (device < 0) return;
  if (!gpu_available()) throw std::invalid_argument(fmt::format("CUDA device {} does not exist: no usable GPU", device));
  // On the hot path the device is already current: one cheap query, no count (permute() calls this per call).
  BMMC_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ == device) {
    previous_ = -1;  // nothing to restore
    return;
  }
  if (cudaSetDevice(device) != cudaSuccess) {
    (void)cudaGetLastError();
    int count = 0;
    (void)cudaGetDeviceCount(&count);
    previous_ = -1;
    throw std::invalid_argument(fmt::format("CUDA device {} does not exist (this machine has {})", device, count));
  }
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

}  // namespace bmmc
