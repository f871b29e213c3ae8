// PeerPermuter on real GPUs: every engine against the global reference over poisoned outputs, for random BMMCs
// and BPCs, rank↔local bit swaps (one pass and two), a k = 0 map and reverse, several element sizes; on one GPU
// the ranks share it (devices {0, 0} and {0, 0, 0, 0}: the same kernels and copies, peer pointers being local
// ones), on a machine with 2 or more GPUs also over distinct devices. Bad buffers are refused before anything is
// written; Push where it cannot run says why, Auto falls back to Copy and says why.
#include "../../src/peer/peer_permuter.hpp"  // internal

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <memory>
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

constexpr unsigned char kPoison = 0xa5;

// A block upper-triangular map (A_hl = 0): no element changes rank except through A_hh.
Bmmc rank_local(int m, int g, std::uint64_t seed) {
  std::vector<BitVec> rows(m + g);
  const BitMatrix ll = random_bmmc(m, seed).matrix(), hh = random_bmmc(g, seed + 1).matrix();
  for (int i = 0; i < m; ++i) rows[i] = ll.row(i) | (g ? ((seed >> i) & 1) << m : 0);
  for (int i = 0; i < g; ++i) rows[m + i] = hh.row(i) << m;
  return from_rows(rows, seed & low_mask(m + g));
}

struct RankBuffers {
  std::vector<DeviceBuffer> in, out, scratch;
};

// Per device: input and output of `bytes`, scratch of scratch_bytes (the array's size when not given; none for 0).
RankBuffers allocate(const std::vector<int>& devices, std::size_t bytes, std::size_t scratch_bytes = ~std::size_t{0}) {
  RankBuffers b;
  for (int d : devices) {
    ScopedDevice on(d);
    b.in.emplace_back(bytes);
    b.out.emplace_back(bytes);
    b.scratch.emplace_back(scratch_bytes == ~std::size_t{0} ? bytes : scratch_bytes);
  }
  return b;
}

void expect_matches(const Bmmc& a, int eb, const std::vector<int>& devices, PeerEngine engine, const std::string& what,
                    int pieces = 0) {
  PeerOptions o;
  o.engine = engine;
  o.pieces = pieces;
  const PeerPermuter p(a, eb, devices, o);
  ASSERT_EQ(p.engine(), engine) << what << ": " << p.fallback_reason();
  const std::size_t g = devices.size(), bytes = p.local_bytes();
  const std::vector<unsigned char> whole = test::random_bytes(bytes * g, a.complement() + eb);
  std::vector<unsigned char> ref(whole.size());
  permute_reference(a, whole.data(), ref.data(), eb);
  RankBuffers b = allocate(devices, bytes, p.scratch_bytes());  // scratch of exactly scratch_bytes()
  std::vector<const void*> in;
  std::vector<void*> out, scratch;
  for (std::size_t r = 0; r < g; ++r) {
    b.in[r].upload(whole.data() + r * bytes, bytes);
    if (p.scratch_bytes()) b.scratch[r].fill_bytes(kPoison);
    in.push_back(b.in[r].get());
    out.push_back(b.out[r].get());
    scratch.push_back(b.scratch[r].get());
  }
  // Twice, the outputs poisoned before each call: the second reuses the engine's events, streams and ring slots.
  for (int call = 1; call <= 2; ++call) {
    for (std::size_t r = 0; r < g; ++r) b.out[r].fill_bytes(kPoison);
    p(in, out, p.scratch_bytes() ? scratch : std::vector<void*>{});
    test::synchronize(devices);
    std::vector<unsigned char> got(bytes);
    for (std::size_t r = 0; r < g; ++r) {
      b.out[r].download(got.data(), bytes);
      ASSERT_EQ(std::memcmp(got.data(), ref.data() + r * bytes, bytes), 0)
          << what << ": rank " << r << " of " << g << " (" << to_string(engine) << ", " << eb << "-byte elements, call "
          << call << ")\n"
          << describe(p.push_plan());
      b.in[r].download(got.data(), bytes);
      ASSERT_EQ(std::memcmp(got.data(), whole.data() + r * bytes, bytes), 0) << what << ": input of rank " << r;
    }
  }
}

