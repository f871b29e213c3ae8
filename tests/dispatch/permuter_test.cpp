// The front door on the CPU: Permuters from a Bmmc or a Plan, the cached permute(), host arrays, files.
// The same paths on CUDA are in tests/cuda/permute_test.cpp (they need a GPU).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/dispatch/array_file.hpp"
#include "bmmc/dispatch/permuter_cache.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "bmmc/permute.hpp"
#include "dist/error_message.hpp"

namespace bmmc {
namespace {

std::vector<unsigned char> random_bytes(std::size_t bytes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(bytes);
  for (auto& b : v) b = static_cast<unsigned char>(rng() | 1);  // never zero
  return v;
}

std::vector<unsigned char> reference(const Bmmc& b, const std::vector<unsigned char>& in, int eb) {
  std::vector<unsigned char> out(in.size());
  permute_reference(b, in.data(), out.data(), eb);
  return out;
}

TEST(Backend, NamesRoundTripAndUnknownNamesSayWhatIsExpected) {
  for (Backend b : {Backend::Auto, Backend::Cpu, Backend::Cuda}) EXPECT_EQ(parse_backend(to_string(b)), b);
  EXPECT_EQ(backend_names().size(), 3u);
  try {
    parse_backend("gpu");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("expected auto, cpu or cuda"), std::string::npos) << e.what();
  }
  EXPECT_EQ(resolve_backend(Backend::Cpu), Backend::Cpu);
  EXPECT_TRUE(backend_available(Backend::Cpu));
  if (backend_available(Backend::Cuda)) {
    EXPECT_EQ(resolve_backend(Backend::Auto), Backend::Cuda);
  } else {
    EXPECT_EQ(resolve_backend(Backend::Auto), Backend::Cpu);
    EXPECT_THROW(resolve_backend(Backend::Cuda), std::invalid_argument);
  }
  // A value cast from an integer (a binding, a configuration file) is refused, not taken as some backend.
  EXPECT_STREQ(to_string(static_cast<Backend>(7)), "?");
  EXPECT_FALSE(backend_available(static_cast<Backend>(7)));
  EXPECT_NE(test::error_message([] { resolve_backend(static_cast<Backend>(7)); })
                .find("the backend holds 7, which names no backend; expected auto, cpu or cuda"),
            std::string::npos);
}

TEST(FrontDoor, PermuterFromABmmcMatchesTheReferenceForEveryElementSize) {
  for (int eb : {1, 2, 4, 8, 16})
    for (int n : {0, 3, 5, 11, 16}) {
      const Bmmc b = random_bmmc(n, 40 + eb + n);
      const Permuter p(b, eb, PermuterOptions{Backend::Cpu});
      EXPECT_EQ(p.backend(), Backend::Cpu);
      EXPECT_EQ(p.n(), n);
      EXPECT_EQ(p.elem_bytes(), eb);
      EXPECT_EQ(p.alignment(), static_cast<std::size_t>(eb));
      EXPECT_FALSE(p.kernel_name().empty());
      const auto in = random_bytes(static_cast<std::size_t>(eb) << n, n * 5 + eb);
      std::vector<unsigned char> out(in.size(), 0xA5);
      p(in.data(), out.data());
      EXPECT_EQ(out, reference(b, in, eb)) << "n " << n << " eb " << eb;
      // run_trusted on the CPU is operator() itself, checks included.
      std::vector<unsigned char> trusted(in.size(), 0xA5);
      p.run_trusted(in.data(), trusted.data());
      EXPECT_EQ(trusted, out) << "n " << n << " eb " << eb;
      if (n > 0) EXPECT_THROW(p.run_trusted(in.data(), nullptr), std::invalid_argument);
    }
}

TEST(FrontDoor, PermuterRunsAnyPlanAsGiven) {
  // A GPU-geometry two-pass plan runs on the CPU too; its temporary is allocated when none is given.
  const Bmmc b = random_bmmc(14, 3);
  const Plan two = make_plan(b, 4, default_caps(), GpuPolicy{Variant::TwoPass});
  ASSERT_EQ(two.passes.size(), 2u);
  const Permuter p(two, PermuterOptions{Backend::Cpu});
  EXPECT_EQ(p.plan(), two);
  EXPECT_EQ(p.temp_bytes(), std::size_t{4} << 14);
  const auto in = random_bytes(std::size_t{4} << 14, 8);
  std::vector<unsigned char> out(in.size()), temp(in.size());
  p(in.data(), out.data());
  EXPECT_EQ(out, reference(b, in, 4));
  std::fill(out.begin(), out.end(), 0);
  p(in.data(), out.data(), nullptr, temp.data());
  EXPECT_EQ(out, reference(b, in, 4));
  EXPECT_THROW(p(in.data(), out.data(), nullptr, out.data()), std::invalid_argument);  // temp aliases out
}

TEST(FrontDoor, OneCallPermuteIsCachedAndRunsHostArraysOnTheCpu) {
  const Bmmc b = random_bpc(13, 2);
  const auto in = random_bytes(std::size_t{8} << 13, 2);
  std::vector<unsigned char> out(in.size());
  const PermuterCacheStats before = default_permuter_cache().stats();
  permute(b, in.data(), out.data(), 8);  // Auto: host pointers run on the CPU
  EXPECT_EQ(out, reference(b, in, 8));
  permute(b, in.data(), out.data(), 8);
  const PermuterCacheStats after = default_permuter_cache().stats();
  EXPECT_EQ(after.misses, before.misses + 1);
  EXPECT_EQ(after.hits, before.hits + 1);
  // GPU options do not split CPU entries.
  PermuterOptions o;
  o.gpu.policy.threads_per_block = 128;
  permute(b, in.data(), out.data(), 8, o);
  EXPECT_EQ(default_permuter_cache().stats().misses, after.misses);
  const PermuterOptions resolved = options_for_pointers(o, in.data(), out.data(), 8);
  EXPECT_EQ(resolved.backend, Backend::Cpu);
  EXPECT_EQ(resolved.gpu, GpuOptions{});
  // The spec form.
  std::vector<unsigned char> by_spec(in.size());
  permute("random-bpc:2", in.data(), by_spec.data(), 13, 8);
  EXPECT_EQ(by_spec, out);
}

TEST(FrontDoor, BadCallsAreRefusedBeforeAnythingIsWritten) {
  const Bmmc b = random_bmmc(10, 1);
  std::vector<int> in(1024, 3), out(1024, -1), small(16);
  EXPECT_THROW(permute(b, nullptr, out.data(), 4), std::invalid_argument);
  EXPECT_THROW(permute(b, in.data(), in.data() + 10, 4), std::invalid_argument);       // overlap
  EXPECT_THROW(permute(b, in.data(), out.data(), 3), std::invalid_argument);           // element size
  EXPECT_THROW(permute(b, reinterpret_cast<char*>(in.data()) + 2, out.data(), 4), std::invalid_argument);  // unaligned
  const Permuter p(b, 4, PermuterOptions{Backend::Cpu});
  EXPECT_THROW(p(in.data(), in.data()), std::invalid_argument);  // an out-of-place Permuter refuses aliasing
  EXPECT_THROW(p(in.data()), std::invalid_argument);             // and the in-place call
  // p(in, nullptr) is the in-place overload with a null stream: the message says what it was taken as.
  EXPECT_NE(test::error_message([&] { p(in.data(), nullptr); }).find("was called with one buffer"), std::string::npos);
  PermuterOptions bad;
  bad.backend = static_cast<Backend>(7);
  EXPECT_NE(test::error_message([&] { Permuter(b, 4, bad); }).find("names no backend"), std::string::npos);
  EXPECT_NE(test::error_message([&] { permute(b, in.data(), out.data(), 4, bad); }).find("names no backend"),
            std::string::npos);
  for (bool in_place : {false, true}) {  // negative thread counts were once taken as "choose"
    PermuterOptions o{Backend::Cpu};
    o.cpu.threads = -1;
    o.in_place = in_place;
    const Bmmc f = in_place ? bit_reverse(10) : b;
    EXPECT_NE(test::error_message([&] { Permuter(f, 4, o); }).find("CPU threads = -1: expected 0"), std::string::npos);
    EXPECT_NE(test::error_message([&] { permute(f, in.data(), in_place ? in.data() : out.data(), 4, o); })
                  .find("CPU threads = -1"),
              std::string::npos);
  }
  for (int v : out) ASSERT_EQ(v, -1);
  for (int v : in) ASSERT_EQ(v, 3);
  if (!backend_available(Backend::Cuda))
    EXPECT_THROW(Permuter(b, 4, PermuterOptions{Backend::Cuda}), std::invalid_argument);
}

TEST(FrontDoor, IdenticalBuffersRunInPlace) {
  // permute(in == out), permute_inplace, an in-place Permuter and swap_index_bits agree with the reference.
  const Bmmc b = random_bmmc(12, 4);
  std::vector<std::uint32_t> in(4096), want(4096);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i * 2654435761u + 1);
  permute_reference(b, in.data(), want.data(), 4);
  std::vector<std::uint32_t> a = in, c = in, d = in;
  permute(b, a.data(), a.data(), 4);
  EXPECT_EQ(a, want);
  permute_inplace(b, c.data(), 4);
  EXPECT_EQ(c, want);
  const Permuter p(b, 4, PermuterOptions{Backend::Cpu, {}, {}, true});
  EXPECT_TRUE(p.in_place());
  EXPECT_EQ(p.kernel_name(), "cpu-inplace");
  EXPECT_EQ(p.inplace_plan().passes.size(), p.inplace_plan().passes.size());
  EXPECT_GE(p.inplace_plan().passes.size(), 1u);
  EXPECT_TRUE(p.plan().passes.empty());
  p(d.data());
  EXPECT_EQ(d, want);
  std::vector<std::uint32_t> e = in;
  EXPECT_THROW(p(e.data(), want.data()), std::invalid_argument);  // in place takes one buffer
  EXPECT_EQ(e, in);
  // swap_index_bits with a mask: bit 4 must be 1 for an index to move.
  std::vector<std::uint32_t> f = in;
  swap_index_bits(f.data(), 12, 4, {{0, 11}}, BitVec{1} << 4, BitVec{1} << 4);
  const Bmmc s = swap_index_bits(12, {{0, 11}});
  for (std::uint64_t x = 0; x < 4096; ++x) ASSERT_EQ(f[(x >> 4) & 1 ? s.apply(x) : x], in[x]) << x;
  // Bad masks and pairs are refused before anything moves.
  std::vector<std::uint32_t> g = in;
  EXPECT_THROW(swap_index_bits(g.data(), 12, 4, {{0, 11}}, BitVec{1} << 0, 0), std::invalid_argument);
  EXPECT_THROW(swap_index_bits(g.data(), 12, 4, {{0, 11}, {11, 3}}), std::invalid_argument);
  EXPECT_THROW(swap_index_bits(g.data(), 12, 4, {{0, 12}}), std::invalid_argument);
  EXPECT_EQ(g, in);
}

