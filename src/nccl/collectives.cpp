// The NCCL layer's shared collectives and checks (see collectives.hpp).
#include "collectives.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/nccl/error.hpp"

namespace bmmc::nccl_detail {

void nccl_check(ncclResult_t status, const char* call, ncclComm_t comm) {
  if (status == ncclSuccess) return;
  std::string what = fmt::format("{} failed: {} ({})", call, ncclGetErrorString(status), static_cast<int>(status));
  if (comm) {
    if (const char* last = ncclGetLastError(comm); last && *last) what += fmt::format(": {}", last);
  }
  throw NcclError(static_cast<int>(status), call, what);
}

void check_disjoint(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes, const char* a_name,
                    const char* b_name) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  if (x < y + b_bytes && y < x + a_bytes)
    throw std::invalid_argument(fmt::format("{} ({}, {} bytes) and {} ({}, {} bytes) overlap; pass disjoint buffers",
                                            a_name, a, a_bytes, b_name, b, b_bytes));
}

RankContext::RankContext(ncclComm_t c, const char* who) : comm(c) {
  if (!c) throw std::invalid_argument(fmt::format("{}: the NCCL communicator is null", who));
  nccl_check(ncclCommCount(c, &ranks), "ncclCommCount", c);
  nccl_check(ncclCommUserRank(c, &rank), "ncclCommUserRank", c);
  nccl_check(ncclCommCuDevice(c, &device), "ncclCommCuDevice", c);
  ScopedDevice on(device);
  check(cudaMalloc(&words_, sizeof(std::uint64_t) * (Agreement::kWords * (1 + static_cast<std::size_t>(ranks)) + 1)),
        "cudaMalloc (agreement words)");
}

RankContext::~RankContext() {
  try {
    ScopedDevice on(device);
    cudaFree(words_);
  } catch (...) {  // a destructor must not throw
  }
}

void RankContext::agree(const Agreement& mine, cudaStream_t stream) const {
  constexpr int w = Agreement::kWords;
  std::uint64_t* device_words = words_;
  const Agreement::Words words = mine.words();
  std::vector<std::uint64_t> every(w * static_cast<std::size_t>(ranks));
  check(cudaMemcpyAsync(device_words, words.data(), sizeof words, cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync (agreement)");
  nccl_check(ncclAllGather(device_words, device_words + w, w, ncclUint64, comm, stream), "ncclAllGather (agreement)",
             comm);
  check(cudaMemcpyAsync(every.data(), device_words + w, every.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost,
                        stream),
        "cudaMemcpyAsync (agreement)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (agreement)");
  compare_agreements(every, rank,
                     "every rank must build its permuter from the same global BMMC, element size and options");
}

void RankContext::refuse(cudaStream_t stream) const noexcept {
  try {
    agree(refused_agreement(), stream);
  } catch (...) {  // the peers disagree with a refusal, which is the point; the caller rethrows its own error
  }
}

void RankContext::barrier(cudaStream_t stream) const {
  std::uint64_t* word = words_ + Agreement::kWords * (1 + static_cast<std::size_t>(ranks));
  nccl_check(ncclAllReduce(word, word, 1, ncclUint64, ncclMax, comm, stream), "ncclAllReduce (barrier)", comm);
}

}  // namespace bmmc::nccl_detail
