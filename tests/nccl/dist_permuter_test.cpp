// The portable NCCL engine against the reference: every GPU of this machine is one rank (a thread each, the
// communicators from ncclCommInitAll), random data, poisoned outputs, input preserved and destroyed, random
// BMMCs and BPCs, a rank↔local bit swap, several element sizes; ranks that disagree all throw; bad buffers are
// refused before anything is written. One GPU runs the 1-rank cases (a purely local plan through the engine);
// the multi-rank cases need 2 or more GPUs of one host and skip otherwise.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cuda/device.hpp"
#include "../../src/nccl/dist_permuter.hpp"  // internal
#include "cuda/gpu_test_support.hpp"
#include "dist/dist_test_support.hpp"
#include "dist/error_message.hpp"
#include "nccl/nccl_test_support.hpp"

namespace bmmc {
namespace {

using test::Comms;
using test::gpu_count;
using test::per_rank;

void expect_engine_matches(const Comms& c, const Bmmc& global, int eb, bool destroy, const std::string& what,
                           const DistOptions& options = {}, bool expect_pipelined = false) {
  const int ranks = static_cast<int>(c.comms.size());
  const std::size_t total = (std::size_t{1} << global.n()) * eb, slice = total / ranks;
  const std::vector<unsigned char> whole = test::random_bytes(total, global.n() * 131 + eb);
  std::vector<unsigned char> ref(total), got(total);
  permute_reference(global, whole.data(), ref.data(), eb);
  per_rank(ranks, [&](int r) {
    const DistPermuter p(global, eb, c.comms[r], options);
    if (expect_pipelined) {
      EXPECT_TRUE(p.pipelined()) << what << ": " << p.pipeline_note();
      if (options.pieces >= 32 || options.pieces == 0) EXPECT_LE(p.scratch_bytes() * 8, p.local_bytes()) << what;
    }
    void *in = nullptr, *out = nullptr, *scratch = nullptr;
    cudaMalloc(&in, slice);
    cudaMalloc(&out, slice);
    if (expect_pipelined) {  // the caller's scratch, poisoned
      cudaMalloc(&scratch, p.scratch_bytes());
      cudaMemset(scratch, 0xa5, p.scratch_bytes());
    }
    cudaMemcpy(in, whole.data() + r * slice, slice, cudaMemcpyHostToDevice);
    cudaMemset(out, 0, slice);  // poisoned: the random data has no zero byte
    cudaStream_t s;
    cudaStreamCreate(&s);
    if (destroy)
      p.permute_destroying(in, out, s);
    else
      p(in, out, scratch, s);
    cudaStreamSynchronize(s);
    if (scratch) cudaFree(scratch);
    cudaMemcpy(got.data() + r * slice, out, slice, cudaMemcpyDeviceToHost);
    if (!destroy) {
      std::vector<unsigned char> back(slice);
      cudaMemcpy(back.data(), in, slice, cudaMemcpyDeviceToHost);
      EXPECT_EQ(std::memcmp(back.data(), whole.data() + r * slice, slice), 0) << what << ": input of rank " << r;
    }
    cudaStreamDestroy(s);
    cudaFree(in);
    cudaFree(out);
  });
  EXPECT_EQ(got, ref) << what << (destroy ? " (input destroyed)" : "");
}

TEST(NcclEngine, OneRankIsALocalPass) {
  REQUIRE_GPU();
  const Comms c(1);
  for (int eb : {1, 4, 8, 16})
    for (bool destroy : {false, true}) expect_engine_matches(c, random_bmmc(18, eb), eb, destroy, "random, 1 rank");
  const DistPermuter p(bit_reverse(10), 4, c.comms[0]);
  EXPECT_TRUE(p.step().local_only);
  EXPECT_EQ(p.ranks(), 1);
}

TEST(NcclEngine, BadBuffersAreRefusedBeforeWriting) {
  REQUIRE_GPU();
  const Comms c(1);
  const DistPermuter p(gray(12), 4, c.comms[0]);
  void* d = nullptr;
  cudaMalloc(&d, 3 * p.local_bytes());
  auto* b = static_cast<unsigned char*>(d);
  std::vector<unsigned char> host(p.local_bytes());
  EXPECT_THROW(p(nullptr, b, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(p(host.data(), b, nullptr, nullptr), std::invalid_argument);         // host memory
  EXPECT_THROW(p(b, b + 8, nullptr, nullptr), std::invalid_argument);               // overlapping
  EXPECT_THROW(p(b, b + p.local_bytes(), b + 4, nullptr), std::invalid_argument);   // scratch overlaps in
  EXPECT_THROW(p(b + 1, b + p.local_bytes(), nullptr, nullptr), std::invalid_argument);  // unaligned
  DistOptions bad;
  bad.exchange_comms = 3;
  EXPECT_THROW(DistPermuter(gray(12), 4, c.comms[0], bad), std::invalid_argument);
  bad.exchange_comms = 2;
  bad.depth = 1;
  EXPECT_THROW(DistPermuter(gray(12), 4, c.comms[0], bad), std::invalid_argument);
  bad.depth = 2;
  bad.pieces = -1;
  EXPECT_NE(test::error_message([&] { DistPermuter(gray(12), 4, c.comms[0], bad); }).find("at least one piece"),
            std::string::npos);
  cudaFree(d);
}

void every_map_kind(int ranks) {
  const Comms c(ranks);
  const int n = 22;
  const Bmmc swap_low = test::swaps(n, {{0, n - 1}});  // rank bit <-> local bit 0: k = 1
  for (int eb : {1, 4, 8, 16})
    for (bool destroy : {false, true}) {
      expect_engine_matches(c, random_bmmc(n, eb), eb, destroy, fmt::format("random BMMC, {} ranks", ranks));
      expect_engine_matches(c, random_bpc(n, eb + 1), eb, destroy, "random BPC");
      expect_engine_matches(c, swap_low, eb, destroy, "rank <-> local bit 0");
      expect_engine_matches(c, reverse(n), eb, destroy, "reverse (k = 0, whole slices move)");
    }
}

// Two ranks, and four as its own test: where the machine has fewer GPUs the four-rank test skips and says so.
TEST(NcclEngine, TwoRanksEveryMapKind) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  every_map_kind(2);
}

TEST(NcclEngine, FourRanksEveryMapKind) {
  REQUIRE_GPU();
  REQUIRE_GPUS(4);
  every_map_kind(4);
}

// The pipelined exchange (pieces of whole tiles, two buffers each way, scratch ≤ 1/8 for 32 pieces and for the
// default, 0 = the fewest within 1/8) at sizes where the piece rows fit: 2^26 elements per rank.
TEST(NcclEngine, PipelinedExchangeMatchesTheReference) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  const Comms c(2);
  const int n = 27;
  const Bmmc swap_low = test::swaps(n, {{0, n - 1}});
  for (auto [eb, pieces, depth, comms] : {std::tuple{4, 32, 2, 2}, std::tuple{4, 7, 2, 2}, std::tuple{8, 32, 2, 2},
                                          std::tuple{4, 64, 4, 2}, std::tuple{8, 9, 3, 2}, std::tuple{4, 32, 2, 1},
                                          std::tuple{4, 5, 2, 1}, std::tuple{4, 0, 2, 1}, std::tuple{16, 0, 2, 1}}) {
    DistOptions o;
    o.pieces = pieces;
    o.depth = depth;
    o.exchange_comms = comms;
    const std::string what =
        fmt::format("{} pieces, ring of {}, {} communicator(s), {}-byte elements", pieces, depth, comms, eb);
    expect_engine_matches(c, random_bmmc(n, eb + pieces), eb, false, "random BMMC, " + what, o, true);
    if (eb == 8) continue;
    expect_engine_matches(c, random_bpc(n, eb * pieces), eb, false, "random BPC, " + what, o, true);
    expect_engine_matches(c, swap_low, eb, false, "rank <-> local bit 0, " + what, o, true);
  }
  // One piece asked for: the unpipelined path, with one local array of scratch.
  DistOptions one;
  one.pieces = 1;
  const DistPermuter p(random_bmmc(n, 3), 4, c.comms[0], one);
  EXPECT_FALSE(p.pipelined());
  EXPECT_EQ(p.scratch_bytes(), p.local_bytes());
}

// The engine's own scratch (ncclMemAlloc, registered with NCCL), used by calls that pass none: two calls on two
// streams back to back, with no synchronisation between them, both right — the second waits until the first is
// done with the scratch; then the engine is destroyed right after enqueuing a call (its destructor waits for it).
TEST(NcclEngine, OwnRegisteredScratchAcrossStreams) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  const Comms c(2);
  const int n = 27, eb = 4;
  for (int comms : {1, 2}) {
    const Bmmc global = random_bmmc(n, 40 + comms);
    const std::size_t total = (std::size_t{1} << n) * eb, slice = total / 2;
    const std::vector<unsigned char> whole = test::random_bytes(total, 77 + comms);
    std::vector<unsigned char> ref(total), got1(total), got2(total);
    permute_reference(global, whole.data(), ref.data(), eb);
    per_rank(2, [&](int r) {
      DistOptions o;
      o.exchange_comms = comms;
      void *in = nullptr, *out1 = nullptr, *out2 = nullptr;
      cudaMalloc(&in, slice);
      cudaMalloc(&out1, slice);
      cudaMalloc(&out2, slice);
      cudaMemcpy(in, whole.data() + r * slice, slice, cudaMemcpyHostToDevice);
      cudaMemset(out1, 0, slice);
      cudaMemset(out2, 0, slice);
      cudaStream_t s1, s2;
      cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
      cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
      {
        const DistPermuter p(global, eb, c.comms[r], o);
        EXPECT_TRUE(p.pipelined()) << p.pipeline_note();
        EXPECT_TRUE(p.registered_scratch());
        p(in, out1, nullptr, s1);
        p(in, out2, nullptr, s2);
      }  // destroyed with both calls possibly still running
      cudaStreamSynchronize(s1);
      cudaStreamSynchronize(s2);
      cudaMemcpy(got1.data() + r * slice, out1, slice, cudaMemcpyDeviceToHost);
      cudaMemcpy(got2.data() + r * slice, out2, slice, cudaMemcpyDeviceToHost);
      cudaStreamDestroy(s1);
      cudaStreamDestroy(s2);
      cudaFree(in);
      cudaFree(out1);
      cudaFree(out2);
    });
    EXPECT_EQ(got1, ref) << "first call, " << comms << " communicator(s)";
    EXPECT_EQ(got2, ref) << "second call, " << comms << " communicator(s)";
  }
}

// A rank whose own arguments fail refuses in the agreement: its peer throws naming it instead of waiting forever.
TEST(NcclEngine, ARankWithBadBuffersMakesItsPeersThrow) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  const Comms c(2);
  std::vector<std::string> messages(2);
  per_rank(2, [&](int r) {
    const DistPermuter p(gray(20), 4, c.comms[r]);
    void *in = nullptr, *out = nullptr;
    cudaMalloc(&in, p.local_bytes());
    cudaMalloc(&out, p.local_bytes());
    try {
      p(in, r == 0 ? static_cast<void*>(static_cast<char*>(in) + 4) : out, nullptr, nullptr);  // rank 0: overlap
    } catch (const std::invalid_argument& e) {
      messages[r] = e.what();
    }
    cudaFree(in);
    cudaFree(out);
  });
  EXPECT_NE(messages[0].find("overlap"), std::string::npos) << messages[0];
  EXPECT_NE(messages[1].find("refused its own arguments"), std::string::npos) << messages[1];
}

