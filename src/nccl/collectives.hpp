// Internal to the NCCL layer: what the NCCL engines do around their data movement — NCCL failures turned into
// NcclErrors that carry NCCL's own words, the ranks' agreement (dist/agreement.hpp) gathered over the
// communicator, a stream-ordered barrier, and the disjointness check of a call's buffers.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

#include "bmmc/dist/agreement.hpp"

namespace bmmc::nccl_detail {

/// Throws NcclError (bmmc/nccl/error.hpp) "<call> failed: <ncclGetErrorString> (<code>): <ncclGetLastError(comm)>".
void nccl_check(ncclResult_t status, const char* call, ncclComm_t comm = nullptr);

/// Throws std::invalid_argument unless the byte ranges [a, a + a_bytes) and [b, b + b_bytes) are disjoint.
void check_disjoint(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes, const char* a_name,
                    const char* b_name);

/// What every NCCL engine holds: the calling rank's view of the communicator the caller owns, and the device words
/// its agreement and barriers go through. Engines' states derive from it.
struct RankContext {
  /// Throws std::invalid_argument for a null communicator ("<who>: the NCCL communicator is null") and an error
  /// carrying NCCL's message when it cannot be queried; allocates the words on the communicator's device.
  RankContext(ncclComm_t comm, const char* who);
  ~RankContext();  ///< frees the words
  RankContext(const RankContext&) = delete;
  RankContext& operator=(const RankContext&) = delete;

  /// Collective: ncclAllGather of every rank's Agreement (dist/agreement.hpp), then compare_agreements (one stream
  /// synchronisation): every rank throws std::invalid_argument naming every rank's view when they differ. The all-gather also orders
  /// the ranks: no rank's later work on `stream` starts before every rank's earlier work on its stream is done.
  void agree(const Agreement& mine, cudaStream_t stream) const;
  /// Runs `checks` (a call's validation of its own arguments); when they throw and `announce` (the engine's calls
  /// agree first), takes part in the agreement as Refused — so that every peer throws instead of waiting for this
  /// rank in a collective — and rethrows the rank's own error. Nothing else is enqueued.
  template <class Checks>
  void check_or_refuse(bool announce, cudaStream_t stream, Checks&& checks) const {
    try {
      checks();
    } catch (...) {
      if (announce) refuse(stream);
      throw;
    }
  }
  /// Collective, stream-ordered: an ncclAllReduce of one word. No rank's later work on `stream` starts before every
  /// rank's earlier work on its stream is done (and visible to it).
  void barrier(cudaStream_t stream) const;

  ncclComm_t comm = nullptr;
  int rank = 0, ranks = 1, device = 0;

 private:
  void refuse(cudaStream_t stream) const noexcept;  // the Refused agreement; its own failures are swallowed
  std::uint64_t* words_ = nullptr;  // Agreement::kWords of this rank, those of every rank, the barrier word
};

}  // namespace bmmc::nccl_detail