TEST(PeerPermuter, BothEnginesEveryMapKind) {
  REQUIRE_GPU();
  for (const std::vector<int>& devices : test::device_lists()) {
    const int g = __builtin_ctz(static_cast<unsigned>(devices.size()));
    const std::string on = fmt::format("{} ranks on devices {}", devices.size(), fmt::join(devices, ","));
    const int m = 17;
    const int n = m + g;
    std::vector<std::pair<std::string, Bmmc>> maps = {
        {"random-bmmc", random_bmmc(n, 7 + g)}, {"random-bpc", random_bpc(n, 9 + g)},
        {"rank-local", rank_local(m, g, 11)},   {"reverse", reverse(n)},
        {"bit-reverse", bit_reverse(n)}};
    if (g > 0) {
      maps.emplace_back("swap local 0 <-> top rank", test::swaps(n, {{0, n - 1}}));
      maps.emplace_back("swap top local <-> top rank", test::swaps(n, {{m - 1, n - 1}}));
    }
    for (const auto& [name, a] : maps)
      for (int eb : {4, 8})
        for (PeerEngine e : {PeerEngine::Push, PeerEngine::Copy}) expect_matches(a, eb, devices, e, name + ", " + on);
    for (int eb : {1, 2, 16}) expect_matches(random_bmmc(n, 40 + eb), eb, devices, PeerEngine::Push, "random, " + on);
  }
}

// The copy engine in pieces (the portable NCCL engine's pipeline with cudaMemcpyPeerAsync in NCCL's place): every
// map kind at 2^26 elements per rank (pieces are cut along tiles, which needs ranks of that size: dist_plan.cpp's
// piece rows), the default piece count and an odd one; 8- and 16-byte elements for the two-pass maps, which Auto
// gives this engine; a rank-local map (no exchange), and ranks too small to cut refused.
TEST(PeerPermuter, CopyPiecesEveryMapKind) {
  REQUIRE_GPU();
  for (const std::vector<int>& devices : test::device_lists()) {
    const int g = __builtin_ctz(static_cast<unsigned>(devices.size()));
    const std::string on = fmt::format("{} ranks on devices {}", devices.size(), fmt::join(devices, ","));
    const int m = 26;
    const int n = m + g;
    std::vector<std::pair<std::string, Bmmc>> maps = {
        {"random-bmmc", random_bmmc(n, 17 + g)}, {"random-bpc", random_bpc(n, 19 + g)},
        {"rank-local", rank_local(m, g, 21)},    {"reverse", reverse(n)}};
    if (g > 0) {
      maps.emplace_back("swap local 0 <-> top rank", test::swaps(n, {{0, n - 1}}));
      maps.emplace_back("swap top local <-> top rank", test::swaps(n, {{m - 1, n - 1}}));
    }
    if (g == 2) maps.erase(maps.begin() + 1, maps.begin() + 4);  // 4 ranks of 2^26: random BMMC and the swaps
    for (const auto& [name, a] : maps) {
      if (name == "random-bmmc") {
        expect_matches(a, 4, devices, PeerEngine::CopyPieces, name + ", 5 pieces, " + on, 5);
        expect_matches(a, 4, devices, PeerEngine::CopyPieces, name + ", 2 pieces (= the ring), " + on, 2);
      }
      expect_matches(a, 4, devices, PeerEngine::CopyPieces, name + ", " + on);
    }
    if (g == 1)
      for (int eb : {8, 16}) {
        expect_matches(random_bmmc(n, 30 + eb), eb, devices, PeerEngine::CopyPieces, "random-bmmc, " + on);
        expect_matches(test::swaps(n, {{0, n - 1}}), eb, devices, PeerEngine::CopyPieces, "swap local 0, " + on);
      }
  }
  PeerOptions o;
  o.engine = PeerEngine::CopyPieces;
  const PeerPermuter p(test::swaps(27, {{0, 26}}), 8, {0, 0}, o);
  EXPECT_EQ(p.pieces(), 26);  // two ranks: the fewest pieces within 1/8 scratch (dist/schedule.hpp)
  EXPECT_LE(p.scratch_bytes() * 8, p.local_bytes());
  EXPECT_NE(test::error_message([&] { PeerPermuter(random_bmmc(6, 1), 4, {0, 0}, o); })
                .find("the copy-pieces engine cannot run"),
            std::string::npos);
}

