// Every kernel the generator emits must compile with NVRTC for sm_90 — checked here without a GPU, over
// random plans, every variant and every element size.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <future>
#include <vector>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/codegen/inplace_source.hpp"
#include "bmmc/codegen/probe_source.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cuda/nvrtc.hpp"
#include "bmmc/plan/gpu_policy.hpp"

namespace bmmc {
namespace {

TEST(CodegenNvrtc, EmittedKernelsCompileForSm90) {
  std::vector<std::pair<std::string, std::string>> jobs;  // (what, source)
  const Variant variants[] = {Variant::Naive, Variant::Tiled, Variant::TiledBanks, Variant::TiledBanksIters,
                              Variant::TwoPass, Variant::OnePass};
  int seed = 0;
  for (Variant v : variants)
    for (int eb : {1, 2, 4, 8, 16}) {
      const int n = 5 + (seed * 7) % 30;  // 5..34: 64-bit indices too
      const Bmmc b = (v == Variant::Tiled || v == Variant::TiledBanks || v == Variant::TiledBanksIters)
                         ? random_bpc(n, seed)
                         : random_bmmc(n, seed);
      ++seed;
      const Plan plan = make_plan(b, eb, default_caps(), {v});
      for (const KernelSource& k : generate_cuda(plan, {seed % 2 == 0}))
        jobs.emplace_back(fmt::format("{} eb {} n {}", to_string(v), eb, n), k.source);
    }
  for (int k = 1; k <= 4; ++k) {  // vector widths
    GpuPolicy o;
    o.vector_bits = k;
    const Plan plan = make_plan(random_bmmc(20, 900 + k), 16 >> k, default_caps(), o);
    jobs.emplace_back(fmt::format("vector_bits {}", k), generate_cuda(plan)[0].source);
  }
  std::vector<std::future<std::vector<char>>> done;
  for (auto& [what, src] : jobs)
    done.push_back(std::async(std::launch::async, [src = src] { return compile_cubin(src, "bmmc_kernel.cu", 90); }));
  for (size_t i = 0; i < jobs.size(); ++i) {
    std::vector<char> cubin;
    EXPECT_NO_THROW(cubin = done[i].get()) << jobs[i].first << "\n" << jobs[i].second;
    EXPECT_TRUE(looks_like_cubin(cubin)) << jobs[i].first;
  }
}

TEST(CodegenNvrtc, LaunchOrdersAndDramProbesCompileForSm90) {
  // Every launch order (32- and 64-bit indices) and the probe of each plan; the probe keeps the plan's reads
  // and writes, so it must name the same launch order and declare no shared memory.
  std::vector<std::pair<std::string, std::future<std::vector<char>>>> done;
  int seed = 0;
  for (BlockOrder order : {BlockOrder::Coordinate, BlockOrder::Input, BlockOrder::Output, BlockOrder::Balanced})
    for (int n : {20, 34}) {
      GpuPolicy o;
      o.block_order = order;
      const Plan plan = make_plan(random_bmmc(n, 70 + seed), seed % 2 ? 8 : 4, default_caps(), o);
      ++seed;
      const TilePass& pass = std::get<TilePass>(plan.passes.at(0));
      EXPECT_EQ(pass.block_order.empty(), order == BlockOrder::Coordinate);
      const KernelSource kernel = generate_cuda(plan)[0], probe = generate_access_probe(pass);
      EXPECT_EQ(kernel.source.find("// launch order") != std::string::npos, order != BlockOrder::Coordinate) << kernel.source;
      EXPECT_EQ(probe.source.find("// launch order") != std::string::npos, order != BlockOrder::Coordinate) << probe.source;
      EXPECT_EQ(probe.source.find("__shared__"), std::string::npos) << probe.source;
      EXPECT_EQ(probe.grid, kernel.grid);
      EXPECT_EQ(probe.block, kernel.block);
      EXPECT_EQ(probe.shared_bytes, 0u);
      // Split over a cluster's worth of blocks: 2^C times the blocks, each with 2^C fewer rows per warp; a
      // split beyond the rows a warp has is refused.
      const int C = 1 + seed % 2;
      const KernelSource split = generate_access_probe(pass, {}, C);
      EXPECT_EQ(split.grid, kernel.grid << C);
      EXPECT_EQ(split.block, kernel.block);
      EXPECT_NE(split.source.find(fmt::format("{} rows per warp", pass.iters() >> C)), std::string::npos) << split.source;
      EXPECT_THROW(generate_access_probe(pass, {}, pass.row_bits - pass.warp_bits + 1), std::invalid_argument);
      const std::string what = fmt::format("{} n {}", to_string(order), n);
      done.emplace_back(what + " split probe\n" + split.source, std::async(std::launch::async, [src = split.source] {
                          return compile_cubin(src, "bmmc_probe.cu", 90);
                        }));
      done.emplace_back(what + " kernel\n" + kernel.source, std::async(std::launch::async, [src = kernel.source] {
                          return compile_cubin(src, "bmmc_kernel.cu", 90);
                        }));
      done.emplace_back(what + " probe\n" + probe.source, std::async(std::launch::async, [src = probe.source] {
                          return compile_cubin(src, "bmmc_probe.cu", 90);
                        }));
    }
  for (auto& [what, f] : done) {
    std::vector<char> cubin;
    EXPECT_NO_THROW(cubin = f.get()) << what;
    EXPECT_TRUE(looks_like_cubin(cubin)) << what;
  }
}

TEST(CodegenNvrtc, PackedByteTilesCompileForSm90) {
  // 1-byte elements four to a shared word: byte addresses into tileb, in the plain and the push kernel's body.
  for (int n : {20, 34}) {
    const Plan plan = make_plan(random_bmmc(n, 9), 1, default_caps());
    ASSERT_TRUE(std::get<TilePass>(plan.passes.at(0)).packed_bytes);
    const KernelSource k = generate_cuda(plan)[0];
    EXPECT_NE(k.source.find("unsigned char* const tileb"), std::string::npos) << k.source;
    EXPECT_NE(k.source.find("four to a shared word"), std::string::npos) << k.source;
    const std::size_t decl = k.source.find("unsigned int tile[];");  // every access goes through tileb
    ASSERT_NE(decl, std::string::npos) << k.source;
    EXPECT_EQ(k.source.find("tile[", decl + 20), std::string::npos) << k.source;
    EXPECT_EQ(k.shared_bytes, std::get<TilePass>(plan.passes.at(0)).shared_bytes());
    std::vector<char> cubin;
    EXPECT_NO_THROW(cubin = compile_cubin(k.source, "bmmc_kernel.cu", 90)) << k.source;
    EXPECT_TRUE(looks_like_cubin(cubin));
  }
}

TEST(CodegenNvrtc, InPlaceKernelsCompileForSm90) {
  // Involution passes (pairs, self-mapped cosets, fixed tiles, masks, 64-bit indices) and naive ones.
  std::vector<std::pair<std::string, InPlacePlan>> plans;
  const PlanOptions gpu = gpu_plan_options({}, 30, default_caps());
  plans.emplace_back("high swap (direct)", make_swap_plan(30, {{28, 29}}, 8, gpu));
  plans.emplace_back("masked direct", make_swap_plan(34, {{20, 33}}, 1, gpu, BitVec{1} << 6, 0));
  plans.emplace_back("low-high swap", make_swap_plan(30, {{0, 29}}, 4, gpu));
  plans.emplace_back("masked", make_swap_plan(20, {{0, 9}, {5, 16}}, 2, gpu, BitVec{1} << 19, 0));
  plans.emplace_back("masked lane", make_swap_plan(20, {{0, 9}}, 16, gpu, BitVec{1} << 3, BitVec{1} << 3));
  plans.emplace_back("random bmmc n 34", make_inplace_plan(random_bmmc(34, 5), 1, gpu));
  plans.emplace_back("gray n 12", make_inplace_plan(gray(12), 4, gpu));
  plans.emplace_back("tiny", make_inplace_plan(bit_reverse(3), 8, gpu));
  std::vector<std::pair<std::string, std::future<std::vector<char>>>> done;
  for (const auto& [what, plan] : plans)
    for (const KernelSource& k : generate_cuda(plan))
      done.emplace_back(what + "\n" + k.source,
                        std::async(std::launch::async, [src = k.source] { return compile_cubin(src, "bmmc_inplace.cu", 90); }));
  EXPECT_GE(done.size(), plans.size());
  for (auto& [what, f] : done) {
    std::vector<char> cubin;
    EXPECT_NO_THROW(cubin = f.get()) << what;
    EXPECT_TRUE(looks_like_cubin(cubin)) << what;
  }
}

TEST(CodegenNvrtc, BitReverseKernelReadsLikeThePaperAppendix) {
  const Plan plan = make_plan(bit_reverse(15), 4, default_caps());
  const std::string src = generate_cuda(plan)[0].source;
  EXPECT_EQ(src.rfind("// bmmc generated kernel", 0), 0u) << src;
  EXPECT_NE(src.find("// launch: grid 8 blocks x 256 threads"), std::string::npos) << src;
  EXPECT_NE(src.find("__syncthreads();"), std::string::npos);
  EXPECT_NE(src.find("extern \"C\" __global__"), std::string::npos);
  EXPECT_EQ(src.find("for ("), std::string::npos) << "loops must be unrolled";
}

}  // namespace
}  // namespace bmmc
