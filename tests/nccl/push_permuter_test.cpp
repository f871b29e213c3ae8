// The fused NCCL engine (NcclPushPermuter over NcclWindows) against the reference: one rank per GPU (threads,
// ncclCommInitAll), random data, poisoned outputs and scratch, the input checked unchanged; one-pass push plans
// (runs already on one rank) and two-pass ones (random BMMCs, the rank bit swapped with local bit 0) for several
// element sizes, both through push + finish and through the copy engines in pieces (2^26 elements per rank); bad buffers refused before anything is written; ranks that disagree all throw. One GPU runs the
// 1-rank cases; the multi-rank cases need 2 or more GPUs of one host and skip otherwise.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "../../src/nccl/push_permuter.hpp"  // internal
#include "bmmc/nccl/window.hpp"
#include "cuda/gpu_test_support.hpp"
#include "dist/dist_test_support.hpp"
#include "nccl/nccl_test_support.hpp"

namespace bmmc {
namespace {

using test::Comms;
using test::gpu_count;
using test::per_rank;

// Every rank permutes its slice of one random array; the gathered output must be the reference's. Returns whether
// the ranks ran fused.
bool expect_fused_matches(const Comms& c, const Bmmc& global, int eb, const std::string& what,
                          const DistOptions& options = {}) {
  const int ranks = static_cast<int>(c.comms.size());
  const std::size_t total = (std::size_t{1} << global.n()) * eb, slice = total / ranks;
  const std::vector<unsigned char> whole = test::random_bytes(total, global.n() * 17 + eb);
  std::vector<unsigned char> ref(total), got(total);
  permute_reference(global, whole.data(), ref.data(), eb);
  std::vector<int> fused(ranks);
  per_rank(ranks, [&](int r) {
    const NcclPushPermuter p(global, eb, c.comms[r], options);
    fused[r] = p.fused();
    NcclWindow out = NcclWindow::allocate(c.comms[r], p.local_bytes());
    std::optional<NcclWindow> scratch;
    if (p.scratch_bytes() > 0) {
      scratch.emplace(NcclWindow::allocate(c.comms[r], p.scratch_bytes()));
      cudaMemset(scratch->data(), 0xa5, p.scratch_bytes());
    }
    void* in = nullptr;
    cudaMalloc(&in, slice);
    cudaMemcpy(in, whole.data() + r * slice, slice, cudaMemcpyHostToDevice);
    cudaStream_t s;
    cudaStreamCreate(&s);
    // Twice, the output poisoned before each call (the random data has no zero byte): the second call reuses the
    // engine's events, streams and ring slots.
    for (int call = 0; call < 2; ++call) {
      cudaMemset(out.data(), 0, slice);
      p(in, out, scratch ? &*scratch : nullptr, s);
      cudaStreamSynchronize(s);
      if (call == 0) cudaMemcpy(got.data() + r * slice, out.data(), slice, cudaMemcpyDeviceToHost);
    }
    std::vector<unsigned char> again(slice);
    cudaMemcpy(again.data(), out.data(), slice, cudaMemcpyDeviceToHost);
    EXPECT_EQ(std::memcmp(again.data(), got.data() + r * slice, slice), 0) << what << ": second call of rank " << r;
    std::vector<unsigned char> back(slice);
    cudaMemcpy(back.data(), in, slice, cudaMemcpyDeviceToHost);
    EXPECT_EQ(std::memcmp(back.data(), whole.data() + r * slice, slice), 0) << what << ": input of rank " << r;
    cudaStreamDestroy(s);
    cudaFree(in);
  });
  EXPECT_EQ(got, ref) << what;
  for (int r = 1; r < ranks; ++r) EXPECT_EQ(fused[r], fused[0]) << what;
  return fused[0] != 0;
}

TEST(NcclPushEngine, OneRankRunsFused) {
  REQUIRE_GPU();
  const Comms c(1);
  for (int eb : {1, 4, 8, 16}) {
    const bool fused = expect_fused_matches(c, random_bmmc(18, eb), eb, fmt::format("random, 1 rank, {} B", eb));
    EXPECT_TRUE(fused) << "one rank is always load/store accessible";
  }
  const NcclPushPermuter p(random_bmmc(18, 2), 4, c.comms[0]);
  EXPECT_TRUE(p.fused()) << p.fallback_reason();
  EXPECT_EQ(p.scratch_bytes(), 0u) << "one rank: every output run is on its only rank";
  EXPECT_NE(p.push_source().find("bmmc_push"), std::string::npos);
}

TEST(NcclPushEngine, BadBuffersAreRefusedBeforeWriting) {
  REQUIRE_GPU();
  const Comms c(1);
  const NcclPushPermuter p(gray(14), 4, c.comms[0]);
  ASSERT_TRUE(p.fused()) << p.fallback_reason();
  NcclWindow out = NcclWindow::allocate(c.comms[0], p.local_bytes());
  NcclWindow small = NcclWindow::allocate(c.comms[0], p.local_bytes() / 2);
  void* d = nullptr;
  cudaMalloc(&d, 2 * p.local_bytes());
  auto* in = static_cast<unsigned char*>(d);
  std::vector<unsigned char> host(p.local_bytes());
  const auto refused = [&](const void* src, const NcclWindow& dst, const char* what) {
    cudaMemset(out.data(), 0x5a, p.local_bytes());
    EXPECT_THROW(p(src, dst, nullptr, nullptr), std::invalid_argument) << what;
    std::vector<unsigned char> after(p.local_bytes());
    cudaMemcpy(after.data(), out.data(), after.size(), cudaMemcpyDeviceToHost);
    for (unsigned char b : after) ASSERT_EQ(b, 0x5a) << what << ": the output was written";
  };
  refused(nullptr, out, "null input");
  refused(host.data(), out, "host input");
  refused(in + 4, out, "unaligned input");
  refused(in, small, "output window too small");
  refused(out.data(), out, "input inside the output window");
  NcclWindow moved = std::move(small);
  refused(in, small, "moved-from window");
  EXPECT_THROW(NcclWindow(c.comms[0], in + 4, 4096), std::invalid_argument);  // unaligned
  EXPECT_THROW(NcclWindow::allocate(c.comms[0], 0), std::invalid_argument);
  cudaFree(d);
}

TEST(NcclPushEngine, TwoOrMoreRanksEveryMapKind) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  const int ranks = gpu_count() >= 4 ? 4 : 2;
  const Comms c(ranks);
  const int n = 22;
  const Bmmc low = test::swaps(n, {{0, n - 1}});      // rank bit <-> local bit 0: output runs span ranks, two passes
  const Bmmc top = test::swaps(n, {{n - 2, n - 1}});  // rank bit <-> the top local bit: runs stay whole, one pass
  for (int eb : {1, 4, 8, 16}) {
    const std::string r = fmt::format("{} ranks, {} B", ranks, eb);
    // Four ranks: a random BMMC sends to all four (k = 2) and needs a second pass: the portable engine runs it.
    EXPECT_EQ(expect_fused_matches(c, random_bmmc(n, eb), eb, "random BMMC, " + r), ranks == 2);
    EXPECT_TRUE(expect_fused_matches(c, random_bpc(n, eb + 7), eb, "random BPC, " + r));
    EXPECT_TRUE(expect_fused_matches(c, low, eb, "rank <-> local bit 0, " + r));
    EXPECT_TRUE(expect_fused_matches(c, top, eb, "rank <-> top local bit, " + r));
    EXPECT_TRUE(expect_fused_matches(c, reverse(n), eb, "reverse (whole slices move), " + r));
  }
  DistOptions quiet;
  quiet.check_agreement = false;  // the barrier is then a one-word all-reduce
  EXPECT_EQ(expect_fused_matches(c, random_bmmc(n, 99), 4, "random BMMC without the agreement check", quiet), ranks == 2);
  const NcclPushPermuter one(top, 4, c.comms[0]);
  EXPECT_TRUE(one.push_plan().one_pass());
  EXPECT_EQ(one.scratch_bytes(), 0u);
  // Two-pass maps: through the copy engines in pieces where the pieces can be cut along tiles (the low swap, already
  // at 2^20–2^21 elements per rank), else push + finish through a whole scratch array (a random BMMC at this size).
  const NcclPushPermuter two(low, 4, c.comms[0]);
  EXPECT_FALSE(two.push_plan().one_pass());
  EXPECT_GT(two.pieces(), 0);
  EXPECT_LE(two.scratch_bytes() * 8, two.local_bytes());
  const NcclPushPermuter finish(random_bmmc(n, 4), 4, c.comms[0]);
  EXPECT_FALSE(finish.push_plan().one_pass());
  EXPECT_EQ(finish.pieces(), 0);
  if (ranks == 2) {
    EXPECT_EQ(finish.scratch_bytes(), finish.local_bytes());
  } else {  // k = 2: the portable engine (scratch: its pipeline's 1/8 where its pieces can be cut, else a whole array)
    EXPECT_FALSE(finish.fused());
    EXPECT_NE(finish.fallback_reason().find("sends to 4 ranks"), std::string::npos) << finish.fallback_reason();
  }
}

// The copy-engine path of two-pass maps at 2^26 elements per rank, where every map's pieces can be cut: random
// BMMCs (4-, 8- and 16-byte elements), a random BPC, the rank bit swapped with local bit 0, the default piece count
// and an odd one, with and without the agreement check.
TEST(NcclPushEngine, TwoPassMapsThroughTheCopyEnginesInPieces) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  const Comms c(2);
  const int n = 27;
  const Bmmc low = test::swaps(n, {{0, n - 1}});
  for (int eb : {4, 8, 16})
    EXPECT_TRUE(expect_fused_matches(c, random_bmmc(n, eb + 4), eb, fmt::format("random BMMC, {} B", eb)));
  EXPECT_TRUE(expect_fused_matches(c, random_bpc(n, 8), 4, "random BPC"));
  EXPECT_TRUE(expect_fused_matches(c, low, 8, "rank <-> local bit 0"));
  DistOptions odd;
  odd.pieces = 5;
  odd.check_agreement = false;
  EXPECT_TRUE(expect_fused_matches(c, low, 4, "rank <-> local bit 0, 5 pieces, no agreement check", odd));
  DistOptions ring;
  ring.pieces = 2;  // as many pieces as ring buffers
  EXPECT_TRUE(expect_fused_matches(c, low, 4, "rank <-> local bit 0, 2 pieces", ring));
  ring.pieces = 7;
  ring.depth = 3;
  EXPECT_TRUE(expect_fused_matches(c, random_bmmc(n, 3), 4, "random BMMC, 7 pieces over a ring of 3", ring));
  const NcclPushPermuter p(random_bmmc(n, 8), 4, c.comms[0]);
  EXPECT_FALSE(p.push_plan().one_pass());
  EXPECT_EQ(p.pieces(), 26);
  EXPECT_LE(p.scratch_bytes() * 8, p.local_bytes());
}

