// NVRTC and the compile/disk half of the KernelCache: everything here runs without a GPU (CI label nvrtc).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/nvrtc.hpp"
#include "../../src/cuda/fnv1a64.hpp"  // internal: checked against the published test vectors

namespace fs = std::filesystem;

namespace {

std::string saxpy_source(int k = 2) {
  return "extern \"C\" __global__ void affine(const int* in, int* out, unsigned n) {\n"
         "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) out[i] = in[i] * " + std::to_string(k) + " + 1;\n"
         "}\n";
}

// A fresh directory per test, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("bmmc-nvrtc-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            std::to_string(counter++) + "-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

bmmc::KernelCacheOptions disk_options(const fs::path& dir) {
  bmmc::KernelCacheOptions o;
  o.disk_dir = dir.string();
  return o;
}

bmmc::KernelCacheOptions memory_only() {
  bmmc::KernelCacheOptions o;
  o.use_disk = false;
  return o;
}

}  // namespace

TEST(Nvrtc, CompilesToCubinForSm90) {
  const bmmc::CompiledKernel k = bmmc::compile(saxpy_source(), "affine.cu", 90);
  ASSERT_GE(k.cubin.size(), 4u);
  EXPECT_EQ(k.cubin[0], '\x7f');
  EXPECT_EQ(k.cubin[1], 'E');
  EXPECT_EQ(k.cubin[2], 'L');
  EXPECT_EQ(k.cubin[3], 'F');
  EXPECT_TRUE(bmmc::looks_like_cubin(k.cubin));
  EXPECT_GT(k.compile_ms, 0.0);
  EXPECT_EQ(bmmc::compile_cubin(saxpy_source(), "affine.cu", 90), k.cubin) << "NVRTC output is deterministic";
}

TEST(Nvrtc, VersionAndArchs) {
  const std::string v = bmmc::nvrtc_version();
  EXPECT_FALSE(v.empty());
  EXPECT_NE(v.find('.'), std::string::npos) << v;
  const std::vector<int> archs = bmmc::nvrtc_supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
}

TEST(Nvrtc, OptionsNameTheArch) {
  const auto o = bmmc::nvrtc_options(90, {"-lineinfo"});
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o[0], "--gpu-architecture=sm_90");
  EXPECT_EQ(o[1], "-std=c++17");
  EXPECT_EQ(o[2], "-lineinfo");
}

