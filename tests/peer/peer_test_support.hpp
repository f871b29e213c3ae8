// Shared by the peer-engine GPU tests: the device lists every test walks (ranks sharing GPU 0, then every GPU of
// the machine when there are two or more) and a device-wide wait.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "../dist/dist_test_support.hpp"  // test::swaps
#include "../dist/error_message.hpp"      // test::error_message
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"

namespace bmmc::test {

inline std::vector<std::vector<int>> device_lists() {
  std::vector<std::vector<int>> lists = {{0}, {0, 0}, {0, 0, 0, 0}};
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  for (int g = 2; g <= count; g *= 2) {
    std::vector<int> l;
    for (int d = 0; d < g; ++d) l.push_back(d);
    lists.push_back(l);
  }
  return lists;
}

inline void synchronize(const std::vector<int>& devices) {
  for (int d : devices) {
    ScopedDevice on(d);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
}

}  // namespace bmmc::test
