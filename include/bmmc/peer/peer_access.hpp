// Peer access between the GPUs of one process: whether every device of a list can map every other's memory,
// and turning that mapping on. The push engine needs it; the copy engine and the benchmarks use it where it
// exists, because without it cudaMemcpyPeerAsync is staged through host memory, a
// fraction of what NVLink carries.
#pragma once

#include <string>
#include <vector>

namespace bmmc {

/// The reason some device of the list cannot map another's memory, or "" when every pair can.
std::string peer_obstacle(const std::vector<int>& devices);
/// cudaDeviceEnablePeerAccess between every pair of distinct devices (already enabled is fine); throws CudaError.
void enable_peer_access(const std::vector<int>& devices);

}  // namespace bmmc