TEST(Nvrtc, SyntaxErrorCarriesLogOptionsAndSource) {
  const std::string source =
      "extern \"C\" __global__ void broken(int* out) {\n"
      "  int x = 1\n"
      "  out[threadIdx.x] = x;\n"
      "}\n";
  try {
    bmmc::compile(source, "broken.cu", 90);
    FAIL() << "a syntax error must throw";
  } catch (const bmmc::NvrtcError& e) {
    // NVRTC reports the missing ';' at the statement that follows it: line 3 of broken.cu.
    EXPECT_NE(e.log().find("broken.cu(3)"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    EXPECT_EQ(e.source(), source);
    ASSERT_FALSE(e.options().empty());
    EXPECT_EQ(e.options()[0], "--gpu-architecture=sm_90");
    EXPECT_EQ(e.result(), NVRTC_ERROR_COMPILATION);
    const std::string what = e.what();
    EXPECT_NE(what.find("broken.cu"), std::string::npos) << what;
    EXPECT_NE(what.find(e.log()), std::string::npos) << "what() must include the log";
  }
}

TEST(Nvrtc, UnsupportedArchIsAClearError) {
  try {
    bmmc::compile(saxpy_source(), "affine.cu", 11);
    FAIL() << "sm_11 must be refused";
  } catch (const bmmc::NvrtcError& e) {
    EXPECT_NE(std::string(e.what()).find("sm_11"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sm_90"), std::string::npos) << "lists the supported archs";
  }
}

TEST(CudaErrorText, NamesCallAndError) {
  const bmmc::CudaError e(cudaErrorMemoryAllocation, "cudaMalloc(&p, 4294967296)");
  EXPECT_STREQ(e.what(), "cudaMalloc(&p, 4294967296) failed: out of memory (cudaErrorMemoryAllocation)");
  EXPECT_EQ(e.code(), cudaErrorMemoryAllocation);
  EXPECT_EQ(e.call(), "cudaMalloc(&p, 4294967296)");
  EXPECT_NO_THROW(bmmc::check(cudaSuccess, "fine"));
  EXPECT_THROW(BMMC_CUDA_CHECK(cudaErrorInvalidValue), bmmc::CudaError);
}

TEST(CacheKey, FnvIsTheReferenceFunction) {
  EXPECT_EQ(bmmc::fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(bmmc::fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(bmmc::fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(CacheKey, StableAcrossCachesAndSensitiveToEveryField) {
  bmmc::KernelCache a(memory_only()), b(memory_only());
  const auto ka = a.key(saxpy_source(), "affine", 90);
  EXPECT_EQ(ka, b.key(saxpy_source(), "affine", 90));
  EXPECT_EQ(ka.id().size(), 16u);
  EXPECT_EQ(ka.nvrtc_version, bmmc::nvrtc_version());
  EXPECT_EQ(ka.codegen_version, std::string(bmmc::kCodegenVersion));
  EXPECT_EQ(ka.source_hash, bmmc::fnv1a64(saxpy_source()));
  EXPECT_NE(ka.hash, a.key(saxpy_source(), "affine", 80).hash);
  EXPECT_NE(ka.hash, a.key(saxpy_source(3), "affine", 90).hash);
  EXPECT_NE(ka.hash, a.key(saxpy_source(), "affine2", 90).hash);
  bmmc::KernelCacheOptions other = memory_only();
  other.codegen_version = "bmmc-codegen-test";
  EXPECT_NE(ka.hash, bmmc::KernelCache(other).key(saxpy_source(), "affine", 90).hash);
  other = memory_only();
  other.extra_options = {"-lineinfo"};
  EXPECT_NE(ka.hash, bmmc::KernelCache(other).key(saxpy_source(), "affine", 90).hash);
  EXPECT_EQ(ka.file_name(), "affine-sm90-" + ka.id() + ".bmmc.cubin");
}

TEST(KernelCache, MemoryHitAfterCompile) {
  bmmc::KernelCache cache(memory_only());
  EXPECT_TRUE(cache.disk_dir().empty());
  const auto first = cache.cubin_for(saxpy_source(), "affine", 90);
  const auto second = cache.cubin_for(saxpy_source(), "affine", 90);
  EXPECT_EQ(first, second);
  auto s = cache.stats();
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(s.memory_hits, 1u);
  EXPECT_EQ(s.disk_hits, 0u);
  EXPECT_GT(s.last_compile_ms, 0.0);
  cache.clear();
  cache.cubin_for(saxpy_source(), "affine", 90);
  EXPECT_EQ(cache.stats().compiles, 2u) << "clear() drops memory entries";
}

TEST(KernelCache, FailedCompileIsNotCached) {
  bmmc::KernelCache cache(memory_only());
  EXPECT_THROW(cache.cubin_for("this is not CUDA", "k", 90), bmmc::NvrtcError);
  EXPECT_THROW(cache.cubin_for("this is not CUDA", "k", 90), bmmc::NvrtcError);
  EXPECT_EQ(cache.stats().compiles, 2u);
}

TEST(KernelCache, DiskRoundTrip) {
  TempDir dir;
  std::vector<char> compiled;
  {
    bmmc::KernelCache writer(disk_options(dir.path));
    EXPECT_EQ(writer.disk_dir(), dir.path);
    compiled = writer.cubin_for(saxpy_source(), "affine", 90);
    EXPECT_EQ(writer.stats().compiles, 1u);
    const fs::path file = dir.path / writer.key(saxpy_source(), "affine", 90).file_name();
    EXPECT_TRUE(fs::is_regular_file(file)) << file;
  }
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    ++files;
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "temporaries are renamed away";
  }
  EXPECT_EQ(files, 1u);

  bmmc::KernelCache reader(disk_options(dir.path));
  EXPECT_EQ(reader.cubin_for(saxpy_source(), "affine", 90), compiled);
  auto s = reader.stats();
  EXPECT_EQ(s.disk_hits, 1u);
  EXPECT_EQ(s.compiles, 0u);
  EXPECT_EQ(reader.cubin_for(saxpy_source(), "affine", 90), compiled);
  EXPECT_EQ(reader.stats().memory_hits, 1u);

  // Another arch is another file.
  reader.cubin_for(saxpy_source(), "affine", 80);
  EXPECT_EQ(reader.stats().compiles, 1u);
  EXPECT_EQ(reader.clear_disk(), 2u);
  EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(KernelCache, CorruptFileIsIgnoredAndRewritten) {
  TempDir dir;
  bmmc::KernelCache writer(disk_options(dir.path));
  const auto good = writer.cubin_for(saxpy_source(), "affine", 90);
  const fs::path file = dir.path / writer.key(saxpy_source(), "affine", 90).file_name();

  const auto corrupt_with = [&](auto&& mutate) {
    std::string bytes;
    {
      std::ifstream in(file, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    mutate(bytes);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    bmmc::KernelCache reader(disk_options(dir.path));
    EXPECT_EQ(reader.cubin_for(saxpy_source(), "affine", 90), good);
    const auto s = reader.stats();
    EXPECT_EQ(s.disk_hits, 0u);
    EXPECT_EQ(s.compiles, 1u);
    EXPECT_EQ(s.disk_errors, 1u);
    bmmc::KernelCache again(disk_options(dir.path));
    EXPECT_EQ(again.cubin_for(saxpy_source(), "affine", 90), good);
    EXPECT_EQ(again.stats().disk_hits, 1u) << "the recompiled cubin replaced the corrupt file";
  };
  corrupt_with([](std::string& b) { b.resize(b.size() / 2); });          // truncated
  corrupt_with([](std::string& b) { b[b.size() - 7] ^= 0x5a; });         // a flipped payload byte
  corrupt_with([](std::string& b) { b = "garbage"; });                   // not ours at all
  corrupt_with([](std::string& b) { b.replace(11, 4, "0000"); });        // another key's id
}

TEST(KernelCache, DiskDirFromOptionsAndEnvironment) {
  const char* saved = std::getenv("BMMC_CACHE_DIR");
  const std::string saved_value = saved ? saved : "";
  bmmc::KernelCacheOptions o;
  ::setenv("BMMC_CACHE_DIR", "/tmp/bmmc-env-dir", 1);
  EXPECT_EQ(bmmc::KernelCache::resolve_disk_dir(o), fs::path("/tmp/bmmc-env-dir"));
  ::setenv("BMMC_CACHE_DIR", "off", 1);
  EXPECT_TRUE(bmmc::KernelCache::resolve_disk_dir(o).empty());
  o.disk_dir = "/tmp/bmmc-option-dir";
  EXPECT_EQ(bmmc::KernelCache::resolve_disk_dir(o), fs::path("/tmp/bmmc-option-dir")) << "the option wins";
  o.use_disk = false;
  EXPECT_TRUE(bmmc::KernelCache::resolve_disk_dir(o).empty());
  o = {};
  o.disk_dir = "off";
  EXPECT_TRUE(bmmc::KernelCache::resolve_disk_dir(o).empty());
  ::unsetenv("BMMC_CACHE_DIR");
  o = {};
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string xdg_value = xdg ? xdg : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg-cache", 1);
  EXPECT_EQ(bmmc::KernelCache::resolve_disk_dir(o), fs::path("/tmp/xdg-cache/bmmc"));
  ::unsetenv("XDG_CACHE_HOME");
  if (const char* home = std::getenv("HOME"); home && *home)
    EXPECT_EQ(bmmc::KernelCache::resolve_disk_dir(o), fs::path(home) / ".cache" / "bmmc");
  if (xdg) ::setenv("XDG_CACHE_HOME", xdg_value.c_str(), 1);
  if (saved) ::setenv("BMMC_CACHE_DIR", saved_value.c_str(), 1);
}

TEST(KernelCache, SixteenThreadsCompileEachKeyOnce) {
  TempDir dir;
  bmmc::KernelCache cache(disk_options(dir.path));
  constexpr int kThreads = 16, kDistinct = 4;
  std::vector<std::vector<char>> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();  // all 16 ask at the same moment
      try {
        results[t] = cache.cubin_for(saxpy_source(t % kDistinct + 2), "affine", 90);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    EXPECT_TRUE(bmmc::looks_like_cubin(results[t])) << "thread " << t;
    EXPECT_EQ(results[t], results[t % kDistinct]) << "thread " << t << " got another cubin for its key";
  }
  for (int d = 1; d < kDistinct; ++d) EXPECT_NE(results[0], results[d]);
  const auto s = cache.stats();
  EXPECT_EQ(s.compiles, static_cast<unsigned>(kDistinct));
  EXPECT_EQ(s.disk_hits, 0u);
  EXPECT_EQ(s.memory_hits, static_cast<unsigned>(kThreads - kDistinct));
  EXPECT_EQ(s.disk_errors, 0u);
  EXPECT_EQ(cache.clear_disk(), static_cast<size_t>(kDistinct));
}

// Runs here and in CI: without a driver the gate must say "no" quietly, and the binary must still run.
#include "bmmc/cuda/device.hpp"
TEST(Device, GpuAvailableNeverThrows) {
  const bool first = bmmc::gpu_available();
  EXPECT_EQ(first, bmmc::gpu_available());
  if (!first) EXPECT_THROW(bmmc::device_caps(), bmmc::CudaError);
}
