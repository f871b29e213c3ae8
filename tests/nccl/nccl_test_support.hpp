// Shared by the NCCL engines' tests: one rank per GPU of this machine, each on its own thread (the engines' calls are
// collective), with communicators from ncclCommInitAll.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

// Skips the test unless this machine has at least k GPUs (one rank each).
#define REQUIRE_GPUS(k)                                                                              \
  if (const int gpus_here = ::bmmc::test::gpu_count(); gpus_here < (k))                              \
  GTEST_SKIP() << "needs " << (k) << " GPUs, this machine has " << gpus_here

namespace bmmc::test {

inline int gpu_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

struct Comms {
  explicit Comms(int ranks) : comms(ranks) {
    std::vector<int> devices(ranks);
    for (int i = 0; i < ranks; ++i) devices[i] = i;
    if (ncclCommInitAll(comms.data(), ranks, devices.data()) != ncclSuccess)
      throw std::runtime_error("ncclCommInitAll failed");
  }
  ~Comms() {
    for (ncclComm_t c : comms) ncclCommDestroy(c);
  }
  std::vector<ncclComm_t> comms;
};

// Runs body(rank) on one thread per rank (the calls are collective) and rethrows the first failure.
inline void per_rank(int ranks, const std::function<void(int)>& body) {
  std::vector<std::exception_ptr> errors(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        cudaSetDevice(r);
        body(r);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Every rank's message says the ranks disagree (each rank threw, none hung).
inline void expect_every_rank_disagrees(const std::vector<std::string>& messages, const std::string& what = "") {
  for (const std::string& m : messages) EXPECT_NE(m.find("disagree"), std::string::npos) << what << ": " << m;
}

}  // namespace bmmc::test
