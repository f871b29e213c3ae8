// The distributed front door: any BMMC of an array of 2^n elements split over a group of G = 2^g ranks (rank r
// holds elements [r·2^m, (r+1)·2^m), the rank = the top g index bits; docs/DESIGN.md §9), in one class,
// DistributedPermuter, whatever the group is:
//  - DeviceGroup{devices}: several GPUs driven by this process (CUDA peer access; no NCCL). A device may appear
//    more than once (its ranks then share the GPU). Needs a CUDA build.
//  - an ncclComm_t: one rank of an NCCL communicator per process (or thread), the caller owning the communicator
//    and the streams; calls are collective. Its constructor is defined in bmmc::nccl (link it to pass one): the
//    library, the CLI and the Python module start without NCCL.
//  - SimulatedRanks{G}: G ranks in this process on the CPU, the schedule the GPUs run (dist/simulate.hpp), on host
//    memory. Every build has it.
//  - ExchangeGroup{rank, ranks, exchange, gather}: one rank of a transport the caller owns (MPI, torch.distributed,
//    a communicator the library cannot share): the caller supplies the two collectives as callables, the door runs
//    the local passes (bmmc::Permuter, host or device buffers as the pointers say) and calls them. The exchange
//    engine only: one all-to-all per call. Every build has it.
// The engine (dist/engine.hpp) is chosen inside — DistributedOptions::engine = Auto — and reported by engine(),
// with fallback_reason() saying why Auto did not take the fastest one; a requested engine that cannot run is an
// error. In place is a flag, as in PermuterOptions (in_place: involutions across ranks, no output buffer).
// A call takes one buffer per rank this process drives (local_ranks(): the devices' count, 1 for NCCL and an
// ExchangeGroup, G when simulated): in[i], out[i] of local_bytes(), scratch[i] of scratch_bytes() when it is not 0
// (empty or null: the engine's own or allocated; for a DeviceGroup, stream-ordered from each device's default pool,
// which is then opened to the group's other devices), streams[i] on the rank's device (empty: each device's default
// stream; ignored when simulated). Everything is checked before the first write (std::invalid_argument naming the
// rank and buffer). Calls are stream-ordered with no host synchronisation, except the ranks' agreement
// (check_agreement) on NCCL and an ExchangeGroup, which compares every rank's plan, sizes and engine
// (dist/agreement.hpp) before data moves; a rank whose own arguments are refused takes part in it as refused, so
// that every rank throws and none waits.
// The fused and in-place NCCL engines store into the peers' memory: their out, scratch and in-place data are
// NcclWindows of the communicator (bmmc/nccl/window.hpp) — the window overloads below, which every NCCL engine
// takes (Auto picks among the fused ones); plain device pointers serve the portable engine, asked for by name
// (engine Exchange or Pieces). Errors: std::invalid_argument for bad arguments, CudaError /
// NvrtcError (bmmc/cuda/error.hpp) and NcclError (bmmc/nccl/error.hpp) for failures of CUDA, NVRTC and NCCL.
// Example, the GPUs 0 and 1 of this process:
//   bmmc::DistributedPermuter p(bmmc::random_bmmc(33, 1), 4, bmmc::DeviceGroup{{0, 1}});
//   p({in0, in1}, {out0, out1});              // scratch allocated when p.scratch_bytes() > 0 and none is given
// and one rank of an MPI job on host buffers (counts to MPI's ints and displacements elided):
//   bmmc::ExchangeGroup g{rank, size,
//       [](const void* s, auto send_bytes, void* r, auto recv_bytes, bmmc::StreamHandle) { /* MPI_Alltoallv */ },
//       [](auto mine, auto every) { MPI_Allgather(mine.data(), int(mine.size()), MPI_UINT64_T, every.data(),
//                                                 int(mine.size()), MPI_UINT64_T, MPI_COMM_WORLD); }};
//   bmmc::DistributedPermuter q(bmmc::bit_reverse(30), 8, std::move(g));
//   q({in}, {out});                           // collective: every rank calls it
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/engine.hpp"
#include "bmmc/dist/tuning.hpp"
#include "bmmc/permute.hpp"  // StreamHandle

struct ncclComm;  // NCCL's communicator: ncclComm_t is ncclComm*