TEST(PeerPermuter, OnePassOnlyWhenRunsStayOnOneRank) {
  REQUIRE_GPU();
  const PeerPermuter top(test::swaps(18, {{16, 17}}), 4, {0, 0});
  EXPECT_EQ(top.engine(), PeerEngine::Push);
  EXPECT_EQ(top.scratch_bytes(), 0u);
  // The rank bit swapped with local bit 0 needs a finishing pass after the push: Auto moves it through the copy
  // engines in pieces instead (scratch within 1/8); the push insisted on lands in a whole scratch array.
  const PeerPermuter low(test::swaps(18, {{0, 17}}), 4, {0, 0});
  EXPECT_FALSE(low.push_plan().one_pass());
  EXPECT_EQ(low.engine(), PeerEngine::CopyPieces);
  EXPECT_LE(low.scratch_bytes() * 8, low.local_bytes());
  PeerOptions push;
  push.engine = PeerEngine::Push;
  const PeerPermuter low_push(test::swaps(18, {{0, 17}}), 4, {0, 0}, push);
  EXPECT_EQ(low_push.scratch_bytes(), low_push.local_bytes());
  EXPECT_NE(low_push.push_source().find("bmmc_push"), std::string::npos);
  expect_matches(test::swaps(18, {{0, 17}}), 4, {0, 0}, PeerEngine::CopyPieces, "low swap, 2^17 per rank");
  // Four ranks and a random BMMC: each rank sends to three others (k = 2), where the copy engines were slower than
  // push + finish on four H200s, so Auto keeps the push.
  const PeerPermuter four(random_bmmc(20, 3), 4, {0, 0, 0, 0});
  EXPECT_FALSE(four.push_plan().one_pass());
  EXPECT_EQ(four.engine(), PeerEngine::Push);
  EXPECT_EQ(four.scratch_bytes(), four.local_bytes());
}

TEST(PeerPermuter, FallsBackAndSaysWhy) {
  REQUIRE_GPU();
  // Ranks of 2^3 elements are below one warp row: Auto copies, Push refuses with the reason.
  const PeerPermuter p(random_bmmc(4, 1), 4, {0, 0});
  EXPECT_EQ(p.engine(), PeerEngine::Copy);
  EXPECT_NE(p.fallback_reason().find("below one warp row"), std::string::npos) << p.fallback_reason();
  PeerOptions push;
  push.engine = PeerEngine::Push;
  try {
    PeerPermuter q(random_bmmc(4, 1), 4, {0, 0}, push);
    FAIL() << "Push accepted ranks of 8 elements";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the push engine cannot run"), std::string::npos) << e.what();
  }
  expect_matches(random_bmmc(4, 1), 4, {0, 0}, PeerEngine::Copy, "tiny ranks");
}

TEST(PeerPermuter, BadInputRefusedBeforeWriting) {
  REQUIRE_GPU();
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  EXPECT_THROW(PeerPermuter(random_bmmc(18, 1), 4, {0, 0, 0}), std::invalid_argument);  // not a power of two
  EXPECT_THROW(PeerPermuter(random_bmmc(18, 1), 4, {0, count}), std::invalid_argument);  // no such device
  PeerOptions unknown;
  unknown.engine = static_cast<PeerEngine>(9);  // e.g. an integer from a binding
  EXPECT_NE(test::error_message([&] { PeerPermuter(random_bmmc(18, 1), 4, {0, 0}, unknown); })
                .find("PeerOptions::engine holds 9, which names no engine"),
            std::string::npos);
  const PeerPermuter p(test::swaps(18, {{0, 17}}), 4, {0, 0});
  const std::size_t bytes = p.local_bytes();
  RankBuffers b = allocate({0, 0}, bytes);
  for (std::size_t r = 0; r < 2; ++r) b.out[r].fill_bytes(kPoison);
  std::vector<const void*> in = {b.in[0].get(), b.in[1].get()};
  std::vector<void*> out = {b.out[0].get(), b.out[1].get()}, scratch = {b.scratch[0].get(), b.scratch[1].get()};
  EXPECT_NE(test::error_message([&] { p(in, out); }).find("scratch"), std::string::npos);  // two-pass plan, no scratch
  EXPECT_NE(test::error_message([&] { p(in, {out[0], nullptr}, scratch); }).find("output of rank 1 is null"), std::string::npos);
  EXPECT_NE(test::error_message([&] { p(in, {out[0], b.out[1].as<char>() + 4}, scratch); }).find("not aligned"), std::string::npos);
  EXPECT_NE(test::error_message([&] { p(in, {out[0], b.in[0].as<char>() + 64}, scratch); }).find("overlaps"), std::string::npos);
  std::vector<unsigned char> host(bytes);
  EXPECT_NE(test::error_message([&] { p({in[0], host.data()}, out, scratch); }).find("input of rank 1"), std::string::npos);
  if (count >= 2) {
    std::unique_ptr<DeviceBuffer> other;
    {
      ScopedDevice on(1);
      other = std::make_unique<DeviceBuffer>(bytes);
    }
    EXPECT_NE(test::error_message([&] { p(in, {out[0], other->get()}, scratch); }).find("lives on device 1"), std::string::npos);
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<unsigned char> got(bytes);
  for (std::size_t r = 0; r < 2; ++r) {
    b.out[r].download(got.data(), bytes);
    EXPECT_EQ(got, std::vector<unsigned char>(bytes, kPoison)) << "output of rank " << r << " was written";
  }
}

}  // namespace
}  // namespace bmmc
