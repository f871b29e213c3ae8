// Benchmark of the single-process multi-GPU engines (bmmc/distributed.hpp, a DeviceGroup) beside their bounds and
// anchors, all measured in the same run: every device copying its own slice (cudaMemcpy D2D, concurrently: the
// local bound), the peer-copy bound (each rank sends exactly the bytes that must leave it, to their
// destinations, with cudaMemcpyPeerAsync, one stream per direction, all at once), NCCL all-to-all of the same
// chunks (grouped ncclSend/ncclRecv over ncclCommInitAll's communicators), the push, exchange and pieces
// engines, for an involution the in-place mode, and for bit swaps of 8- or 16-byte elements NVIDIA cuStateVec's
// custatevecMultiDeviceSwapIndexBits. NCCL and cuStateVec are opened with dlopen (bench/lib/vendor_libs.hpp):
// without them their rows carry a note saying why. The data is filled on the devices. Times are host wall
// clock from all devices idle to all devices done (median of reps); every row that moves data is verified on
// the devices, each destination reading the sources through peer pointers.
#pragma once

#include <string>
#include <vector>

#include "bmmc/bench/gpu.hpp"
#include "bmmc/core/bmmc.hpp"

namespace bmmc {

struct PeerBenchRow {
  std::string variant;        ///< local-memcpy, peer-copy-bound, nccl-alltoall, push, exchange, pieces, in-place
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double crossing_gb = 0;     ///< bytes that must cross between ranks (all ranks), GB
  double pct_bound = 0;       ///< the faster of the peer-copy and NCCL all-to-all rows / this median × 100
  double first_use_ms = 0;
  bool verified = true;
  std::string note;           ///< the engine's fallback reason, the plan's pass count
};

/// `bmmc` on 2^n elements over devices.size() ranks (a device may repeat: ranks then share it); an involution
/// also in place (rows "in-place" and, where it is staged, "in-place-push").
std::vector<PeerBenchRow> bench_peer(const Bmmc& bmmc, int elem_bytes, const std::vector<int>& devices, int reps);

}  // namespace bmmc
