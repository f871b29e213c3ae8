// The portable NCCL engine (see dist_permuter.hpp).
#include "dist_permuter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/dist/ring.hpp"
#include "bmmc/dist/schedule.hpp"
#include "../exchange/piece_kernels.hpp"
#include "collectives.hpp"
#include "exchange_order.hpp"

namespace bmmc {

using namespace nccl_detail;

struct DistPermuter::State : RankContext {
  explicit State(ncclComm_t c) : RankContext(c, "DistPermuter") {}
  DistOptions options;
  DistPlan plan;
  AllToAllStep step;
  std::vector<std::uint64_t> send_at, recv_at;  // displacements (elements), ascending rank order
  std::unique_ptr<CudaPermuter> pre, post, local;

  // The pipeline (empty when not pipelined; `note` says why).
  bool pipelined = false;
  std::string note;
  PieceSchedule pieces;
  PieceKernels kernels;
  std::vector<SendStep> sends;
  std::vector<RecvStep> recvs;
  PieceLayout layout;  // where this rank's pieces sit in the scratch
  // With exchange_comms = 2 the exchange alternates between the caller's communicator and a second one split from
  // it (lazily, by the first pipelined call: ncclCommSplit is collective), each on its own stream: NCCL runs one
  // communicator's groups one after another, each with a ramp-up and a drain, while two communicators overlap them
  // (measured on two H200s: 32 groups of a 16 GiB exchange 28.0 ms on one communicator, 24.9 on two, 23.5 in one
  // group) — but beside the packs and unpacks the gain is not consistent (BENCHMARKS.md).
  int exchange_comms = 1;
  ncclComm_t second = nullptr;
  cudaStream_t comm_stream[2] = {};         // the exchange's own streams, one per communicator
  // The pipeline's own scratch, used when a call passes none: ncclMemAlloc memory registered with the
  // communicator (ncclCommRegister), so that NCCL moves the pieces between the ranks' buffers without staging them
  // through its own (measured on two H100s: 39 ms instead of 52.5 ms for 16 GiB per rank, BENCHMARKS.md).
  void* registered = nullptr;
  void* registration = nullptr;
  void* second_registration = nullptr;
  cudaEvent_t scratch_free = nullptr;  // recorded after each call that used `registered`
  void register_scratch();
  void split_second_comm();
  std::vector<cudaEvent_t> packed, exchanged;  // one per buffer of the ring (PieceSchedule::depth)

