// Internal: an engine behind the distributed front door (bmmc/distributed.hpp: DistributedPermuter), not installed
// and not for callers outside the library; its own tests use it directly.
// In place across the GPUs of one process (docs/DESIGN.md §9.6): an involution f of an array split over G = 2^g
// devices (rank r = devices[r] holds elements [r·2^m, (r+1)·2^m)) with no output buffer and no scratch —
// cuStateVec's multi-device index-bit swap (custatevecMultiDeviceSwapIndexBits), for any involutive BMMC.
//
// The plan is a RankSwapPlan (bmmc/dist/rank_swap_plan.hpp): each rank's threads swap pairs of 16-byte vectors
// {x, f'(x)} wherever they live, reading and writing the other rank's memory through peer pointers, between a
// local in-place swap Q on every rank (only when f moves low bits: a rank bit with local bit 0, say). Calls
// are stream-ordered like PeerPermuter's (every stream waits for every other at the start and around the
// cross-rank pass). Needs peer access between every pair of distinct devices (throws otherwise: permute out of
// place with PeerPermuter, whose copy engine needs none). When f moves low bits and fixes the top local bits
// (the rank bit with local bit 0, say), the three passes give way to the staged path (dist/staged_swap_plan.hpp):
// chunk by chunk, two chunks in flight, through one of f_c's engines:
//  - Copy (the default): the pre-pass packs every rank's chunk into a send buffer, the copy engines move the
//    segments into the receivers' buffers, and the post-pass writes the chunk back in place (PeerPermuter's
//    copy_pre / copy_send / copy_post, pipelined: the copies of chunk c run while the SMs do the post-pass of
//    chunk c − 1 and the pre-pass of chunk c + 1; the transfers need no SMs). 4 chunks of staging per device
//    (at most 4 GiB).
//  - Push: the push engine pushes every rank's chunk into a staging buffer and finishes it back in place
//    (PeerPermuter::permute_in_place), one stream per chunk in flight. 2 chunks of staging per device. The push
//    needs every SM to keep the links busy, so a finish cannot run beside it (docs/DESIGN.md §9.6).
// The staging is allocated once (staging_bytes()). Example, the rank bit with local bit 0 of a 2^31 complex64
// state vector over 2 GPUs:
//   bmmc::PeerSwapPermuter swap(bmmc::parse_spec("swap:0,30", 31), 8, {0, 1});
//   swap({sv0, sv1});
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/rank_swap_plan.hpp"
#include "bmmc/dist/staged_swap_plan.hpp"
#include "peer_permuter.hpp"

namespace bmmc {

class PeerSwapPermuter {
 public:
  /// The staged path's chunk bounds (dist/tuning.hpp).
  static constexpr std::size_t kMaxStagingChunk = kMaxStagingChunkBytes;

  /// Plans involution `f` over devices.size() ranks, enables peer access and compiles every kernel. Throws
  /// std::invalid_argument for a non-involution, a bad device list or geometry, or missing peer access.
  /// max_staging_chunk bounds the staged path's chunks (tests make it small to run many chunks); staged_engine
  /// picks the staged path's engine (Auto: Copy; Push: the push engine where f_c's push has a finish).
  PeerSwapPermuter(const Bmmc& f, int elem_bytes, std::vector<int> devices, const GpuOptions& options = {},
                   std::size_t max_staging_chunk = kMaxStagingChunk, PeerEngine staged_engine = PeerEngine::Auto);
  ~PeerSwapPermuter();
  PeerSwapPermuter(PeerSwapPermuter&&) noexcept;
  PeerSwapPermuter& operator=(PeerSwapPermuter&&) noexcept;

  /// Permutes data[r] (2^m elements of device memory on devices[r], aligned to alignment(), disjoint) in place.
  /// Everything is checked before the first enqueue.
  void operator()(const std::vector<void*>& data, const std::vector<cudaStream_t>& streams = {}) const;

  const RankSwapPlan& plan() const noexcept;
  /// The chunked plan when the staged path runs (then plan() is the path it replaced), else nullopt.
  const std::optional<StagedSwapPlan>& staged_plan() const noexcept;
  /// Device memory this permuter holds per device for the staged path (2 or 4 chunks), 0 otherwise.
  std::size_t staging_bytes() const noexcept;
  /// The staged path's engine (Copy or Push), Auto when the staged path does not run.
  PeerEngine staged_engine() const noexcept;
  std::size_t local_bytes() const noexcept;
  std::size_t alignment() const noexcept;
  const std::string& source() const noexcept;  ///< the cross-rank kernel's source ("" on the staged path)

 private:
  struct State;
  static void run_staged(const State& s, const std::vector<void*>& data, const std::vector<cudaStream_t>& streams);
  std::unique_ptr<State> state_;
};

}  // namespace bmmc
