// The fused kernels' generated source, run on the host without a GPU: every pass of a program is emitted,
// compiled with the host C++ compiler against a small shim (__syncthreads() = a std::barrier, one std::thread
// per CUDA thread, blocks one after another, shared memory a static array), and run on random keys; the result
// must equal the CPU executor's fused passes bit for bit — floats with NaN and ±0 included. This checks the
// emitted index maps, layouts, re-layouts and pair orientations themselves, not a model of them. Skipped when
// the host compiler the build used is not there.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "bmmc/combinators/sorting_network.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cuda/program_gpu.hpp"
#include "combinators/random_parm_program.hpp"

#ifndef BMMC_HOST_CXX
#define BMMC_HOST_CXX "c++"
#endif

namespace bmmc {
namespace {

constexpr const char* kShim = R"(#include <barrier>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>
struct bmmc_dim3 { unsigned x = 0, y = 0, z = 0; };
thread_local bmmc_dim3 threadIdx, blockIdx;
bmmc_dim3 gridDim;
std::barrier<>* bmmc_bar;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
#define __shared__
#define __syncthreads() bmmc_bar->arrive_and_wait()
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
)";

namespace fs = std::filesystem;

// Writes one translation unit with every pass of `lp` (namespace k<i>, kernel renamed bmmc_fused_<i>), the
// input, and the CPU's result; compiles and runs it; returns its exit status (0: equal). With `first_out_of_place`
// the first pass is generated as GpuProgram generates it after an odd number of permutations: it reads a copy of the
// array (src) and writes every key into the array itself, which is poisoned first.
template <class T>
int emulate(const LoweredProgram& lp, DType t, const GpuProgramOptions& go, std::mt19937_64& rng, const fs::path& dir,
            const std::string& name, bool first_out_of_place = false, int fold = 0) {
  std::vector<T> data(std::size_t{1} << lp.n);
  for (auto& x : data) {
    const int c = static_cast<int>(rng() % 8);
    if constexpr (std::is_floating_point_v<T>)
      x = c == 0   ? std::copysign(T(NAN), rng() % 2 ? T(1) : T(-1))  // NaNs of both signs
          : c == 1 ? T(-0.0)
          : c == 2 ? T(0)
          : c == 3 ? (rng() % 2 ? T(INFINITY) : T(-INFINITY))
                   : T(static_cast<int>(rng() % 200) - 100);
    else if constexpr (std::is_signed_v<T>)
      x = static_cast<T>(static_cast<int>(rng() % 200) - 100);  // both signs
    else
      x = static_cast<T>(rng() % 100);
  }
  auto expect = data;
  std::string src = kShim, calls;
  int i = 0, permutations_after = 0, folds = 0;
  const std::vector<ScheduledPass> passes = schedule(lp, ExecStrategy::Fused, fusion_options(go, t, lp.n));
  for (std::size_t pi = 0; pi < passes.size(); ++pi) {
    const auto* fp = std::get_if<FusedLeafPass>(&passes[pi]);
    if (!fp) continue;
    // With `fold`, a fused pass followed by a permutation takes it into its store as GpuProgram does
    // (fused_then_permute), reading a copy of the array and writing the poisoned array itself; fold = 1 requires
    // it to fold, 2 lets it decline.
    const auto* then = pi + 1 < passes.size() && fold ? std::get_if<PermutePass>(&passes[pi + 1]) : nullptr;
    std::optional<FusedTileSpec> folded;
    if (then) {
      ++permutations_after;
      folded = fused_then_permute(*fp, then->perm, lp.n, fused_codegen_options(go, t, lp.n), fusion_options(go, t, lp.n).line_bits);
      if (!folded && fold == 1) ADD_FAILURE() << name << ": the permutation after pass " << i << " does not fold";
    }
    if (folded) ++folds;
    const FusedTileSpec spec = folded ? *folded : fused_tile_spec(*fp, lp.n);
    FusedCodegenOptions cg = fused_codegen_options(go, t, lp.n);
    cg.out_of_place = (first_out_of_place && i == 0) || folded;
    const KernelSource ks = generate_fused(spec, cuda_key_type(t), cg);
    const bool persistent = plan_fused_kernel(spec, cg).kind == FusedKernelKind::Pipelined;
    // Pipelined blocks are persistent: each runs at least two tiles when there are two (so the loop's tile
    // index, not blockIdx.x, must give every origin and folded store).
    const std::uint64_t grid = persistent ? std::clamp<std::uint64_t>(ks.grid / 2, 1, 3) : ks.grid;
    fused_leaf_pass_cpu(*fp, lp.n, expect.data(), t, 1);
    if (folded) {  // the key at x goes to perm(x)
      const std::vector<T> before = expect;
      for (std::size_t x = 0; x < before.size(); ++x) expect[then->perm.apply(x)] = before[x];
    }
    src += fmt::format("#define bmmc_fused bmmc_fused_{}\nnamespace k{} {{\nunsigned long long tile_words[{}];\n{}}}\n#undef bmmc_fused\n",
                       i, i, (ks.shared_bytes + 7) / 8, ks.source);
    if (cg.out_of_place)
      calls += fmt::format("  run_from_copy({}ull, {}u, [](const void* s, void* d) {{ k{}::bmmc_fused_{}((const k{}::fkey_t*)s, "
                           "(k{}::fkey_t*)d); }}, data);\n", grid, ks.block, i, i, i, i);
    else
      calls += fmt::format("  run({}ull, {}u, [](void* d) {{ k{}::bmmc_fused_{}((k{}::fkey_t*)d); }}, data.data());\n",
                           grid, ks.block, i, i, i);
    ++i;
  }
  // Passes that are not fused are skipped above: a schedule with no fused pass (or, with `fold`, no permutation
  // after one) would compare an untouched array with itself and pass with nothing checked.
  if (i == 0) {
    ADD_FAILURE() << name << ": the schedule has no fused pass to emulate";
    return 101;
  }
  if (fold && permutations_after == 0) {
    ADD_FAILURE() << name << ": no fused pass is followed by a permutation, so no store folds one";
    return 102;
  }
  if (fold == 1 && folds != permutations_after) return 103;  // reported above, pass by pass
  src += R"(template <class F>
void run(unsigned long long grid, unsigned block, F kernel, void* data) {
  gridDim.x = (unsigned)grid;
  for (unsigned long long b = 0; b < grid; ++b) {
    std::barrier<> bar(block);
    bmmc_bar = &bar;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block; ++t)
      threads.emplace_back([&, t] { threadIdx.x = t; blockIdx.x = (unsigned)b; kernel(data); });
    for (auto& th : threads) th.join();
  }
}
template <class F>
void run_from_copy(unsigned long long grid, unsigned block, F kernel, std::vector<char>& data) {
  const std::vector<char> src = data;
  std::memset(data.data(), 0xA5, data.size());
  run(grid, block, [&](void* d) { kernel(src.data(), d); }, data.data());
}
int main(int, char** argv) {
  std::vector<char> data()" + std::to_string(data.size() * sizeof(T)) + R"(), expect(data.size());
  std::ifstream(argv[1], std::ios::binary).read(data.data(), data.size());
  std::ifstream(argv[2], std::ios::binary).read(expect.data(), expect.size());
)" + calls + R"(  return std::memcmp(data.data(), expect.data(), data.size()) != 0;
}
)";
  const fs::path cpp = dir / (name + ".cpp"), exe = dir / name, in = dir / (name + ".in"), ex = dir / (name + ".expect");
  std::ofstream(cpp) << src;
  std::ofstream(in, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(T));
  std::ofstream(ex, std::ios::binary).write(reinterpret_cast<const char*>(expect.data()), expect.size() * sizeof(T));
  const std::string compile = fmt::format("{} -std=c++20 -O0 -w -pthread {} -o {}", BMMC_HOST_CXX, cpp.string(), exe.string());
  if (std::system(compile.c_str()) != 0) return 100;
  return std::system(fmt::format("{} {} {}", exe.string(), in.string(), ex.string()).c_str());
}

