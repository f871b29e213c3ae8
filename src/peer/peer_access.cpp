// Peer access between the GPUs of one process (see bmmc/peer/peer_access.hpp).
#include "bmmc/peer/peer_access.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <mutex>
#include <set>
#include <utility>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"

namespace bmmc {

std::string peer_obstacle(const std::vector<int>& devices) {
  for (int a : devices)
    for (int b : devices)
      if (a != b) {
        int can = 0;
        check(cudaDeviceCanAccessPeer(&can, a, b), "cudaDeviceCanAccessPeer");
        if (!can) return fmt::format("device {} cannot map device {}'s memory (no peer access)", a, b);
      }
  return "";
}

void enable_peer_access(const std::vector<int>& devices) {
  // Each pair is enabled once per process: asking again returns cudaErrorPeerAccessAlreadyEnabled, harmless
  // but an API error that compute-sanitizer reports (28 of them in one run of the peer tests).
  static std::mutex lock;
  static std::set<std::pair<int, int>> enabled;
  const std::lock_guard<std::mutex> hold(lock);
  const std::set<int> distinct(devices.begin(), devices.end());
  for (int a : distinct) {
    ScopedDevice on(a);
    for (int b : distinct)
      if (a != b && !enabled.count({a, b})) {
        const cudaError_t st = cudaDeviceEnablePeerAccess(b, 0);
        if (st == cudaErrorPeerAccessAlreadyEnabled) {
          (void)cudaGetLastError();  // enabled by someone else in this process
        } else {
          check(st, "cudaDeviceEnablePeerAccess", fmt::format("device {} mapping device {}", a, b));
        }
        enabled.insert({a, b});
      }
  }
}

}  // namespace bmmc
