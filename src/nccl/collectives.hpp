// Internal to the NCCL layer: what both NCCL engines do around their data movement — NCCL failures turned into
// exceptions that carry NCCL's own words, the ranks' agreement on what they are about to do (compared before any
// data moves: ranks that disagree would post unpaired operations and hang, or write into each other's arrays with
// different maps), a stream-ordered barrier, and the disjointness check of a call's buffers.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

namespace bmmc::nccl_detail {

/// Throws std::runtime_error "<call> failed: <ncclGetErrorString> (<code>): <ncclGetLastError(comm)>".
void nccl_check(ncclResult_t status, const char* call, ncclComm_t comm = nullptr);

/// Throws std::invalid_argument unless the byte ranges [a, a + a_bytes) and [b, b + b_bytes) are disjoint.
void check_disjoint(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes, const char* a_name,
                    const char* b_name);

/// Which NCCL engine a rank runs: ranks that run different engines (or one engine differently) would post unpaired
/// NCCL operations or store into each other's buffers with different maps.
enum class AgreedEngine : std::uint64_t { Portable = 1, Fused = 2, InPlace = 3 };

/// What every rank states before a call moves data: the plan's hash, n, the element size, the engine and how the
/// portable engine's exchange will run (its piece count and communicators; 0 and 0 for the others).
struct Agreement {
  std::uint64_t hash = 0, n = 0, elem_bytes = 0;
  AgreedEngine engine = AgreedEngine::Portable;
  std::uint64_t pieces = 0, comms = 0;
  static constexpr int kWords = 6;
};

/// Collective: ncclAllGather of every rank's Agreement through `device_words` (device memory of Agreement::kWords ·
/// (1 + ranks) words), then a host comparison (one stream synchronisation). Every rank throws
/// std::invalid_argument naming every rank's view when they differ. The all-gather also orders the ranks: no
/// rank's later work on `stream` starts before every rank's earlier work on its stream is done.
void check_ranks_agree(ncclComm_t comm, int rank, int ranks, std::uint64_t* device_words, const Agreement& mine,
                       cudaStream_t stream);

/// Collective, stream-ordered: an ncclAllReduce of one word of `device_word`. No rank's later work on `stream`
/// starts before every rank's earlier work on its stream is done (and visible to it).
void stream_barrier(ncclComm_t comm, std::uint64_t* device_word, cudaStream_t stream);

}  // namespace bmmc::nccl_detail