namespace bmmc {

class NcclWindow;  // bmmc/nccl/window.hpp (bmmc::nccl)
class DistributedEngineBase;  // the engine behind the door (src/dispatch/distributed_engine.hpp)

/// The GPUs of this process, rank r on devices[r] (a power of two of them).
struct DeviceGroup {
  std::vector<int> devices;
};
/// G ranks simulated on the CPU (a power of two).
struct SimulatedRanks {
  std::uint64_t ranks = 0;
};
/// This process as rank `rank` of `ranks` (a power of two) over collectives the caller owns, NCCL/MPI style. The door
/// calls them from the thread that calls it, at the same point of every rank's sequence of calls, so that every rank
/// calls its collectives in the same order:
///  - gather(mine, every): an all-gather of a few words (the agreement record, dist/agreement.hpp): every rank's
///    `mine` into `every`, rank r's words at [r·mine.size(), (r+1)·mine.size()). Host memory; it returns when `every`
///    is filled. Called once per call before any data moves (DistributedOptions::check_agreement), and once by a
///    rank that refuses its own arguments (a failed constructor or call, or refuse()) in place of its record.
///  - exchange(send, send_bytes, recv, recv_bytes, stream): the plan's one all-to-all, MPI_Alltoallv with the
///    segments packed: `send` holds send_bytes[d] bytes for each rank d in ascending order, `recv` receives
///    recv_bytes[s] bytes from each rank s in ascending order (byte counts, each a multiple of the element size;
///    a rank sends to and receives from 2^k ranks, 0 bytes to the others). Buffers of the call: host memory on the
///    CPU, device memory of the call's device otherwise. Stream-ordered: the door has enqueued the pass that writes
///    `send` on `stream` (on the CPU: finished it) and enqueues the pass that reads `recv` on `stream` right after
///    exchange returns, so the exchange must read `send` after the work enqueued on `stream` before it and finish
///    writing `recv` before any work enqueued on `stream` after it returns (on the CPU: before it returns) — as
///    torch.distributed's all_to_all_single on the current stream, or ncclSend/ncclRecv on `stream`, do. Neither
///    buffer may be touched by anyone else from the call until the stream reaches the post-pass's end. `send` is the
///    call's out, `recv` its scratch (the engine's own when the call gives none; with destroy_input: its in).
/// Either callable may throw; the door lets its exception through (a transport failure leaves the ranks to the
/// transport). A map that moves no element between ranks runs one local pass and never calls exchange.
struct ExchangeGroup {
  int rank = 0;
  int ranks = 0;
  std::function<void(const void* send, std::span<const std::size_t> send_bytes, void* recv,
                     std::span<const std::size_t> recv_bytes, StreamHandle stream)>
      exchange;
  std::function<void(std::span<const std::uint64_t> mine, std::span<std::uint64_t> every)> gather;
};

/// Which group honours which option (D = DeviceGroup, N = an ncclComm_t, S = SimulatedRanks, X = ExchangeGroup). An
/// option a group cannot honour must keep its default: the constructor refuses any other value (std::invalid_argument
/// naming the option, the group and what would honour it) rather than ignore it.
///   engine, in_place .......................... D N S (every engine); X: auto or exchange, out of place
///   destroy_input ............................. N S X   (the GPUs of one process keep their input)
///   pieces .................................... D N S out of place, not with the push engine on D S (it moves no
///                                               pieces); in place N only (its staged chunks' count); X: 0 or 1
///   depth ..................................... N S, out of place, for the pieces engine: refused where none can
///                                               run it (engine exchange, push on S, pieces = 1, destroy_input, a
///                                               named engine that runs without pieces); Auto reads it when it picks
///                                               pieces (the other rings have a fixed depth)
///   exchange_comms ............................ N
///   check_agreement (= false) ................. N X
///   staged_engine ............................. D S in place; N in place with auto or exchange
///   max_staging_chunk ......................... D S in place (N: pieces sets its chunks)
///   gpu ....................................... D N X (S: gpu.policy.vector_bits only, the push plan's); gpu.device
///                                               never: the group names the devices (X: the buffers do)
///   cpu ....................................... S X
struct DistributedOptions {
  DistEngine engine = DistEngine::Auto;  ///< a named engine insists (an error where it cannot run)
  /// Permute in place: one buffer per rank (in == out), an involution; engine Auto, Swap or StagedSwap.
  bool in_place = false;
  /// Out of place, Exchange: the input is the exchange's receive buffer, so no scratch — and the input is lost
  /// (its buffers must be writable). NCCL and simulated ranks; the GPUs of one process keep their input.
  bool destroy_input = false;
  /// Pieces: the exchange in this many pieces; 0 = the fewest whose scratch fits 1/8 of a rank's array. In place
  /// on NCCL: the staged path's chunks (0 = dist/tuning.hpp's chunk bound).
  int pieces = 0;
  int depth = 2;            ///< the pieces engine's ring of send and receive buffers (2..128); NCCL and simulated
  int exchange_comms = kDefaultExchangeComms;  ///< NCCL Exchange/Pieces: communicators the exchange alternates
                                               ///< between (1 or 2; dist/tuning.hpp)
  bool check_agreement = true;  ///< NCCL, ExchangeGroup: all-gather and compare every rank's plan on every call
  /// In place, StagedSwap: how each chunk moves between ranks — Exchange (the copy engines) or Push; Auto: Exchange.
  DistEngine staged_engine = DistEngine::Auto;
  /// In place on several GPUs: the staged path's chunks hold at most this many bytes (0 = dist/tuning.hpp's).
  std::size_t max_staging_chunk = 0;
  GpuOptions gpu;  ///< planning and JIT of every kernel (gpu.device stays -1: the group names the devices)
  CpuPolicy cpu;   ///< the simulated ranks' local passes