// A two-pass map without its scratch window is refused on every rank before anything moves; ranks that disagree
// on the permutation all throw instead of hanging.
TEST(NcclPushEngine, MissingScratchAndRanksThatDisagree) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  const Comms c(2);
  std::vector<std::string> messages(2);
  per_rank(2, [&](int r) {
    const NcclPushPermuter p(test::swaps(20, {{0, 19}}), 4, c.comms[r]);  // rank bit <-> local bit 0: two passes
    EXPECT_GT(p.scratch_bytes(), 0u);
    NcclWindow out = NcclWindow::allocate(c.comms[r], p.local_bytes());
    void* in = nullptr;
    cudaMalloc(&in, p.local_bytes());
    EXPECT_THROW(p(in, out, nullptr, nullptr), std::invalid_argument) << "rank " << r << ": no scratch window";
    const NcclPushPermuter q(r == 0 ? bit_reverse(20) : gray(20), 4, c.comms[r]);
    // Window registration is collective: both ranks allocate the scratch, whichever plan they made.
    NcclWindow scratch = NcclWindow::allocate(c.comms[r], q.local_bytes());
    try {
      q(in, out, &scratch, nullptr);
    } catch (const std::invalid_argument& e) {
      messages[r] = e.what();
    }
    cudaFree(in);
  });
  test::expect_every_rank_disagrees(messages);
}

}  // namespace
}  // namespace bmmc
