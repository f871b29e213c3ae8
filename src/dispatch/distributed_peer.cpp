// The distributed front door's engine for the GPUs of one process (bmmc/distributed.hpp, DeviceGroup): the
// peer engines of bmmc_peer behind DistributedEngineBase — PeerPermuter out of place (Push, Exchange on the copy
// engines, Pieces on the copy engines), PeerSwapPermuter in place (Swap, StagedSwap).
#include "distributed_engine.hpp"

#if BMMC_HAS_CUDA

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/dist/tuning.hpp"
#include "../peer/peer_permuter.hpp"
#include "../peer/peer_swap.hpp"

namespace bmmc {
namespace {

PeerEngine peer_engine(DistEngine e) {
  switch (e) {
    case DistEngine::Exchange: return PeerEngine::Copy;
    case DistEngine::Pieces: return PeerEngine::CopyPieces;
    case DistEngine::Push: return PeerEngine::Push;
    default: return PeerEngine::Auto;
  }
}

DistEngine dist_engine(PeerEngine e) {
  switch (e) {
    case PeerEngine::Copy: return DistEngine::Exchange;
    case PeerEngine::CopyPieces: return DistEngine::Pieces;
    case PeerEngine::Push: return DistEngine::Push;
    case PeerEngine::Auto: break;
  }
  return DistEngine::Auto;
}

class PeerEngineImpl final : public DistributedEngineBase {
 public:
  PeerEngineImpl(const Bmmc& map, int elem_bytes, std::vector<int> devices, const DistributedOptions& o) {
    info.n = map.n();
    info.elem_bytes = elem_bytes;
    info.ranks = static_cast<int>(devices.size());
    info.local_ranks = info.ranks;
    info.in_place = o.in_place;
    // destroy_input, depth and the NCCL-only options: refused by check_distributed_options
    if (o.in_place) {
      const std::size_t chunk = o.max_staging_chunk ? o.max_staging_chunk : kMaxStagingChunkBytes;
      swap_.emplace(map, elem_bytes, std::move(devices), o.gpu, chunk, peer_engine(o.staged_engine));
      info.engine = swap_->staged_plan() ? DistEngine::StagedSwap : DistEngine::Swap;
      if (o.engine != DistEngine::Auto && o.engine != info.engine)
        throw std::invalid_argument(fmt::format(
            "the {} engine was asked for, but this involution on these devices runs {}: ask for auto or {}",
            to_string(o.engine), to_string(info.engine), to_string(info.engine)));
      info.pieces = swap_->staged_plan() ? static_cast<int>(swap_->staged_plan()->chunks()) : 0;
      info.local_bytes = swap_->local_bytes();
      info.alignment = swap_->alignment();
      return;
    }
    PeerOptions po;
    po.engine = peer_engine(o.engine);
    po.pieces = o.pieces;
    po.gpu = o.gpu;
    permuter_.emplace(map, elem_bytes, std::move(devices), po);
    info.engine = dist_engine(permuter_->engine());
    info.fallback_reason = permuter_->fallback_reason();
    info.pieces = permuter_->pieces();
    info.local_bytes = permuter_->local_bytes();
    info.scratch_bytes = permuter_->scratch_bytes();
    info.alignment = permuter_->alignment();
  }

  void run(const std::vector<const void*>& in, const std::vector<void*>& out, const std::vector<void*>& scratch,
           const std::vector<StreamHandle>& streams) const override {
    if (!scratch.empty() || info.scratch_bytes == 0) return (*permuter_)(in, out, scratch, streams);
    // No scratch given: stream-ordered allocations on every rank's stream, freed after the call's work on it.
    // The checks of the call run on them too (a null pointer would be refused before any enqueue).
    const std::vector<int>& devices = permuter_->devices();
    std::vector<void*> own(devices.size(), nullptr);
    auto free_all = [&] {
      for (std::size_t r = 0; r < own.size(); ++r)
        if (own[r]) {
          ScopedDevice on(devices[r]);
          cudaFreeAsync(own[r], streams.empty() ? nullptr : streams[r]);
        }
    };
    // The other GPUs store into a rank's scratch (the push pass, the copies of the pieces): memory of a device's
    // stream-ordered pool is reachable from another device only once the pool grants it access (peer access
    // between the devices does not), so each rank's default pool opens to the group's other devices.
    for (std::size_t r = 0; r < devices.size(); ++r)
      for (int other : devices)
        if (other != devices[r]) {
          cudaMemPool_t pool = nullptr;
          check(cudaDeviceGetDefaultMemPool(&pool, devices[r]), "cudaDeviceGetDefaultMemPool");
          cudaMemAccessDesc access{};
          access.location.type = cudaMemLocationTypeDevice;
          access.location.id = other;
          access.flags = cudaMemAccessFlagsProtReadWrite;
          check(cudaMemPoolSetAccess(pool, &access, 1), "cudaMemPoolSetAccess (distributed scratch)");
        }
    try {
      for (std::size_t r = 0; r < devices.size(); ++r) {
        ScopedDevice on(devices[r]);
        check(cudaMallocAsync(&own[r], info.scratch_bytes, streams.empty() ? nullptr : streams[r]),
              "cudaMallocAsync (distributed scratch)");
      }
      (*permuter_)(in, out, own, streams);
    } catch (...) {
      free_all();
      throw;
    }
    free_all();
  }

  void run_in_place(const std::vector<void*>& data, const std::vector<StreamHandle>& streams) const override {
    (*swap_)(data, streams);
  }

 private:
  std::optional<PeerPermuter> permuter_;
  std::optional<PeerSwapPermuter> swap_;
};

}  // namespace

std::shared_ptr<const DistributedEngineBase> make_peer_engine(const Bmmc& map, int elem_bytes, std::vector<int> devices,
                                                              const DistributedOptions& options) {
  return std::make_shared<PeerEngineImpl>(map, elem_bytes, std::move(devices), options);
}

}  // namespace bmmc

#endif  // BMMC_HAS_CUDA
