// Internal: an engine behind the distributed front door (bmmc/distributed.hpp: DistributedPermuter), not installed
// and not for callers outside the library; its own tests use it directly.
// Several GPUs driven by ONE process: any BMMC of an array split over G = 2^g devices (rank r = devices[r] holds
// the global elements [r·2^m, (r+1)·2^m)), with CUDA peer access and no NCCL (docs/DESIGN.md §9.5).
//
// Two engines, both stream-ordered and enqueued without host synchronisation:
//  - Push (the fused engine): the push plan's kernel (push_plan.hpp, codegen/push_source.hpp) runs on every
//    device over its own input and stores whole runs straight into the destination devices' memory through
//    peer mappings — push, not pull — so every byte crosses a link once. When the permutation keeps output runs
//    on one source rank (PushPlan::one_pass) that is the whole job, with no scratch; otherwise each device then
//    applies the finishing local pass Q (its scratch → its output).
//  - Copy (the all-to-all form of dist/alltoall.hpp on the copy engines): pre-pass in → out, the chunks with
//    cudaMemcpyPeerAsync into the receivers' scratch, post-pass scratch → out. It needs no peer mapping (the
//    driver stages through the host where there is none) and is the fallback of Auto.
//  - CopyPieces (the same on the copy engines, pipelined in pieces: docs/DESIGN.md §9.5): the portable NCCL
//    engine's pack and unpack kernels and scratch layout (exchange/piece_kernels.hpp) with cudaMemcpyPeerAsync moving
//    each piece, so that the links carry piece i while the SMs pack piece i+1 and unpack piece i−1; scratch =
//    the pieces' ring (PeerOptions::pieces; by default the fewest within 1/8 of the local array). For maps that
//    need a finishing pass after the push, the links then need not wait for the SMs.
// Auto takes Push when every pair of distinct devices has peer access and the push pass fits (m large enough),
// else Copy, and fallback_reason() says why; where the push would need its finishing pass, Auto takes CopyPieces
// instead wherever the map's pieces can be cut along tiles (it depends on the map: the rank bit swapped with local
// bit 0 already at 2^17 elements per rank, every map tested at 2^26) and each rank sends to one other rank (k = 1;
// dist/tuning.hpp kAutoPiecesMaxK says why). The same device may appear more than once (its "ranks" then share
// memory, which tests use to run several ranks on one GPU). Nothing here needs NCCL: this layer (bmmc_peer) is
// part of bmmc::bmmc, unlike bmmc::nccl (one process per GPU, any launcher).
// Synchronisation: a call first makes every device's stream wait for every other's (no rank writes into a
// buffer another stream may still use), and ends with every stream waiting for every rank's writes into it,
// so each stream can use its output right after the call. Example:
//   bmmc::PeerPermuter p(bmmc::random_bmmc(33, 1), 4, {0, 1});   // 2^31 int32 on each of GPUs 0 and 1
//   p({in0, in1}, {out0, out1}, {scratch0, scratch1});            // scratch only when p.scratch_bytes() > 0
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/push_plan.hpp"

namespace bmmc {

enum class PeerEngine { Auto, Push, Copy, CopyPieces };
const char* to_string(PeerEngine e) noexcept;
/// Throws std::invalid_argument unless e is one of the PeerEngines (a value cast from an integer may not be);
/// `what` names the option in the message.
void check_peer_engine(PeerEngine e, const char* what);

struct PeerOptions {
  PeerEngine engine = PeerEngine::Auto;  ///< Push, Copy or CopyPieces insist (Push and CopyPieces throw where
                                         ///< they cannot run)
  int pieces = 0;                        ///< CopyPieces: pieces of the pipeline (0 = the fewest within 1/8 scratch)
  GpuOptions gpu;                        ///< planning and JIT of every kernel (gpu.device is ignored)

  friend bool operator==(const PeerOptions&, const PeerOptions&) = default;
};

class PeerPermuter {
 public:
  /// Plans `global` (n bits) over devices.size() ranks (a power of two, at most 2^n), checks peer access, enables
  /// it, and compiles every kernel on every device. Throws std::invalid_argument for a bad device list or
  /// geometry and for Push where it cannot run (saying why), CudaError / NvrtcError from CUDA and NVRTC.
  PeerPermuter(const Bmmc& global, int elem_bytes, std::vector<int> devices, const PeerOptions& options = {});
  ~PeerPermuter();
  PeerPermuter(PeerPermuter&&) noexcept;
  PeerPermuter& operator=(PeerPermuter&&) noexcept;