TEST(FusedKernelEmulation, GeneratedSourceMatchesTheCpuBitForBit) {
  if (std::system(fmt::format("{} --version > /dev/null 2>&1", BMMC_HOST_CXX).c_str()) != 0)
    GTEST_SKIP() << "no host compiler " << BMMC_HOST_CXX;
  const fs::path dir = fs::temp_directory_path() / fmt::format("bmmc-fused-emulation-{}", ::getpid());
  fs::create_directories(dir);
  std::mt19937_64 rng(18);
  GpuProgramOptions regs;  // registers, 32 keys per thread, tiles of 2^10 (32 threads)
  regs.tile_bits = 10;
  regs.line_bits = 3;
  regs.fused_kernel = FusedKernelKind::Registers;
  GpuProgramOptions piped = regs;
  piped.fused_kernel = FusedKernelKind::Pipelined;
  GpuProgramOptions shared = regs;
  shared.fused_kernel = FusedKernelKind::Shared;
  shared.tile_bits = 9;
  GpuProgramOptions r4 = regs;
  r4.reg_bits = 4;
  r4.line_bits = 1;
  // A random parm program followed by the network: directions that are not unit vectors, descending leaves.
  const LoweredProgram net = lower(sort_network(12)), mixed = lower(then(test::random_parm_program(12, rng), sort_network(12)));
  EXPECT_EQ(emulate<std::int32_t>(net, DType::Int32, regs, rng, dir, "net_int_regs"), 0);
  EXPECT_EQ(emulate<float>(net, DType::Float32, regs, rng, dir, "net_float_regs"), 0);
  EXPECT_EQ(emulate<std::int32_t>(net, DType::Int32, piped, rng, dir, "net_int_pipelined"), 0);
  // The first pass out of place (the array copied to src, poisoned, every key written back), each kernel kind.
  EXPECT_EQ(emulate<std::int32_t>(net, DType::Int32, piped, rng, dir, "net_int_pipelined_oop", true), 0);
  EXPECT_EQ(emulate<float>(mixed, DType::Float32, regs, rng, dir, "mixed_float_regs_oop", true), 0);
  EXPECT_EQ(emulate<double>(net, DType::Float64, shared, rng, dir, "net_double_shared_oop", true), 0);
  EXPECT_EQ(emulate<double>(mixed, DType::Float64, piped, rng, dir, "mixed_double_pipelined"), 0);
  EXPECT_EQ(emulate<double>(net, DType::Float64, shared, rng, dir, "net_double_shared"), 0);
  EXPECT_EQ(emulate<float>(mixed, DType::Float32, r4, rng, dir, "mixed_float_r4"), 0);
  EXPECT_EQ(emulate<std::uint64_t>(mixed, DType::UInt64, regs, rng, dir, "mixed_u64_regs"), 0);
  // Integer keys: random directions with 16 keys per thread, unsigned keys through the pipelined kernel out of
  // place, 64-bit keys through the pipelined kernel.
  EXPECT_EQ(emulate<std::int32_t>(mixed, DType::Int32, r4, rng, dir, "mixed_int_r4"), 0);
  EXPECT_EQ(emulate<std::uint32_t>(mixed, DType::UInt32, piped, rng, dir, "mixed_u32_pipelined_oop", true), 0);
  EXPECT_EQ(emulate<std::int64_t>(net, DType::Int64, piped, rng, dir, "net_i64_pipelined"), 0);
  // Permutations folded into the store of the pass before them (the network's first relayout has no fused pass
  // before it; the last permutation folds), registers and pipelined kernels, 4- and 8-byte keys.
  EXPECT_EQ(emulate<std::int32_t>(net, DType::Int32, regs, rng, dir, "net_int_regs_folded", false, 1), 0);
  EXPECT_EQ(emulate<float>(net, DType::Float32, piped, rng, dir, "net_float_pipelined_folded", false, 1), 0);
  EXPECT_EQ(emulate<std::uint64_t>(net, DType::UInt64, piped, rng, dir, "net_u64_pipelined_folded", false, 1), 0);
  // A random program's permutations after fused passes (not plain bit permutations): they fold too.
  EXPECT_EQ(emulate<std::int32_t>(mixed, DType::Int32, piped, rng, dir, "mixed_int_pipelined_folded", false, 1), 0);
  EXPECT_EQ(emulate<std::int32_t>(mixed, DType::Int32, regs, rng, dir, "mixed_int_regs_folded", false, 1), 0);
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace bmmc
