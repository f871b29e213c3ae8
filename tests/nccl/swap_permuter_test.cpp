// In place across ranks over NCCL (NcclSwapPermuter on an NcclWindow) against the reference: one rank per GPU
// (threads, ncclCommInitAll), random data, every involution kind the single-process engine is tested with (rank
// bits swapped with high or low local bits, complements, reverse and bit-reverse, a non-BPC involution), several
// element sizes, with and without the agreement check; a non-involution and bad windows refused before anything
// is written; ranks that disagree all throw. One GPU runs the 1-rank cases; the rest need 2 or more GPUs.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "../../src/nccl/swap_permuter.hpp"  // internal
#include "bmmc/nccl/window.hpp"
#include "cuda/gpu_test_support.hpp"
#include "dist/dist_test_support.hpp"
#include "nccl/nccl_test_support.hpp"

namespace bmmc {
namespace {

using test::Comms;
using test::gpu_count;
using test::per_rank;

void expect_swapped(const Comms& c, const Bmmc& f, int eb, const std::string& what, const DistOptions& options = {}) {
  const int ranks = static_cast<int>(c.comms.size());
  const std::size_t total = (std::size_t{1} << f.n()) * eb, slice = total / ranks;
  const std::vector<unsigned char> whole = test::random_bytes(total, f.n() * 29 + eb);
  std::vector<unsigned char> ref(total), got(total);
  permute_reference(f, whole.data(), ref.data(), eb);
  per_rank(ranks, [&](int r) {
    const NcclSwapPermuter p(f, eb, c.comms[r], options);
    NcclWindow data = NcclWindow::allocate(c.comms[r], p.local_bytes());
    cudaMemcpy(data.data(), whole.data() + r * slice, slice, cudaMemcpyHostToDevice);
    cudaStream_t s, t;
    cudaStreamCreate(&s);
    cudaStreamCreate(&t);
    p(data, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(got.data() + r * slice, data.data(), slice, cudaMemcpyDeviceToHost);
    // Three more calls, the first on another stream: an involution gives the original back, and the engine's
    // staging, events and streams are reused (the caller orders its own window between the streams).
    p(data, t);
    cudaStreamSynchronize(t);
    p(data, s);
    p(data, s);
    cudaStreamSynchronize(s);
    std::vector<unsigned char> back(slice);
    cudaMemcpy(back.data(), data.data(), slice, cudaMemcpyDeviceToHost);
    EXPECT_EQ(std::memcmp(back.data(), whole.data() + r * slice, slice), 0) << what << ": four calls on rank " << r;
    cudaStreamDestroy(s);
    cudaStreamDestroy(t);
  });
  EXPECT_EQ(got, ref) << what;
}

TEST(NcclSwapEngine, OneRankAndBadInput) {
  REQUIRE_GPU();
  const Comms c(1);
  for (int eb : {4, 8}) {
    expect_swapped(c, bit_reverse(18), eb, "bit-reverse, 1 rank");
    expect_swapped(c, reverse(18), eb, "reverse, 1 rank");
  }
  EXPECT_THROW(NcclSwapPermuter(gray(18), 4, c.comms[0]), std::invalid_argument);  // not an involution
  const NcclSwapPermuter p(bit_reverse(16), 4, c.comms[0]);
  NcclWindow data = NcclWindow::allocate(c.comms[0], p.local_bytes());
  NcclWindow small = NcclWindow::allocate(c.comms[0], p.local_bytes() / 2);
  cudaMemset(data.data(), 0x3c, p.local_bytes());
  EXPECT_THROW(p(small, nullptr), std::invalid_argument);  // too small
  NcclWindow moved = std::move(small);
  EXPECT_THROW(p(small, nullptr), std::invalid_argument);  // moved from
  std::vector<unsigned char> after(p.local_bytes());
  cudaMemcpy(after.data(), data.data(), after.size(), cudaMemcpyDeviceToHost);
  EXPECT_EQ(after, std::vector<unsigned char>(after.size(), 0x3c));
}

TEST(NcclSwapEngine, InvolutionsAcrossRanks) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  const int ranks = gpu_count() >= 4 ? 4 : 2, g = ranks == 4 ? 2 : 1, m = 18, n = m + g;
  const Comms c(ranks);
  const Bmmc pl(random_bmmc(n, 5).matrix());
  const std::vector<std::pair<std::string, Bmmc>> maps = {
      {"reverse", reverse(n)},
      {"bit-reverse", bit_reverse(n)},
      {"top rank <-> top local", test::swaps(n, {{m - 1, n - 1}})},
      {"top rank <-> local 0", test::swaps(n, {{0, n - 1}})},
      {"rank 0 <-> local 3, 5 <-> 9, complement", test::swaps(n, {{3, m}, {5, 9}}, (BitVec{1} << 5) | (BitVec{1} << 9))},
      {"non-BPC involution", pl * test::swaps(n, {{1, n - 1}}) * pl.inverse()}};
  for (const auto& [name, f] : maps)
    for (int eb : {4, 8}) expect_swapped(c, f, eb, fmt::format("{}, {} ranks, {} B", name, ranks, eb));
  for (int eb : {1, 2, 16}) expect_swapped(c, test::swaps(n, {{0, n - 1}}), eb, fmt::format("local 0, {} B", eb));
  // Staged chunks through the copy engines (f moves low bits, fixes the top local bits) against the three passes
  // (f also moves the top local bit): both paths, and more chunks than staging slots.
  const Bmmc low = test::swaps(n, {{0, n - 1}}), low_and_top = test::swaps(n, {{0, n - 1}, {3, m - 1}});
  const NcclSwapPermuter staged(low, 8, c.comms[0]), three(low_and_top, 8, c.comms[0]);
  EXPECT_EQ(staged.chunks(), 2);  // chunks of at most 1 GiB, at least one chunk bit
  EXPECT_EQ(staged.staging_bytes(), 4 * staged.local_bytes() / 2);
  EXPECT_EQ(three.chunks(), 0);
  EXPECT_EQ(three.staging_bytes(), 0u);
  expect_swapped(c, low_and_top, 8, "local 0 and local 3 <-> top local: the three passes");
  DistOptions eight;
  eight.pieces = 8;  // chunks of local_bytes() / 8
  EXPECT_EQ(NcclSwapPermuter(low, 4, c.comms[0], eight).chunks(), 8);
  for (int eb : {4, 16}) expect_swapped(c, low, eb, fmt::format("local 0 in 8 staged chunks, {} B", eb), eight);
  DistOptions quiet;
  quiet.check_agreement = false;
  expect_swapped(c, test::swaps(n, {{0, n - 1}}), 8, "local 0 without the agreement check", quiet);
}

TEST(NcclSwapEngine, RanksThatDisagreeAllThrow) {
  REQUIRE_GPU();
  REQUIRE_GPUS(2);
  const Comms c(2);
  std::vector<std::string> messages(2), chunks(2);
  per_rank(2, [&](int r) {
    const NcclSwapPermuter p(r == 0 ? bit_reverse(20) : reverse(20), 4, c.comms[r]);
    NcclWindow data = NcclWindow::allocate(c.comms[r], p.local_bytes());
    try {
      p(data, nullptr);
    } catch (const std::invalid_argument& e) {
      messages[r] = e.what();
    }
    // The same map staged in different chunk counts (the agreement's piece word) must not pair up either.
    DistOptions o;
    o.pieces = r == 0 ? 8 : 0;
    const NcclSwapPermuter q(test::swaps(20, {{0, 19}}), 4, c.comms[r], o);
    try {
      q(data, nullptr);
    } catch (const std::invalid_argument& e) {
      chunks[r] = e.what();
    }
  });
  test::expect_every_rank_disagrees(messages);
  test::expect_every_rank_disagrees(chunks);
}

}  // namespace
}  // namespace bmmc
