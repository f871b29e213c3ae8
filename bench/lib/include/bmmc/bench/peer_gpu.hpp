// Benchmark of the single-process multi-GPU engines (bmmc/peer/peer_permuter.hpp) beside their bounds, all
// measured in the same run: every device copying its own slice (cudaMemcpy D2D, concurrently: the local bound),
// the peer-copy bound (each rank sends exactly the bytes that must leave it, to their destinations, with
// cudaMemcpyPeerAsync, all ranks at once), then the push and copy engines. Times are host wall clock from all
// devices idle to all devices done (median of reps); every engine row is verified on the devices, each
// destination reading the sources through peer pointers (or the host, where there is no peer access).
#pragma once

#include <string>
#include <vector>

#include "bmmc/bench/gpu.hpp"
#include "bmmc/core/bmmc.hpp"

namespace bmmc {

struct PeerBenchRow {
  std::string variant;        ///< local-memcpy, peer-copy-bound, push, copy, in-place
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double crossing_gb = 0;     ///< bytes that must cross between ranks (all ranks), GB
  double pct_bound = 0;       ///< peer-copy bound median / this median × 100
  double first_use_ms = 0;
  bool verified = true;
  std::string note;           ///< the engine's fallback reason, the plan's pass count
};

/// `bmmc` on 2^n elements over devices.size() ranks (a device may repeat: ranks then share it); an involution
/// also in place (PeerSwapPermuter, row "in-place").
std::vector<PeerBenchRow> bench_peer(const Bmmc& bmmc, int elem_bytes, const std::vector<int>& devices, int reps);

}  // namespace bmmc
