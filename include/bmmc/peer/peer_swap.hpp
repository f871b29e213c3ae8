// In place across the GPUs of one process (docs/DESIGN.md §9.6): an involution f of an array split over G = 2^g
// devices (rank r = devices[r] holds elements [r·2^m, (r+1)·2^m)) with no output buffer and no scratch —
// cuStateVec's multi-device index-bit swap (custatevecMultiDeviceSwapIndexBits), for any involutive BMMC.
//
// The plan is a RankSwapPlan (bmmc/dist/rank_swap_plan.hpp): each rank's threads swap pairs of 16-byte vectors
// {x, f'(x)} wherever they live, reading and writing the other rank's memory through peer pointers, between a
// local in-place swap Q on every rank (only when f moves low bits: a rank bit with local bit 0, say). Calls
// are stream-ordered like PeerPermuter's (every stream waits for every other at the start and around the
// cross-rank pass). Needs peer access between every pair of distinct devices (throws otherwise: permute out of
// place with PeerPermuter, whose copy engine needs none). Example, the rank bit with local bit 0 of a 2^31
// complex64 state vector over 2 GPUs:
//   bmmc::PeerSwapPermuter swap(bmmc::parse_spec("swap:0,30", 31), 8, {0, 1});
//   swap({sv0, sv1});
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/rank_swap_plan.hpp"

namespace bmmc {

class PeerSwapPermuter {
 public:
  /// Plans involution `f` over devices.size() ranks, enables peer access and compiles every kernel. Throws
  /// std::invalid_argument for a non-involution, a bad device list or geometry, or missing peer access.
  PeerSwapPermuter(const Bmmc& f, int elem_bytes, std::vector<int> devices, const GpuOptions& options = {});
  ~PeerSwapPermuter();
  PeerSwapPermuter(PeerSwapPermuter&&) noexcept;
  PeerSwapPermuter& operator=(PeerSwapPermuter&&) noexcept;

  /// Permutes data[r] (2^m elements of device memory on devices[r], aligned to alignment(), disjoint) in place.
  /// Everything is checked before the first enqueue.
  void operator()(const std::vector<void*>& data, const std::vector<cudaStream_t>& streams = {}) const;

  const RankSwapPlan& plan() const noexcept;
  std::size_t local_bytes() const noexcept;
  std::size_t alignment() const noexcept;
  const std::string& source() const noexcept;  ///< the cross-rank kernel's source

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace bmmc