  friend bool operator==(const DistributedOptions&, const DistributedOptions&) = default;
};

class DistributedPermuter {
 public:
  /// Several GPUs of this process. Throws std::invalid_argument for a bad device list or geometry, an engine that
  /// cannot run (saying why) and a build without CUDA; CudaError / NvrtcError from CUDA and NVRTC.
  DistributedPermuter(const Bmmc& map, int elem_bytes, DeviceGroup group, const DistributedOptions& options = {});
  /// One rank of an NCCL communicator (not collective; defined in bmmc::nccl). Throws std::invalid_argument for a
  /// null communicator, a world size that is not a power of two or exceeds 2^n, an engine that cannot run;
  /// NcclError when the communicator cannot be queried.
  DistributedPermuter(const Bmmc& map, int elem_bytes, ncclComm* comm, const DistributedOptions& options = {});
  /// G ranks simulated on the CPU. Throws std::invalid_argument for a bad rank count or geometry.
  DistributedPermuter(const Bmmc& map, int elem_bytes, SimulatedRanks group, const DistributedOptions& options = {});
  /// One rank over the caller's collectives (not collective while it succeeds). Throws std::invalid_argument for a
  /// bad group (rank, ranks, a missing callable), geometry or option, or an engine other than auto or exchange; when
  /// the group itself is usable and check_agreement is set, it first takes part in the agreement as refused (refuse()),
  /// so that every peer's next call throws instead of waiting for this rank.
  DistributedPermuter(const Bmmc& map, int elem_bytes, ExchangeGroup group, const DistributedOptions& options = {});
  /// For a rank of an ExchangeGroup that refuses its own arguments before it can build its permuter (the caller's own
  /// checks): calls group.gather once with the refused record (dist/agreement.hpp), where its peers gather their
  /// calls' records, so that they all throw std::invalid_argument naming this rank instead of waiting. The peers'
  /// comparison fails by design; gather's own failures are swallowed (the caller raises its own error next). Throws
  /// std::invalid_argument only for a group it cannot use (rank, ranks, no gather).
  static void refuse(const ExchangeGroup& group);
  ~DistributedPermuter();
  /// A moved-from permuter reports a neutral state — engine() Auto (which no built one reports), 0 ranks, bytes
  /// and pieces, fallback_reason() "", describe() saying it is moved-from — and its calls throw std::logic_error
  /// ("moved-from DistributedPermuter"). Assigning a built permuter to it makes it usable again.
  DistributedPermuter(DistributedPermuter&&) noexcept;
  DistributedPermuter& operator=(DistributedPermuter&&) noexcept;

  /// Out of place: out[A·x ⊕ c] = in[x] over the whole group, one entry per local rank (see above). in is preserved.
  void operator()(const std::vector<const void*>& in, const std::vector<void*>& out,
                  const std::vector<void*>& scratch = {}, const std::vector<StreamHandle>& streams = {}) const;
  /// In place (in_place()): permutes data[i] of every local rank.
  void permute_in_place(const std::vector<void*>& data, const std::vector<StreamHandle>& streams = {}) const;
  /// NCCL, out of place, out (and scratch, when scratch_bytes() > 0 and the engine is Push or Pieces) in windows of
  /// the communicator: what the Push and copy-engine Pieces engines store into; any engine takes it.
  void operator()(const void* in, const NcclWindow& out, const NcclWindow* scratch, StreamHandle stream) const;
  /// NCCL, in place, the rank's data in a window of the communicator.
  void permute_in_place(const NcclWindow& data, StreamHandle stream) const;

  DistEngine engine() const noexcept;                   ///< what runs (never Auto)
  const std::string& fallback_reason() const noexcept;  ///< why Auto did not take the fastest engine; "" otherwise
  bool in_place() const noexcept;
  int n() const noexcept;
  int elem_bytes() const noexcept;
  int ranks() const noexcept;        ///< G
  int local_ranks() const noexcept;  ///< buffers per call: the ranks this process drives
  int first_rank() const noexcept;   ///< the rank of the first local buffer (the NCCL rank; 0 otherwise)
  std::size_t local_bytes() const noexcept;    ///< 2^m · elem_bytes
  std::size_t scratch_bytes() const noexcept;  ///< per rank; 0: a call takes no scratch
  std::size_t alignment() const noexcept;      ///< of every buffer
  int pieces() const noexcept;                 ///< Pieces: pieces per call (StagedSwap: chunks); 0 otherwise
  /// One line on what runs (engine, pieces, plan), for logs and `bmmc bench`.
  std::string describe() const;

 private:
  std::shared_ptr<const DistributedEngineBase> impl_;
};

}  // namespace bmmc