  /// Enqueues the permutation. in[r], out[r]: 2^m elements of device memory on devices[r], and scratch[r] when
  /// scratch_bytes() > 0 (that many bytes: 2^m elements, or the pieces' ring for CopyPieces), aligned to
  /// alignment(), no two buffers overlapping; streams: empty (each device's
  /// default stream) or one per rank on devices[r]. The input is preserved. Everything is checked before the
  /// first enqueue (std::invalid_argument naming the rank and the buffer).
  void operator()(const std::vector<const void*>& in, const std::vector<void*>& out,
                  const std::vector<void*>& scratch = {}, const std::vector<cudaStream_t>& streams = {}) const;

  /// In place, for push plans of two passes (push_plan().one_pass() false; engine Push, or Auto — which keeps the
  /// push built when it takes CopyPieces for operator()): data[r] is both the input and the output of rank r, and
  /// scratch[r] holds 2^m elements. Safe because the push reads only each rank's own data and writes only the
  /// scratch buffers, and the finish (scratch → data) starts after every rank's push is done. Throws
  /// std::invalid_argument for the copy engine and for one-pass plans (their pushes store into other ranks' data
  /// while those ranks may still be reading it). PeerSwapPermuter runs chunks of an array through this.
  void permute_in_place(const std::vector<void*>& data, const std::vector<void*>& scratch,
                        const std::vector<cudaStream_t>& streams = {}) const;

  /// The copy engine's steps one at a time, for a caller that schedules them itself on its own streams
  /// (PeerSwapPermuter pipelines chunks so that one chunk's copies overlap its neighbours' local passes). No
  /// ordering and no checks beyond the rank and the engine: the caller orders the steps — rank r's copy_send after
  /// its copy_pre, a receiver's copy_post after every sender's copy_send to it, and no buffer reused while a step
  /// still reads it — and passes local_bytes() buffers of the right devices. Throws std::invalid_argument unless
  /// engine() is Copy and the map crosses ranks (scratch_bytes() > 0).
  /// copy_pre: the pre-pass of rank r, in → send (its segments in ascending destination).
  void copy_pre(std::size_t rank, const void* in, void* send, cudaStream_t stream) const;
  /// copy_send: rank r's segment for rank d, from send (rank r's) into recv (rank d's), on the copy engines.
  void copy_send(std::size_t rank, std::size_t dest, const void* send, void* recv, cudaStream_t stream) const;
  /// copy_post: the post-pass of rank d, recv → out (out may be the buffer copy_pre read).
  void copy_post(std::size_t dest, const void* recv, void* out, cudaStream_t stream) const;

  PeerEngine engine() const noexcept;             ///< Push, Copy or CopyPieces (never Auto)
  const std::string& fallback_reason() const noexcept;  ///< why Auto runs Copy; "" otherwise
  /// Per rank: 0 for a one-pass push or a rank-local map; the pieces' ring for CopyPieces; else 2^m elements.
  std::size_t scratch_bytes() const noexcept;
  int pieces() const noexcept;                    ///< CopyPieces: pieces per call (0 otherwise)
  std::size_t local_bytes() const noexcept;       ///< 2^m · elem_bytes
  std::size_t alignment() const noexcept;
  const std::vector<int>& devices() const noexcept;
  const PushPlan& push_plan() const noexcept;     ///< the plan of the push engine (also when it did not fit)
  const DistPlan& dist_plan() const noexcept;     ///< the plan of the copy engine
  /// The push kernel's source (empty for Copy), for `bmmc gen`-style inspection and tests.
  const std::string& push_source() const noexcept;

 private:
  struct State;
  // The push engine's two steps on checked buffers: the push pass, the barrier, the finish when there is one.
  void run_push(const std::vector<const void*>& in, const std::vector<void*>& out, const std::vector<void*>& scratch,
                const std::vector<cudaStream_t>& streams) const;
  // The copy engine's three steps on checked buffers: pre-pass in → send, copies send → recv, post-pass recv → out.
  void run_copy(const std::vector<const void*>& in, const std::vector<void*>& send, const std::vector<void*>& recv,
                const std::vector<void*>& out, const std::vector<cudaStream_t>& streams) const;
  std::unique_ptr<State> state_;
};

}  // namespace bmmc
