// The portable NCCL engine (see dist_permuter.hpp).
#include "bmmc/nccl/dist_permuter.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/permute.hpp"

namespace bmmc {

namespace {

// NCCL failures carry NCCL's own words: the error string and, where a communicator is at hand, its last message.
void nccl_check(ncclResult_t status, const char* call, ncclComm_t comm = nullptr) {
  if (status == ncclSuccess) return;
  std::string what = fmt::format("{} failed: {} ({})", call, ncclGetErrorString(status), static_cast<int>(status));
  if (comm) {
    if (const char* last = ncclGetLastError(comm); last && *last) what += fmt::format(": {}", last);
  }
  throw std::runtime_error(what);
}

}  // namespace

struct DistPermuter::State {
  ncclComm_t comm = nullptr;
  int rank = 0, ranks = 1, device = 0;
  DistOptions options;
  DistPlan plan;
  AllToAllStep step;
  std::vector<std::uint64_t> send_at, recv_at;  // displacements (elements), ascending rank order
  std::unique_ptr<CudaPermuter> pre, post, local;
  std::uint64_t* agreement = nullptr;  // device: 3 words of this rank, then 3 per rank gathered
};

DistPermuter::DistPermuter(const Bmmc& global, int elem_bytes, ncclComm_t comm, const DistOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  if (!comm) throw std::invalid_argument("DistPermuter: the NCCL communicator is null");
  s.comm = comm;
  s.options = options;
  nccl_check(ncclCommCount(comm, &s.ranks), "ncclCommCount", comm);
  nccl_check(ncclCommUserRank(comm, &s.rank), "ncclCommUserRank", comm);
  nccl_check(ncclCommCuDevice(comm, &s.device), "ncclCommCuDevice", comm);
  s.plan = make_dist_plan(global, dist_rank_bits(static_cast<std::uint64_t>(s.ranks), global.n()), elem_bytes);
  s.step = alltoall_step(s.plan, static_cast<BitVec>(s.rank));
  s.send_at = displacements(s.step.send_counts);
  s.recv_at = displacements(s.step.recv_counts);
  ScopedDevice on(s.device);
  if (s.step.local_only) {
    s.local = std::make_unique<CudaPermuter>(s.step.local, elem_bytes, options.gpu);
  } else {
    s.pre = std::make_unique<CudaPermuter>(s.step.pre, elem_bytes, options.gpu);
    s.post = std::make_unique<CudaPermuter>(s.step.post, elem_bytes, options.gpu);
  }
  check(cudaMalloc(&s.agreement, sizeof(std::uint64_t) * 3 * (1 + static_cast<std::size_t>(s.ranks))),
        "cudaMalloc (agreement words)");
}

DistPermuter::~DistPermuter() {
  if (!state_ || !state_->agreement) return;
  try {
    ScopedDevice on(state_->device);
    cudaFree(state_->agreement);
  } catch (...) {  // a destructor must not throw; the device is gone anyway
  }
}
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

void DistPermuter::operator()(const void* in, void* out, void* scratch, cudaStream_t stream) const {
  const State& s = *state_;
  ScopedDevice on(s.device);
  check_buffers(in, out, s.plan.local_bits, s.plan.elem_bytes);
  check_device_pointer(in, "in");
  check_device_pointer(out, "out");
  const bool own = scratch == nullptr && !s.step.local_only;
  if (scratch) {
    check_buffers(in, scratch, s.plan.local_bits, s.plan.elem_bytes);
    check_buffers(out, scratch, s.plan.local_bits, s.plan.elem_bytes);
    check_device_pointer(scratch, "scratch");
  }
  if (own) check(cudaMallocAsync(&scratch, local_bytes(), stream), "cudaMallocAsync (exchange scratch)");
  try {
    run(in, out, scratch, stream);
  } catch (...) {
    if (own) cudaFreeAsync(scratch, stream);
    throw;
  }
  if (own) check(cudaFreeAsync(scratch, stream), "cudaFreeAsync (exchange scratch)");
}

void DistPermuter::permute_destroying(void* in, void* out, cudaStream_t stream) const {
  const State& s = *state_;
  ScopedDevice on(s.device);
  check_buffers(in, out, s.plan.local_bits, s.plan.elem_bytes);
  check_device_pointer(in, "in");
  check_device_pointer(out, "out");
  run(in, out, in, stream);
}

void DistPermuter::run(const void* in, void* out, void* recv, cudaStream_t stream) const {
  const State& s = *state_;
  if (s.options.check_agreement) {
    const std::uint64_t mine[3] = {dist_plan_hash(s.plan), static_cast<std::uint64_t>(s.plan.n()),
                                   static_cast<std::uint64_t>(s.plan.elem_bytes)};
    std::vector<std::uint64_t> every(3 * static_cast<std::size_t>(s.ranks));
    check(cudaMemcpyAsync(s.agreement, mine, sizeof mine, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (hash)");
    nccl_check(ncclAllGather(s.agreement, s.agreement + 3, 3, ncclUint64, s.comm, stream), "ncclAllGather (plan hash)",
               s.comm);
    check(cudaMemcpyAsync(every.data(), s.agreement + 3, every.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost,
                          stream),
          "cudaMemcpyAsync (hashes)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (plan hashes)");
    bool agree = true;
    for (int r = 0; r < s.ranks; ++r)
      for (int i = 0; i < 3; ++i) agree = agree && every[3 * r + i] == every[i];
    if (!agree) {
      std::string views;
      for (int r = 0; r < s.ranks; ++r)
        views += fmt::format("{}rank {}: n = {}, {}-byte elements, plan hash {:#018x}", r ? "; " : "", r,
                             every[3 * r + 1], every[3 * r + 2], every[3 * r]);
      throw std::invalid_argument(fmt::format(
          "the ranks disagree on the permutation, n or element size (this is rank {}); every rank must build its "
          "DistPermuter from the same global BMMC and element size: {}",
          s.rank, views));
    }
  }
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

}  // namespace bmmc