  void plan_pipeline(int requested);
  ~State();  // frees what the constructor made so far, also when it threw
};

DistPermuter::State::~State() {
  try {
    ScopedDevice on(device);
    if (scratch_free) cudaEventSynchronize(scratch_free);  // the last call is done with the engine's own scratch
    for (cudaStream_t st : comm_stream)
      if (st) cudaStreamSynchronize(st);  // the engine's NCCL work is done before its communicator goes
    if (second_registration) ncclCommDeregister(second, second_registration);
    if (second) ncclCommDestroy(second);
    if (registration) ncclCommDeregister(comm, registration);
    if (registered) ncclMemFree(registered);
    for (cudaStream_t st : comm_stream)
      if (st) cudaStreamDestroy(st);
    if (scratch_free) cudaEventDestroy(scratch_free);
    for (cudaEvent_t e : packed) cudaEventDestroy(e);
    for (cudaEvent_t e : exchanged) cudaEventDestroy(e);
  } catch (...) {  // a destructor must not throw; the device is gone anyway
  }
}

// The pieces' kernels (exchange/piece_kernels.hpp). Throws std::invalid_argument where the pieces cannot be cut along
// tiles.
void DistPermuter::State::plan_pipeline(int requested) {
  pieces = make_piece_schedule(plan, requested, options.depth);
  kernels = make_piece_kernels(plan, pieces, static_cast<BitVec>(rank), device, options.gpu);
  sends = send_schedule(plan, static_cast<BitVec>(rank));
  recvs = recv_schedule(plan, static_cast<BitVec>(rank));
  layout = piece_layout(plan, pieces, static_cast<BitVec>(rank));
  // The exchange's stream has the device's highest priority: its NCCL kernels need only a few SMs, and while the
  // packs and unpacks keep every SM busy, priority lets them take the first SM a tile block frees.
  int least = 0, greatest = 0;
  check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
  exchange_comms = options.exchange_comms;
  for (int c = 0; c < exchange_comms; ++c)
    check(cudaStreamCreateWithPriority(&comm_stream[c], cudaStreamNonBlocking, greatest),
          "cudaStreamCreateWithPriority (exchange stream)");
  for (int b = 0; b < pieces.depth; ++b) {
    check(cudaEventCreateWithFlags(&packed.emplace_back(), cudaEventDisableTiming), "cudaEventCreateWithFlags");
    check(cudaEventCreateWithFlags(&exchanged.emplace_back(), cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }
  pipelined = true;
  register_scratch();
}

// Collective (every rank's first pipelined call, after the agreement): the second communicator of the exchange, with
// the scratch registered with it too.
void DistPermuter::State::split_second_comm() {
  if (exchange_comms < 2 || second) return;
  nccl_check(ncclCommSplit(comm, 0, rank, &second, nullptr), "ncclCommSplit (the exchange's second communicator)",
             comm);
  if (registered &&
      ncclCommRegister(second, registered, pieces.scratch_elems * static_cast<std::size_t>(plan.elem_bytes),
                       &second_registration) != ncclSuccess)
    second_registration = nullptr;
}

// Where NCCL cannot allocate or register (no cuMem support, say), calls without scratch allocate it per call
// (stream-ordered, unregistered) and registered_scratch() is false.
void DistPermuter::State::register_scratch() {
  const std::size_t bytes = static_cast<std::size_t>(pieces.scratch_elems) * static_cast<std::size_t>(plan.elem_bytes);
  if (ncclMemAlloc(&registered, bytes) != ncclSuccess) {
    registered = nullptr;
    return;
  }
  if (ncclCommRegister(comm, registered, bytes, &registration) != ncclSuccess ||
      cudaEventCreateWithFlags(&scratch_free, cudaEventDisableTiming) != cudaSuccess) {
    if (registration) ncclCommDeregister(comm, registration);
    ncclMemFree(registered);
    registered = nullptr;
    registration = nullptr;
    scratch_free = nullptr;
  }
}

DistPermuter::DistPermuter(const Bmmc& global, int elem_bytes, ncclComm_t comm, const DistOptions& options)
    : state_(std::make_unique<State>(comm)) {
  State& s = *state_;
  s.options = options;
  if (options.exchange_comms != 1 && options.exchange_comms != 2)
    throw std::invalid_argument(fmt::format(
        "exchange_comms = {}: the pipelined exchange runs over 1 or 2 communicators", options.exchange_comms));
  check_depth(options.depth);
  check_pieces(options.pieces);  // on every rank, also where this map moves nothing between ranks
  s.plan = make_dist_plan(global, dist_rank_bits(static_cast<std::uint64_t>(s.ranks), global.n()), elem_bytes);
  s.step = alltoall_step(s.plan, static_cast<BitVec>(s.rank));
  s.send_at = displacements(s.step.send_counts);
  s.recv_at = displacements(s.step.recv_counts);
  ScopedDevice on(s.device);
  // Every kernel is loaded on the device now: a kernel loaded lazily at its first launch, while this rank's or a
  // peer's NCCL kernels wait for each other, can deadlock the ranks (prepare_launch, launch.hpp).
  if (s.step.local_only) {
    s.local = std::make_unique<CudaPermuter>(s.step.local, elem_bytes, options.gpu);
    s.local->prepare();
  } else {
    s.pre = std::make_unique<CudaPermuter>(s.step.pre, elem_bytes, options.gpu);
    s.post = std::make_unique<CudaPermuter>(s.step.post, elem_bytes, options.gpu);
    s.pre->prepare();
    s.post->prepare();
  }
  if (s.step.local_only) {
    s.note = "no element changes rank: one local pass";
  } else if (options.pieces == 1) {
    s.note = "one piece requested";
  } else {
    try {
      s.plan_pipeline(options.pieces);
    } catch (const std::invalid_argument& e) {
      s.note = e.what();
    }
  }
}

DistPermuter::~DistPermuter() = default;
DistPermuter::DistPermuter(DistPermuter&&) noexcept = default;
DistPermuter& DistPermuter::operator=(DistPermuter&&) noexcept = default;

const DistPlan& DistPermuter::plan() const noexcept { return state_->plan; }
const AllToAllStep& DistPermuter::step() const noexcept { return state_->step; }
int DistPermuter::rank() const noexcept { return state_->rank; }
int DistPermuter::ranks() const noexcept { return state_->ranks; }
int DistPermuter::device() const noexcept { return state_->device; }
std::size_t DistPermuter::local_bytes() const noexcept {
  return array_bytes(state_->plan.local_bits, state_->plan.elem_bytes);
}
std::size_t DistPermuter::scratch_bytes() const noexcept {
  const State& s = *state_;
  return s.pipelined ? static_cast<std::size_t>(s.pieces.scratch_elems) * static_cast<std::size_t>(s.plan.elem_bytes)
                     : local_bytes();
}
bool DistPermuter::pipelined() const noexcept { return state_->pipelined; }
int DistPermuter::pieces() const noexcept { return state_->pipelined ? state_->pieces.pieces : 1; }
const std::string& DistPermuter::pipeline_note() const noexcept { return state_->note; }
bool DistPermuter::registered_scratch() const noexcept { return state_->registered != nullptr; }

void DistPermuter::operator()(const void* in, void* out, void* scratch, cudaStream_t stream) const {
  const State& s = *state_;
  ScopedDevice on(s.device);
  const bool registered = !scratch && s.pipelined && s.registered;  // the engine's own, registered scratch
  if (registered) scratch = s.registered;
  s.check_or_refuse(s.options.check_agreement, stream, [&] {
    check_buffers(in, out, s.plan.local_bits, s.plan.elem_bytes);
    check_device_pointer(in, "in");
    check_device_pointer(out, "out");
    if (scratch) {
      check_disjoint(in, local_bytes(), scratch, scratch_bytes(), "in", "scratch");
      check_disjoint(out, local_bytes(), scratch, scratch_bytes(), "out", "scratch");
      if (reinterpret_cast<std::uintptr_t>(scratch) % 256 != 0)
        throw std::invalid_argument("scratch must be aligned to 256 bytes (as cudaMalloc returns it)");
      check_device_pointer(scratch, "scratch");
    }
  });
  const bool own = scratch == nullptr && !s.step.local_only;
  if (own) check(cudaMallocAsync(&scratch, scratch_bytes(), stream), "cudaMallocAsync (exchange scratch)");
  // The engine's own scratch is reused by every call, whatever its stream: this call starts after the previous
  // one is done with it, and the destructor waits for the last one (scratch_free).
  if (registered) check(cudaStreamWaitEvent(stream, s.scratch_free, 0), "cudaStreamWaitEvent (scratch free)");
  try {
    if (s.pipelined) {
      check_agreement(stream, registered);
      run_pipelined(in, out, scratch, stream);
    } else {
      run(in, out, scratch, stream);
    }
  } catch (...) {
    if (own) cudaFreeAsync(scratch, stream);
    throw;
  }
  if (registered) check(cudaEventRecord(s.scratch_free, stream), "cudaEventRecord (scratch free)");
  if (own) check(cudaFreeAsync(scratch, stream), "cudaFreeAsync (exchange scratch)");
}

void DistPermuter::permute_destroying(void* in, void* out, cudaStream_t stream) const {
  const State& s = *state_;
  ScopedDevice on(s.device);
  s.check_or_refuse(s.options.check_agreement, stream, [&] {
    check_buffers(in, out, s.plan.local_bits, s.plan.elem_bytes);
    check_device_pointer(in, "in");
    check_device_pointer(out, "out");
  });
  run(in, out, in, stream);
}

// The ranks compare (plan hash, n, element size, pieces) before any data moves: ranks that disagree would post
// mismatched sends and receives and hang, or corrupt each other's arrays. The piece count is part of it because
// the pipeline's NCCL groups must pair up: DistOptions::pieces, or a device on which the pieces' kernels cannot be
// planned, could make one rank pipeline and another not.
void DistPermuter::check_agreement(cudaStream_t stream, bool registered) const {
  const State& s = *state_;
  if (!s.options.check_agreement) return;
  const Agreement mine{dist_plan_hash(s.plan),
                       static_cast<std::uint64_t>(s.plan.n()),
                       static_cast<std::uint64_t>(s.plan.elem_bytes),
                       s.pipelined ? DistEngine::Pieces : DistEngine::Exchange,
                       static_cast<std::uint64_t>(s.pipelined ? s.pieces.pieces : 1),
                       static_cast<std::uint64_t>(s.pipelined ? s.exchange_comms : 1),
                       registered ? 1u : 0u,
                       0};
  s.agree(mine, stream);
}

void DistPermuter::run(const void* in, void* out, void* recv, cudaStream_t stream) const {
  const State& s = *state_;
  check_agreement(stream, false);
  if (s.step.local_only) {
    (*s.local)(in, out, stream);
    return;
  }
  (*s.pre)(in, out, stream);  // chunks in ascending destination order: out is the send buffer
  const std::size_t eb = static_cast<std::size_t>(s.plan.elem_bytes);
  const auto* send = static_cast<const unsigned char*>(out);
  auto* receive = static_cast<unsigned char*>(recv);
  nccl_check(ncclGroupStart(), "ncclGroupStart");
  for (int d = 0; d < s.ranks; ++d)
    if (const std::uint64_t c = s.step.send_counts[d])
      nccl_check(ncclSend(send + s.send_at[d] * eb, c * eb, ncclUint8, d, s.comm, stream), "ncclSend", s.comm);
  for (int r = 0; r < s.ranks; ++r)
    if (const std::uint64_t c = s.step.recv_counts[r])
      nccl_check(ncclRecv(receive + s.recv_at[r] * eb, c * eb, ncclUint8, r, s.comm, stream), "ncclRecv", s.comm);
  nccl_check(ncclGroupEnd(), "ncclGroupEnd", s.comm);
  (*s.post)(recv, out, stream);
}

// The pipeline on the caller's stream (packs and unpacks) and the engine's exchange streams, over a ring of D =
// depth buffers each way (piece i uses buffer i mod D): exchange_order.hpp says what waits for what. The caller's
// stream ends after the last unpack, which waited for the last exchange.
void DistPermuter::run_pipelined(const void* in, void* out, void* scratch, cudaStream_t stream) const {
  state_->split_second_comm();
  const State& s = *state_;
  const PieceSchedule& ps = s.pieces;
  const std::size_t eb = static_cast<std::size_t>(s.plan.elem_bytes);
  const PieceLayout& at = s.layout;
  auto* base = static_cast<unsigned char*>(scratch);
  const int depth = ps.depth;
  struct Ops {
    const State& s;
    const PieceSchedule& ps;
    const PieceLayout& at;
    const void* in;
    void* out;
    unsigned char* base;
    std::size_t eb;
    int depth;
    cudaStream_t stream;

    cudaStream_t on(int comm) const { return comm < 0 ? stream : s.comm_stream[comm]; }
    cudaEvent_t event(const ExchangeEvent& e) const {
      return (e.kind == ExchangeEvent::Kind::Packed ? s.packed : s.exchanged)[static_cast<std::size_t>(e.slot)];
    }
    void wait(int comm, const ExchangeEvent& e, const char* call) const {
      check(cudaStreamWaitEvent(on(comm), event(e), 0), call);
    }
    void record(const ExchangeEvent& e, int comm, const char* call) const { check(cudaEventRecord(event(e), on(comm)), call); }
    void pack(int i) const { launch_pack(s.kernels, ps, at, i, in, base, stream); }
    void unpack(int i) const { launch_unpack(s.kernels, ps, at, i, base, out, stream); }
    void exchange(int i, int c) const {
      const std::uint64_t len = (ps.bounds[i + 1] - ps.bounds[i]) * eb;
      cudaStream_t es = s.comm_stream[c];
      ncclComm_t ec = c ? s.second : s.comm;
      nccl_check(ncclGroupStart(), "ncclGroupStart");
      for (const SendStep& st : s.sends)
        if (st.dest != static_cast<BitVec>(s.rank))
          nccl_check(ncclSend(base + at.pack_at[i % depth][st.chunk] * eb, len, ncclUint8, static_cast<int>(st.dest), ec, es),
                     "ncclSend", ec);
      for (const RecvStep& st : s.recvs)
        if (st.source != static_cast<BitVec>(s.rank))
          nccl_check(ncclRecv(base + at.recv_at[i % depth][st.slot] * eb, len, ncclUint8, static_cast<int>(st.source), ec, es),
                     "ncclRecv", ec);
      nccl_check(ncclGroupEnd(), "ncclGroupEnd", ec);
    }
  } ops{s, ps, at, in, out, base, eb, depth, stream};
  enqueue_exchange_pipeline(depth, ps.pieces, s.exchange_comms, ops);
}

}  // namespace bmmc
