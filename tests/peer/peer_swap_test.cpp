// PeerSwapPermuter on real GPUs: in place across ranks against the global reference for swaps of rank bits with
// high and low local bits (direct and conjugated), several swaps with a complement, a reversal and a non-BPC
// involution (element-wise pairs), 1, 2 and 4 ranks sharing one GPU and every GPU of the machine when there are
// two or more; bad buffers and non-involutions refused before anything is written.
#include "../../src/peer/peer_swap.hpp"  // internal

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <string>
#include <vector>

#include "../cuda/gpu_test_support.hpp"
#include "peer_test_support.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"

namespace bmmc {
namespace {

void expect_swapped(const Bmmc& f, int eb, const std::vector<int>& devices, const std::string& what,
                    std::size_t max_staging_chunk = PeerSwapPermuter::kMaxStagingChunk,
                    PeerEngine staged_engine = PeerEngine::Auto) {
  const PeerSwapPermuter p(f, eb, devices, {}, max_staging_chunk, staged_engine);
  const std::size_t g = devices.size(), bytes = p.local_bytes();
  const std::vector<unsigned char> whole = test::random_bytes(bytes * g, f.complement() + 3 * eb);
  std::vector<unsigned char> ref(whole.size());
  permute_reference(f, whole.data(), ref.data(), eb);
  std::vector<DeviceBuffer> data;
  std::vector<void*> ptrs;
  for (std::size_t r = 0; r < g; ++r) {
    ScopedDevice on(devices[r]);
    data.emplace_back(bytes);
    data[r].upload(whole.data() + r * bytes, bytes);
    ptrs.push_back(data[r].get());
  }
  p(ptrs);
  test::synchronize(devices);
  std::vector<unsigned char> got(bytes);
  for (std::size_t r = 0; r < g; ++r) {
    data[r].download(got.data(), bytes);
    ASSERT_EQ(std::memcmp(got.data(), ref.data() + r * bytes, bytes), 0)
        << what << ": rank " << r << " of " << g << ", " << eb << "-byte elements\n"
        << (p.staged_plan() ? describe(*p.staged_plan()) : describe(p.plan()));
  }
}

TEST(PeerSwap, StagedChunksThroughBothEngines) {
  REQUIRE_GPU();
  // Maps that move low bits and fix the top local bits run chunk by chunk, in place, through the copies (the
  // default) or the push engine: 64 chunks of 2^12 elements here, so the staging buffers are reused many times
  // on both stream sets.
  for (const auto& devices : test::device_lists()) {
    const int g = __builtin_ctz(static_cast<unsigned>(devices.size())), m = 18, n = m + g;
    if (g == 0) continue;
    const std::string on = fmt::format("{} ranks on devices {}", devices.size(), fmt::join(devices, ","));
    for (PeerEngine engine : {PeerEngine::Auto, PeerEngine::Push})
      for (int eb : {1, 4, 8, 16}) {
        const std::size_t chunk = std::size_t{4096} * eb;
        const std::string how = fmt::format("staged ({}), ", to_string(engine));
        const Bmmc local0 = test::swaps(n, {{0, n - 1}});
        const PeerSwapPermuter p(local0, eb, devices, {}, chunk, engine);
        ASSERT_TRUE(p.staged_plan()) << on;
        EXPECT_EQ(p.staged_plan()->chunks(), 64u);
        EXPECT_EQ(p.staged_engine(), engine == PeerEngine::Push ? PeerEngine::Push : PeerEngine::Copy);
        EXPECT_EQ(p.staging_bytes(), (engine == PeerEngine::Push ? 2 : 4) * chunk);
        expect_swapped(local0, eb, devices, how + "local 0, " + on, chunk, engine);
        expect_swapped(test::swaps(n, {{3, m}, {5, 9}}, (BitVec{1} << 5) | (BitVec{1} << 9)), eb, devices,
                       how + "rank 0 <-> local 3, 5 <-> 9, complement, " + on, chunk, engine);
      }
    // The top local bit moves: no chunks, the direct pass.
    EXPECT_FALSE(PeerSwapPermuter(test::swaps(n, {{m - 1, n - 1}}), 8, devices).staged_plan());
    // Building and destroying a staged permuter leaves the caller's current device alone.
    check(cudaSetDevice(0), "cudaSetDevice");
    { const PeerSwapPermuter staged(test::swaps(n, {{0, n - 1}}), 4, devices, {}, std::size_t{4096} * 4); }
    int current = -1;
    check(cudaGetDevice(&current), "cudaGetDevice");
    EXPECT_EQ(current, 0) << on;
  }
}

TEST(PeerSwap, InvolutionsAcrossRanks) {
  REQUIRE_GPU();
  for (const auto& devices : test::device_lists()) {
    const int g = __builtin_ctz(static_cast<unsigned>(devices.size())), m = 18, n = m + g;
    const std::string on = fmt::format("{} ranks on devices {}", devices.size(), fmt::join(devices, ","));
    std::vector<std::pair<std::string, Bmmc>> maps = {{"reverse", reverse(n)}, {"bit-reverse", bit_reverse(n)}};
    if (g > 0) {
      maps.emplace_back("top rank <-> top local", test::swaps(n, {{m - 1, n - 1}}));
      maps.emplace_back("top rank <-> local 0", test::swaps(n, {{0, n - 1}}));
      maps.emplace_back("rank 0 <-> local 3, 5 <-> 9, complement", test::swaps(n, {{3, m}, {5, 9}}, (BitVec{1} << 5) | (BitVec{1} << 9)));
      const Bmmc pl(random_bmmc(n, 5).matrix());
      maps.emplace_back("non-BPC involution", pl * test::swaps(n, {{1, n - 1}}) * pl.inverse());
    }
    for (const auto& [name, f] : maps)
      for (int eb : {4, 8}) expect_swapped(f, eb, devices, name + ", " + on);
    if (g > 0)
      for (int eb : {1, 2, 16}) expect_swapped(test::swaps(n, {{0, n - 1}}), eb, devices, "local 0, " + on);
  }
}

TEST(PeerSwap, BadInputRefusedBeforeWriting) {
  REQUIRE_GPU();
  EXPECT_THROW(PeerSwapPermuter(random_bmmc(18, 1), 4, {0, 0}), std::invalid_argument);  // not an involution
  const PeerSwapPermuter p(test::swaps(18, {{0, 17}}), 4, {0, 0});
  const std::size_t bytes = p.local_bytes();
  DeviceBuffer a(bytes), b(bytes);
  a.fill_bytes(7);
  b.fill_bytes(9);
  const auto says = [](const std::string& message, const char* part) {
    EXPECT_NE(message.find(part), std::string::npos) << "expected \"" << part << "\" in: " << message;
  };
  says(test::error_message([&] { p({a.get()}); }), "expected 2");
  says(test::error_message([&] {
         PeerSwapPermuter(test::swaps(18, {{0, 17}}), 4, {0, 0}, {}, PeerSwapPermuter::kMaxStagingChunk,
                          static_cast<PeerEngine>(9));
       }),
       "the staged engine holds 9, which names no engine");
  says(test::error_message([&] { p({a.get(), nullptr}); }), "data of rank 1 is null");
  says(test::error_message([&] { p({a.get(), a.as<char>() + 256}); }), "overlaps");
  says(test::error_message([&] { p({a.get(), b.as<char>() + 4}); }), "not aligned");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<unsigned char> got(bytes);
  a.download(got.data(), bytes);
  EXPECT_EQ(got, std::vector<unsigned char>(bytes, 7));
  b.download(got.data(), bytes);
  EXPECT_EQ(got, std::vector<unsigned char>(bytes, 9));
}

}  // namespace
}  // namespace bmmc
