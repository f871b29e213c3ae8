// The distributed front door (bmmc/distributed.hpp) over NCCL communicators: one rank per GPU of this machine,
// each on its own thread (the calls are collective). Every out-of-place engine — Exchange (input kept or
// destroyed) and Pieces on plain device pointers, Auto on windows — and in place on a window, against the
// one-array reference; ranks that disagree all throw; pointer calls to the window engines are refused; NCCL
// failures are NcclErrors.
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
#include "bmmc/distributed.hpp"
#include "bmmc/nccl/error.hpp"
#include "bmmc/nccl/window.hpp"
#include "cuda/gpu_test_support.hpp"
#include "dist/dist_test_support.hpp"
#include "dist/error_message.hpp"
#include "nccl/nccl_test_support.hpp"

namespace bmmc {
namespace {

using test::Comms;
using test::per_rank;

// Runs the door on every rank of `c` over random data; returns the engine rank 0 reported.
DistEngine expect_door_matches(const Comms& c, const Bmmc& global, int eb, const DistributedOptions& o, bool windows,
                               const std::string& what) {
  const int ranks = static_cast<int>(c.comms.size());
  const std::size_t total = (std::size_t{1} << global.n()) * eb, slice = total / ranks;
  const std::vector<unsigned char> whole = test::random_bytes(total, global.n() * 13 + eb);
  std::vector<unsigned char> ref(total), got(total);
  permute_reference(global, whole.data(), ref.data(), eb);
  std::vector<DistEngine> engines(ranks);
  per_rank(ranks, [&](int r) {
    const DistributedPermuter p(global, eb, c.comms[r], o);
    engines[r] = p.engine();
    EXPECT_EQ(p.local_ranks(), 1);
    EXPECT_EQ(p.first_rank(), r);
    EXPECT_EQ(p.local_bytes(), slice);
    void* in = nullptr;
    cudaMalloc(&in, slice);
    cudaMemcpy(in, whole.data() + r * slice, slice, cudaMemcpyHostToDevice);
    cudaStream_t s;
    cudaStreamCreate(&s);
    if (o.in_place) {
      NcclWindow data = NcclWindow::allocate(c.comms[r], slice);
      cudaMemcpy(data.data(), in, slice, cudaMemcpyDeviceToDevice);
      p.permute_in_place(data, s);
      cudaStreamSynchronize(s);
      cudaMemcpy(got.data() + r * slice, data.data(), slice, cudaMemcpyDeviceToHost);
    } else if (windows) {
      NcclWindow out = NcclWindow::allocate(c.comms[r], slice);
      std::optional<NcclWindow> scratch;
      if (p.scratch_bytes()) scratch.emplace(NcclWindow::allocate(c.comms[r], p.scratch_bytes()));
      cudaMemset(out.data(), 0, slice);
      p(in, out, scratch ? &*scratch : nullptr, s);
      cudaStreamSynchronize(s);
      cudaMemcpy(got.data() + r * slice, out.data(), slice, cudaMemcpyDeviceToHost);
    } else {
      void* out = nullptr;
      cudaMalloc(&out, slice);
      cudaMemset(out, 0, slice);
      p({in}, {out}, {}, {s});
      cudaStreamSynchronize(s);
      cudaMemcpy(got.data() + r * slice, out, slice, cudaMemcpyDeviceToHost);
      cudaFree(out);
    }
    cudaStreamDestroy(s);
    cudaFree(in);
  });
  EXPECT_EQ(got, ref) << what;
  for (int r = 1; r < ranks; ++r) EXPECT_EQ(engines[r], engines[0]) << what;
  return engines[0];
}

void every_engine(int ranks) {
  const Comms c(ranks);
  const int n = 20 + (ranks > 1 ? 3 : 0);  // 2^22 elements per rank of two: the pieces cut along tiles
  const Bmmc swap_low = test::swaps(n, {{0, n - 1}});  // its pieces cut along tiles from 2^17 elements per rank
  for (const Bmmc& b : {random_bmmc(n, 3), bit_reverse(n), swap_low}) {
    for (DistEngine e : {DistEngine::Exchange, DistEngine::Pieces}) {
      if (e == DistEngine::Pieces && (ranks == 1 || b != swap_low)) continue;  // one rank exchanges nothing
      DistributedOptions o;
      o.engine = e;
      EXPECT_EQ(expect_door_matches(c, b, 4, o, false, fmt::format("{} on pointers", to_string(e))), e);
      EXPECT_EQ(expect_door_matches(c, b, 8, o, true, fmt::format("{} on windows", to_string(e))), e);
    }
    expect_door_matches(c, b, 4, {}, true, "auto on windows");
    DistributedOptions destroy;  // the exchange receives into the input (a device copy, freed after the call)
    destroy.destroy_input = true;
    EXPECT_EQ(expect_door_matches(c, b, 8, destroy, false, "input destroyed"), DistEngine::Exchange);
  }
  DistributedOptions o;
  o.in_place = true;
  for (const Bmmc& b : {test::swaps(n, {{0, n - 1}}), test::swaps(n, {{n - 2, n - 1}, {1, 3}})})
    expect_door_matches(c, b, 8, o, false, "in place");
}

TEST(NcclDoor, OneRankEveryEngine) {
  REQUIRE_GPU();
  every_engine(1);
}

TEST(NcclDoor, TwoRanksEveryEngine) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  every_engine(2);
}

TEST(NcclDoor, WindowEnginesRefusePlainPointersAndDisagreeingRanksAllThrow) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  const Comms c(2);
  std::vector<std::string> messages(2);
  per_rank(2, [&](int r) {
    // rank 1 builds another map: every rank throws, none hangs
    const DistributedPermuter p(r == 0 ? random_bmmc(18, 1) : random_bmmc(18, 2), 4, c.comms[r]);
    void *in = nullptr, *out = nullptr;
    cudaMalloc(&in, p.local_bytes());
    cudaMalloc(&out, p.local_bytes());
    if (p.engine() == DistEngine::Push || p.engine() == DistEngine::Pieces)
      EXPECT_NE(test::error_message([&] { p({in}, {out}); }).find("NcclWindow"), std::string::npos);
    // Windows are collective and alike on every rank: a whole local array of scratch (at least any engine's).
    NcclWindow w = NcclWindow::allocate(c.comms[r], p.local_bytes());
    NcclWindow scratch = NcclWindow::allocate(c.comms[r], p.local_bytes());
    messages[r] = test::error_message([&] { p(in, w, &scratch, nullptr); });
    cudaFree(in);
    cudaFree(out);
  });
  test::expect_every_rank_disagrees(messages, "door");
}

TEST(NcclDoor, NullCommunicatorIsRefusedAndNcclFailuresAreTyped) {
  REQUIRE_GPU();
  EXPECT_NE(test::error_message([] { DistributedPermuter(gray(12), 4, static_cast<ncclComm_t>(nullptr)); })
                .find("communicator is null"),
            std::string::npos);
  const Comms c(1);
  // ncclMemAlloc of an impossible size fails inside NCCL: an NcclError with NCCL's code.
  try {
    NcclWindow::allocate(c.comms[0], std::size_t{1} << 60);
    ADD_FAILURE() << "an allocation of 2^60 bytes succeeded";
  } catch (const NcclError& e) {
    EXPECT_NE(e.result(), 0);
    EXPECT_NE(std::string(e.what()).find("failed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bmmc