// Ranks that disagree on the permutation — or on the pipeline, whose NCCL groups must pair up — all throw before
// any data moves, instead of hanging.
TEST(NcclEngine, RanksThatDisagreeAllThrow) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  const Comms c(2);
  const auto expect_all_throw = [&](const std::function<DistPermuter(int)>& make, const std::string& what) {
    std::vector<std::string> messages(2);
    per_rank(2, [&](int r) {
      const DistPermuter p = make(r);
      void *in = nullptr, *out = nullptr;
      cudaMalloc(&in, p.local_bytes());
      cudaMalloc(&out, p.local_bytes());
      try {
        p(in, out, nullptr, nullptr);
      } catch (const std::invalid_argument& e) {
        messages[r] = e.what();
      }
      cudaFree(in);
      cudaFree(out);
    });
    test::expect_every_rank_disagrees(messages, what);
  };
  expect_all_throw([&](int r) { return DistPermuter(r == 0 ? bit_reverse(16) : gray(16), 4, c.comms[r]); },
                   "different permutations");
  expect_all_throw(
      [&](int r) {
        DistOptions o;
        o.pieces = r == 0 ? 32 : 1;  // 2^26 elements per rank: rank 0 pipelines, rank 1 does not
        return DistPermuter(random_bmmc(27, 4), 4, c.comms[r], o);
      },
      "one rank pipelined, the other not");
}

}  // namespace
}  // namespace bmmc
