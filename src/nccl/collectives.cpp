// The NCCL layer's shared collectives and checks (see collectives.hpp).
#include "collectives.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"

namespace bmmc::nccl_detail {

void nccl_check(ncclResult_t status, const char* call, ncclComm_t comm) {
  if (status == ncclSuccess) return;
  std::string what = fmt::format("{} failed: {} ({})", call, ncclGetErrorString(status), static_cast<int>(status));
  if (comm) {
    if (const char* last = ncclGetLastError(comm); last && *last) what += fmt::format(": {}", last);
  }
  throw std::runtime_error(what);
}

void check_disjoint(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes, const char* a_name,
                    const char* b_name) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  if (x < y + b_bytes && y < x + a_bytes)
    throw std::invalid_argument(fmt::format("{} ({}, {} bytes) and {} ({}, {} bytes) overlap; pass disjoint buffers",
                                            a_name, a, a_bytes, b_name, b, b_bytes));
}

namespace {

std::string describe_engine(const std::uint64_t* words) {
  switch (static_cast<AgreedEngine>(words[3])) {
    case AgreedEngine::Refused: return "refused its own arguments (that rank's error says why)";
    case AgreedEngine::Portable:
      return fmt::format("the portable engine in {} piece(s) over {} communicator(s), {} scratch", words[4], words[5],
                         words[6] ? "its own registered" : "the caller's or unregistered");
    case AgreedEngine::Fused: return fmt::format("the fused engine, push line bits {}", words[7]);
    case AgreedEngine::InPlace: return "the in-place engine";
  }
  return fmt::format("engine {}", words[3]);
}

}  // namespace

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
  const std::uint64_t words[w] = {mine.hash,   mine.n,    mine.elem_bytes, static_cast<std::uint64_t>(mine.engine),
                                  mine.pieces, mine.comms, mine.registered, mine.detail};
  std::vector<std::uint64_t> every(w * static_cast<std::size_t>(ranks));
  check(cudaMemcpyAsync(device_words, words, sizeof words, cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync (agreement)");
  nccl_check(ncclAllGather(device_words, device_words + w, w, ncclUint64, comm, stream), "ncclAllGather (agreement)",
             comm);
  check(cudaMemcpyAsync(every.data(), device_words + w, every.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost,
                        stream),
        "cudaMemcpyAsync (agreement)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (agreement)");
  bool agree = true;
  for (int r = 0; r < ranks; ++r)
    for (int i = 0; i < w; ++i) agree = agree && every[w * r + i] == every[i];
  if (agree) return;
  std::string views;
  for (int r = 0; r < ranks; ++r)
    views += fmt::format("{}rank {}: n = {}, {}-byte elements, plan hash {:#018x}, {}", r ? "; " : "", r,
                         every[w * r + 1], every[w * r + 2], every[w * r], describe_engine(&every[w * r]));
  throw std::invalid_argument(fmt::format(
      "the ranks disagree on the permutation, n, element size or engine (this is rank {}); every rank must build its "
      "permuter from the same global BMMC, element size and options: {}",
      rank, views));
}

void RankContext::refuse(cudaStream_t stream) const noexcept {
  try {
    agree(Agreement{}, stream);
  } catch (...) {  // the peers disagree with a refusal, which is the point; the caller rethrows its own error
  }
}

void RankContext::barrier(cudaStream_t stream) const {
  std::uint64_t* word = words_ + Agreement::kWords * (1 + static_cast<std::size_t>(ranks));
  nccl_check(ncclAllReduce(word, word, 1, ncclUint64, ncclMax, comm, stream), "ncclAllReduce (barrier)", comm);
}

}  // namespace bmmc::nccl_detail
