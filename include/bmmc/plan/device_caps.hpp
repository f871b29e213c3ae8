// DeviceCaps: the few facts about a GPU that the planner needs, as a plain struct (no CUDA header).
//
// The CUDA runtime fills it from cudaGetDeviceProperties (bmmc/cuda/device.hpp); tests and the offline
// generator use default_caps(), an H100-like device, so that planning stays a pure function of its inputs.
#pragma once

#include <string>

namespace bmmc {

struct DeviceCaps {
  std::string name = "sm_90 (default caps)";
  int arch = 90;                          ///< compute capability major*10 + minor
  int sm_count = 132;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_shared_per_block = 227 * 1024;  ///< opt-in limit (cudaDevAttrMaxSharedMemoryPerBlockOptin)
  int max_shared_per_sm = 228 * 1024;
  long long l2_bytes = 50LL * 1024 * 1024;

  friend bool operator==(const DeviceCaps&, const DeviceCaps&) = default;
};

/// H100-like defaults for offline generation and tests.
inline DeviceCaps default_caps() { return DeviceCaps{}; }

}  // namespace bmmc