TEST(FrontDoor, CacheKeepsComplementsElementSizesAndCpuPolicyApart) {
  // Same matrix, other complements; two element sizes; two tiles; both CPU loops; twice over, so that the
  // second round is served from the cache and would show any entry shared by mistake.
  const Bmmc a = random_bmmc(14, 21);
  const Bmmc c1(a.matrix(), 0x155), c2(a.matrix(), 0x2aa);
  for (int round = 0; round < 2; ++round)
    for (const Bmmc& b : {a, c1, c2})
      for (int eb : {4, 8})
        for (int tile : {-1, 10})
          for (bool tr : {true, false}) {
            const auto in = random_bytes(std::size_t(eb) << 14, round * 7 + eb + tile);
            std::vector<unsigned char> out(in.size());
            permute(b, in.data(), out.data(), eb, PermuterOptions{Backend::Cpu, CpuPolicy{2, tile, tr}});
            ASSERT_EQ(out, reference(b, in, eb)) << "c " << b.complement() << " eb " << eb << " tile " << tile;
          }
}

TEST(FrontDoor, PermuteHostOnTheCpu) {
  const Bmmc b = gray(12);
  const auto in = random_bytes(std::size_t{2} << 12, 4);
  std::vector<unsigned char> out(in.size());
  EXPECT_EQ(permute_host(b, in.data(), out.data(), 2, PermuterOptions{Backend::Cpu}), Backend::Cpu);
  EXPECT_EQ(out, reference(b, in, 2));
}

class ArrayFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("bmmc-array-file-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  static void write(const std::string& p, const std::vector<unsigned char>& bytes) {
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  static std::vector<unsigned char> read(const std::string& p) {
    const auto v = read_array_file(p);
    return {reinterpret_cast<const unsigned char*>(v.data()), reinterpret_cast<const unsigned char*>(v.data()) + v.size()};
  }
  std::filesystem::path dir_;
};

TEST_F(ArrayFile, PermutesFileToFileAndInPlaceByName) {
  const Bmmc b = random_bmmc(11, 6);
  const auto in = random_bytes(std::size_t{4} << 11, 6);
  write(path("in.bin"), in);
  PermuterOptions cpu{Backend::Cpu};
  EXPECT_EQ(permute_file(b, 4, path("in.bin"), path("out.bin"), cpu), Backend::Cpu);
  EXPECT_EQ(read(path("out.bin")), reference(b, in, 4));
  permute_file(b, 4, path("in.bin"), path("in.bin"), cpu);  // the same file: replaced atomically
  EXPECT_EQ(read(path("in.bin")), reference(b, in, 4));
}

TEST_F(ArrayFile, BadInputLeavesTheOutputAsItWas) {
  const Bmmc b = random_bmmc(8, 1);
  write(path("short.bin"), random_bytes(100, 1));
  write(path("out.bin"), {'k', 'e', 'e', 'p'});
  const PermuterOptions cpu{Backend::Cpu};
  try {
    permute_file(b, 4, path("short.bin"), path("out.bin"), cpu);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has 100 bytes, but an array of 2^8 elements of 4 bytes has 1024"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(permute_file(b, 3, path("short.bin"), path("out.bin"), cpu), std::invalid_argument);
  EXPECT_THROW(permute_file(b, 4, path("missing.bin"), path("out.bin"), cpu), std::invalid_argument);
  // On simulated ranks: a backend outside the enumeration (it ran on the CPU), a negative thread count.
  write(path("in.bin"), random_bytes(1024, 2));
  EXPECT_NE(test::error_message([&] {
              permute_file_distributed(b, 4, path("in.bin"), path("out.bin"), 4, static_cast<Backend>(7));
            }).find("names no backend"),
            std::string::npos);
  DistributedOptions negative;
  negative.cpu.threads = -1;
  EXPECT_NE(test::error_message([&] {
              permute_file_distributed(b, 4, path("in.bin"), path("out.bin"), 4, Backend::Cpu, negative);
            }).find("CPU threads = -1"),
            std::string::npos);
  EXPECT_EQ(read(path("out.bin")), (std::vector<unsigned char>{'k', 'e', 'e', 'p'}));
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".bmmc-"), std::string::npos) << "temporary left behind";
}

}  // namespace
// A pipe (a FIFO here; standard input through "-" in tests/cli) is read in order to its end: exactly the expected
// bytes give the same array as a file; a short or a longer stream is refused, the longer one after one byte past.
TEST_F(ArrayFile, StreamsAreReadInOrderAndSizeChecked) {
  std::mt19937_64 rng(::testing::UnitTest::GetInstance()->random_seed());
  for (int round = 0; round < 6; ++round) {
    const std::size_t expected = std::size_t{1} << (rng() % 18);
    const std::size_t sent = round % 3 == 0 ? expected : round % 3 == 1 ? rng() % expected : expected + 1 + rng() % 64;
    const auto bytes = random_bytes(sent, round);
    const std::string fifo = path(("fifo" + std::to_string(round)).c_str());
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] {  // a reader that stops early gives EPIPE here, not SIGPIPE
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
      const int fd = ::open(fifo.c_str(), O_WRONLY);
      for (std::size_t at = 0; fd >= 0 && at < bytes.size();) {
        const ssize_t w = ::write(fd, bytes.data() + at, std::min<std::size_t>(bytes.size() - at, 4099));
        if (w <= 0) break;
        at += static_cast<std::size_t>(w);
      }
      if (fd >= 0) ::close(fd);
    });
    SCOPED_TRACE(testing::Message() << "expected " << expected << " bytes, sent " << sent);
    std::string error = "no error";
    std::vector<std::byte> v;
    try {
      v = read_array_file(fifo, expected);
    } catch (const std::exception& e) {  // any error: the writer is joined below either way
      error = e.what();
    }
    writer.join();
    if (sent == expected) {
      EXPECT_EQ(error, "no error");
      EXPECT_EQ(std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(v.data()),
                                           reinterpret_cast<const unsigned char*>(v.data()) + v.size()),
                bytes);
    } else {
      const std::string want = sent < expected
                                   ? "ended after " + std::to_string(sent) + " bytes but " +
                                         std::to_string(expected) + " bytes were expected"
                                   : "holds more than the " + std::to_string(expected) + " bytes expected";
      EXPECT_NE(error.find(want), std::string::npos) << error;
    }
  }
}

}  // namespace bmmc
