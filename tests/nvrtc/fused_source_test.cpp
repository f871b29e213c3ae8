// The fused compare-swap kernels without a GPU (docs/DESIGN.md §10): the kernel plan's index maps by property
// (every layout a bijection of the tile, each window's pairs inside one thread's registers, every access of a
// warp on 32 distinct banks, loads and stores on whole runs), and the generated source compiles with NVRTC for
// sm_90 for every key type, both kernels, the sorting network's passes and random parm programs.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <bit>
#include <future>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bmmc/codegen/fused_source.hpp"
#include "bmmc/combinators/schedule.hpp"
#include "bmmc/combinators/sorting_network.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/core/subspace.hpp"
#include "bmmc/cuda/nvrtc.hpp"
#include "bmmc/cuda/program_gpu.hpp"
#include "combinators/random_parm_program.hpp"

namespace bmmc {
namespace {

const char* const kKeyTypes[] = {"int", "unsigned int", "float", "long long", "unsigned long long", "double"};

std::vector<FusedTileSpec> specs_of(const LoweredProgram& lp, const FusionOptions& f) {
  std::vector<FusedTileSpec> out;
  for (const ScheduledPass& p : schedule(lp, ExecStrategy::Fused, f))
    if (const auto* fp = std::get_if<FusedLeafPass>(&p)) out.push_back(fused_tile_spec(*fp, lp.n));
  return out;
}

using test::random_parm_program;

// Tile coordinate of (thread, slot) in a layout.
BitVec coord(const FusedLayout& l, BitVec thread, BitVec slot) {
  return xor_of_columns(l.threads, thread) ^ xor_of_columns(l.regs, slot);
}

void check_layout(const FusedLayout& l, int T, int R, const std::string& what) {
  ASSERT_EQ(static_cast<int>(l.regs.size()), R) << what;
  ASSERT_EQ(static_cast<int>(l.threads.size()), T - R) << what;
  std::vector<BitVec> all = l.threads;
  all.insert(all.end(), l.regs.begin(), l.regs.end());
  EXPECT_EQ(Subspace::span(T, all).dim(), T) << what << ": not a bijection of the tile";
  // Every key once: the (thread, slot) → coordinate map hits each coordinate exactly once (small tiles: all).
  if (T <= 12) {
    std::vector<char> seen(std::size_t{1} << T, 0);
    for (BitVec th = 0; th < (BitVec{1} << (T - R)); ++th)
      for (BitVec r = 0; r < (BitVec{1} << R); ++r) ++seen[coord(l, th, r)];
    for (char c : seen) ASSERT_EQ(c, 1) << what;
  }
}

// A round trip through shared memory stores by `from` and loads by `to` at index S·i (shared_swizzle): S is a
// bijection, and every warp access of either layout hits 32 distinct banks (4-byte words) and every half-warp
// 16 distinct 8-byte slots.
void check_round_trip(const FusedLayout& from, const FusedLayout& to, int T, int R, const std::string& what) {
  const std::vector<BitVec> S = shared_swizzle(from, to, T);
  ASSERT_EQ(static_cast<int>(S.size()), T) << what;
  EXPECT_EQ(Subspace::span(T, S).dim(), T) << what << ": the swizzle is not invertible";
  for (const FusedLayout* l : {&from, &to})
    for (BitVec warp = 0; warp < (BitVec{1} << (T - R - 5)); warp += 1 + warp * 3)
      for (BitVec r = 0; r < (BitVec{1} << R); r += 7) {
        std::set<BitVec> banks, slots;
        for (BitVec lane = 0; lane < 32; ++lane) {
          const BitVec a = apply_rows(S, coord(*l, (warp << 5) | lane, r));
          banks.insert(a & 31);
          if (lane < 16) slots.insert(a & 15);
        }
        EXPECT_EQ(banks.size(), 32u) << what;
        EXPECT_EQ(slots.size(), 16u) << what;
      }
}

void check_plan(const FusedTileSpec& s, const FusedCodegenOptions& o, const std::string& what) {
  const FusedKernelPlan p = plan_fused_kernel(s, o);
  const int T = p.tile_dim;
  ASSERT_EQ(static_cast<int>(p.tile.size()), T);
  EXPECT_EQ(Subspace::span(s.n, p.tile).dim(), T) << what;
  for (BitVec v : s.tile) EXPECT_TRUE(Subspace::span(s.n, p.tile).contains(v)) << what << ": K misses V'";
  EXPECT_EQ(static_cast<int>(p.outside.size()), s.n - T);
  // Block origins: block[k] differs from e_outside[k] by a vector of K, so the cosets x0(b) ⊕ K are disjoint.
  ASSERT_EQ(p.block.size(), p.outside.size());
  std::vector<BitVec> all = p.tile;
  for (std::size_t k = 0; k < p.block.size(); ++k) {
    EXPECT_TRUE(Subspace::span(s.n, p.tile).contains(p.block[k] ^ (BitVec{1} << p.outside[k]))) << what;
    all.push_back(p.block[k]);
  }
  EXPECT_EQ(Subspace::span(s.n, all).dim(), s.n) << what << ": blocks and tile do not cover the array";
  for (std::size_t j = 0; j < s.columns.size(); ++j) EXPECT_EQ(xor_of_columns(p.tile, p.deltas[j]), s.columns[j].dir);
  EXPECT_LE(p.threads_per_block(), 1024) << what;
  if (p.kind != FusedKernelKind::Registers) return;
  const int R = p.reg_bits;
  check_layout(p.load, T, R, what + " load");
  check_layout(p.store, T, R, what + " store");
  for (int lane = 0; lane < 5; ++lane) {
    EXPECT_EQ(p.load.threads[lane], BitVec{1} << lane) << what << ": the load is not on whole runs";
    EXPECT_EQ(p.store.threads[lane], BitVec{1} << lane) << what << ": the store is not on whole runs";
  }
  ASSERT_FALSE(p.windows.empty());
  // Every round trip the kernel makes (Registers: from the load, between windows, to the store).
  const FusedLayout* cur = &p.load;
  for (std::size_t w = 0; w <= p.windows.size(); ++w) {
    const FusedLayout& next = w < p.windows.size() ? p.windows[w].layout : p.store;
    if (!(next == *cur)) check_round_trip(*cur, next, T, R, fmt::format("{} round trip into {}", what, w));
    cur = &next;
  }
  EXPECT_EQ(p.windows.front().first, 0u);
  EXPECT_EQ(p.windows.back().last, s.columns.size());
  for (std::size_t w = 0; w < p.windows.size(); ++w) {
    const FusedWindow& win = p.windows[w];
    if (w) EXPECT_EQ(win.first, p.windows[w - 1].last);
    EXPECT_LT(win.first, win.last);
    check_layout(win.layout, T, R, fmt::format("{} window {}", what, w));
    // Every column's pair partner sits in the same thread: delta ∈ span(regs).
    for (std::size_t j = win.first; j < win.last; ++j)
      EXPECT_TRUE(coordinates(win.layout.regs, p.deltas[j]).has_value()) << what << " column " << j;
    // Greedy: the next window's first column would not fit this one.
    if (w + 1 < p.windows.size()) {
      std::vector<BitVec> d;
      for (std::size_t j = win.first; j <= win.last; ++j) d.push_back(p.deltas[j]);
      EXPECT_GT(Subspace::span(T, d).dim(), R) << what << ": windows " << w << " and " << w + 1 << " would merge";
    }
  }
}

TEST(FusedKernelPlan, SortingNetworkPassesHaveSoundLayouts) {
  for (int n : {10, 16, 20, 24})
    for (const FusionOptions f : {gpu_fusion_options(4, 24), gpu_fusion_options(4, 28), gpu_fusion_options(8, 24), FusionOptions{13, 5}}) {
      int i = 0;
      for (const FusedTileSpec& s : specs_of(lower(sort_network(n)), f))
        for (int r : {4, 5, 6}) check_plan(s, {f.tile_bits, r, FusedKernelKind::Registers}, fmt::format("n {} t {} pass {} R {}", n, f.tile_bits, i++, r));
    }
}

// The paper's network (its rows are suffix forms such as 0xffffff, whose block part is the same for every column)
// gets its orientations known when the kernel is generated: no column's form depends on the block, nor on the
// thread except in a window the block loads into or stores from directly (its lanes must be e_0 … e_4; that
// costs at most one column there, cheaper than a round trip). Before the block and thread vectors were chosen
// in the forms' kernel (session 16), 81 of the 91 columns of the n = 24 first pass depended on the thread and
// all 91 on the block.
TEST(FusedKernelPlan, SortingNetworkOrientationsAreKnownWhenGenerated) {
  for (int n : {12, 20, 24, 26})
    for (const FusionOptions f : {gpu_fusion_options(4, n), gpu_fusion_options(8, n)})
      for (const FusedTileSpec& s : specs_of(lower(sort_network(n)), f)) {
        const FusedKernelPlan p = plan_fused_kernel(s, {f.tile_bits, 5, FusedKernelKind::Registers});
        ASSERT_EQ(p.kind, FusedKernelKind::Registers);
        for (const FusedWindow& w : p.windows) {
          const bool direct = (&w == &p.windows.front() && w.layout == p.load) || (&w == &p.windows.back() && w.layout == p.store);
          int on_threads = 0;
          for (std::size_t j = w.first; j < w.last; ++j) {
            const FusedColumn& c = s.columns[j];
            for (BitVec b : p.block) EXPECT_EQ(parity(c.row & b), 0) << "n " << n << " column " << j;
            on_threads += restrict_form(column_forms(p, c).rho, w.layout.threads) != 0;
          }
          EXPECT_LE(on_threads, direct ? 1 : 0) << "n " << n << " lines " << f.line_bits << " columns " << w.first << "..";
        }
      }
}

// The network's final permutation folds into its last fused pass (fused_then_permute): the store layout is a
// bijection whose lanes 0 … store_runs − 1 land on output bits 0 … store_runs − 1 (whole runs), at least the
// line bits of the cut; at n = 24 all five lanes do.
TEST(FusedKernelPlan, TheFinalPermutationFoldsIntoTheLastPass) {
  for (int n : {16, 20, 24, 26})
    for (DType t : {DType::Int32, DType::Float64}) {
      GpuProgramOptions go;
      go.input_order_free = true;
      const FusionOptions f = fusion_options(go, t, n);
      const std::vector<ScheduledPass> passes = schedule(lower(sort_network(n)), ExecStrategy::Fused, f);
      ASSERT_GE(passes.size(), 2u);
      const auto* last = std::get_if<FusedLeafPass>(&passes[passes.size() - 2]);
      const auto* perm = std::get_if<PermutePass>(&passes.back());
      ASSERT_TRUE(last && perm) << "n " << n;
      FusedCodegenOptions cg = fused_codegen_options(go, t, n);
      const std::optional<FusedTileSpec> spec = fused_then_permute(*last, perm->perm, n, cg, f.line_bits);
      ASSERT_TRUE(spec) << "n " << n;
      cg.out_of_place = true;
      const FusedKernelPlan p = plan_fused_kernel(*spec, cg);
      EXPECT_GE(p.store_runs, f.line_bits) << "n " << n;
      if (n == 24) EXPECT_EQ(p.store_runs, 5);
      check_layout(p.store, p.tile_dim, p.reg_bits, "folded store");
      for (int lane = 0; lane < p.store_runs; ++lane)
        EXPECT_EQ(perm->perm.matrix().apply(xor_of_columns(p.tile, p.store.threads[lane])), BitVec{1} << lane) << "n " << n;
      // Not out of place: refused, since the permutation cannot be written over the tiles being read.
      cg.out_of_place = false;
      EXPECT_THROW(generate_fused(*spec, cuda_key_type(t), cg), std::invalid_argument);
    }
}

// Random programs and cuts as GpuFused.RandomParmProgramsMatchTheInterpreter draws them: wherever a permutation
// follows a fused pass, fused_then_permute either declines (the shared kernel, short output runs) or gives a pass
// the generator takes out of place (it threw for tiles too small for registers before it asked the plan's kind).
TEST(FusedKernelPlan, RandomProgramsFoldOrDecline) {
  std::mt19937_64 rng(18);
  int folds = 0;
  for (int r = 0; r < 80; ++r) {
    const int n = 3 + static_cast<int>(rng() % 16);
    const LoweredProgram lp = lower(random_parm_program(n, rng));
    GpuProgramOptions o;
    o.tile_bits = 6 + static_cast<int>(rng() % 10);
    o.line_bits = static_cast<int>(rng() % 4);
    o.reg_bits = 3 + static_cast<int>(rng() % 3);
    o.fused_kernel = r % 4 == 3 ? FusedKernelKind::Shared : r % 4 == 1 ? FusedKernelKind::Registers : FusedKernelKind::Pipelined;
    const FusionOptions f = fusion_options(o, DType::Int32, n);
    const std::vector<ScheduledPass> passes = schedule(lp, ExecStrategy::Fused, f);
    for (std::size_t i = 0; i + 1 < passes.size(); ++i) {
      const auto* fp = std::get_if<FusedLeafPass>(&passes[i]);
      const auto* pp = std::get_if<PermutePass>(&passes[i + 1]);
      if (!fp || !pp) continue;
      FusedCodegenOptions cg = fused_codegen_options(o, DType::Int32, n);
      std::optional<FusedTileSpec> spec;
      ASSERT_NO_THROW(spec = fused_then_permute(*fp, pp->perm, n, cg, f.line_bits)) << "r " << r;
      if (!spec) continue;
      ++folds;
      cg.out_of_place = true;
      EXPECT_NO_THROW(generate_fused(*spec, "int", cg)) << "r " << r;
      EXPECT_EQ(o.fused_kernel == FusedKernelKind::Shared, false) << "r " << r;
    }
  }
  EXPECT_GT(folds, 0);
}

// GpuProgram's default run_bits grows a pass's kernel tile until its runs are 64 bytes (2^4 int32 keys) where two
// tiles still fit shared memory: at n = 24 every int32 pass then reads and writes whole runs of 16 keys, some of
// them in tiles of 2^14 keys; 8-byte keys stay at 2^13 (two 2^14 tiles of 8 bytes would be 256 KiB).
TEST(FusedKernelPlan, KernelTilesGrowToRunsOfSixtyFourBytes) {
  GpuProgramOptions go;
  go.input_order_free = true;
  for (DType t : {DType::Int32, DType::Float64}) {
    const FusionOptions f = fusion_options(go, t, 24);
    const FusedCodegenOptions cg = fused_codegen_options(go, t, 24);
    EXPECT_EQ(cg.run_bits, t == DType::Int32 ? 4 : 3);
    int grown = 0;
    for (const FusedTileSpec& s : specs_of(lower(sort_network(24)), f)) {
      const FusedKernelPlan p = plan_fused_kernel(s, cg);
      const Subspace k = Subspace::span(24, p.tile);
      for (int m = 0; m < (t == DType::Int32 ? 4 : f.line_bits); ++m) EXPECT_TRUE(k.contains(BitVec{1} << m)) << m;
      EXPECT_LE(p.tile_dim, t == DType::Int32 ? 14 : 13);
      grown += p.tile_dim > f.tile_bits;
    }
    if (t == DType::Int32) EXPECT_GT(grown, 0);
    else EXPECT_EQ(grown, 0);
  }
}

// The cost-aware cut (schedule.hpp) counts register windows without the code generator; its count must be the
// kernel plan's, or it optimises a cost the kernel does not pay.
TEST(FusedKernelPlan, TheCutCountsTheKernelsWindows) {
  for (int n : {16, 20, 24})
    for (const FusionOptions f : {gpu_fusion_options(4, 24), gpu_fusion_options(4, 28), gpu_fusion_options(8, 24)})
      for (const FusedTileSpec& s : specs_of(lower(sort_network(n)), f))
        for (int r : {4, 5}) {
          const FusedKernelPlan p = plan_fused_kernel(s, {f.tile_bits, r, FusedKernelKind::Registers});
          std::vector<BitVec> dirs;
          for (const FusedColumn& c : s.columns) dirs.push_back(c.dir);
          EXPECT_EQ(register_windows(dirs, n, p.reg_bits), static_cast<int>(p.windows.size())) << "n " << n << " R " << r;
        }
}

TEST(FusedKernelPlan, RandomProgramsHaveSoundLayouts) {
  std::mt19937_64 rng(18);
  for (int r = 0; r < 40; ++r) {
    const int n = 3 + static_cast<int>(rng() % 18);
    const FusionOptions f{6 + static_cast<int>(rng() % 9), static_cast<int>(rng() % 4)};
    for (const FusedTileSpec& s : specs_of(lower(random_parm_program(n, rng)), f))
      check_plan(s, {f.tile_bits, 3 + static_cast<int>(rng() % 3), FusedKernelKind::Registers}, fmt::format("random {} n {}", r, n));
  }
}

TEST(FusedKernelPlan, LargeTilesRaiseTheKeysPerThread) {
  // 2^15 keys with 2^3 keys per thread would be 4096 threads: R becomes 5 (the GPU test RandomParmPrograms failed
  // at a1f4646 on its r = 4: 2^14 keys, R = 3, 2048 threads).
  const auto specs = specs_of(lower(sort_network(20)), {15, 3});
  const FusedKernelPlan p = plan_fused_kernel(specs[1], {15, 3, FusedKernelKind::Registers});
  EXPECT_EQ(p.kind, FusedKernelKind::Registers);
  EXPECT_EQ(p.reg_bits, 5);
  EXPECT_EQ(p.threads_per_block(), 1024);
  EXPECT_EQ(plan_fused_kernel(specs[1], {15, 4, FusedKernelKind::Registers}).threads_per_block(), 1024);
  EXPECT_EQ(plan_fused_kernel(specs[1], {17, 5, FusedKernelKind::Registers}).kind, FusedKernelKind::Shared);  // 128 keys a thread
  // Pipelined needs two tiles of shared memory: 2 x 64 KiB fits, 2 x 128 KiB does not (registers instead).
  const auto specs14 = specs_of(lower(sort_network(20)), {14, 3});
  EXPECT_EQ(plan_fused_kernel(specs14[1], {14, 5, FusedKernelKind::Pipelined, 4}).kind, FusedKernelKind::Pipelined);
  EXPECT_EQ(plan_fused_kernel(specs14[1], {15, 5, FusedKernelKind::Pipelined, 4}).kind, FusedKernelKind::Registers);
  EXPECT_EQ(plan_fused_kernel(specs14[1], {14, 5, FusedKernelKind::Pipelined, 8}).kind, FusedKernelKind::Registers);
  EXPECT_EQ(plan_fused_kernel(specs[1], {14, 5, FusedKernelKind::Pipelined, 4}).kind, FusedKernelKind::Registers);  // V' has 15 dims
  const KernelSource ks = generate_fused(specs14[1], "float", {14, 5, FusedKernelKind::Pipelined});
  EXPECT_EQ(ks.shared_bytes, 2u * (4u << 14));
  EXPECT_NE(ks.source.find("cp.async"), std::string::npos);
  EXPECT_EQ(fused_blocks_per_sm(ks.block, ks.shared_bytes), 1u);
  EXPECT_EQ(fused_blocks_per_sm(256, 32768), 4u);
  // 32 int32 keys a thread need 128 registers: 2^13 tiles of 256 threads, 64 KiB, run 2 per SM, not 3.
  const auto specs13 = specs_of(lower(sort_network(20)), {13, 3});
  const FusedKernelPlan p13 = plan_fused_kernel(specs13[1], {13, 5, FusedKernelKind::Pipelined, 4});
  ASSERT_EQ(p13.threads_per_block(), 256);
  EXPECT_EQ(fused_registers_per_thread(p13, 4), 128u);
  EXPECT_EQ(fused_registers_per_thread(p13, 8), 255u);
  EXPECT_EQ(fused_blocks_per_sm(256, 65536), 3u);
  EXPECT_EQ(fused_blocks_per_sm(256, 65536, 128), 2u);
  EXPECT_NE(generate_fused(specs13[1], "int", {13, 5, FusedKernelKind::Pipelined}).source.find("__launch_bounds__(256, 2)"),
            std::string::npos);
}

TEST(FusedKernelPlan, SmallTilesUseTheSharedKernel) {
  const LoweredProgram lp = lower(sort_network(6));
  for (const FusedTileSpec& s : specs_of(lp, {12, 3})) {
    const FusedKernelPlan p = plan_fused_kernel(s, {12, 5, FusedKernelKind::Registers});
    EXPECT_EQ(p.tile_dim, 6);
    EXPECT_EQ(p.kind, FusedKernelKind::Shared);  // 2^6 keys cannot give 2^5 lanes 2^5 registers each
  }
}

TEST(FusedKernelPlan, RefusesBadPasses) {
  FusedTileSpec s;
  s.n = 8;
  s.tile = {1, 2, 4};
  s.columns = {FusedColumn{8, 8, 0, false, 3}};
  try {
    check_fused_tile(s);
    FAIL() << "accepted a pair outside the tile";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("outside the tile space"), std::string::npos) << e.what();
  }
  s.columns = {FusedColumn{2, 1, 0, false, 1}};
  EXPECT_THROW(check_fused_tile(s), std::invalid_argument);  // both members have the same logical bit 0
  s.columns = {FusedColumn{2, 2, 0, false, 0}};
  EXPECT_THROW(check_fused_tile(s), std::invalid_argument);  // first_bit does not separate the pair
  s.columns.clear();
  EXPECT_THROW(check_fused_tile(s), std::invalid_argument);
  s.columns = {FusedColumn{2, 2, 0, false, 1}};
  EXPECT_NO_THROW(check_fused_tile(s));
  EXPECT_THROW(generate_fused(s, "short"), std::invalid_argument);
  // Folded permutations: n independent columns of n bits, out_xor only with them.
  s.out_xor = 1;
  EXPECT_THROW(check_fused_tile(s), std::invalid_argument);
  for (int j = 0; j < 8; ++j) s.out_cols.push_back(BitVec{1} << (7 - j));
  EXPECT_NO_THROW(check_fused_tile(s));
  s.out_cols[3] = s.out_cols[2];  // singular
  EXPECT_THROW(check_fused_tile(s), std::invalid_argument);
  s.out_cols[3] = BitVec{1} << 8;  // outside n bits
  EXPECT_THROW(check_fused_tile(s), std::invalid_argument);
  s.out_cols.pop_back();  // n − 1 columns
  EXPECT_THROW(check_fused_tile(s), std::invalid_argument);
  s.out_cols.clear();
  s.out_xor = 0;
  FusedLeafPass bad;  // a tile basis not in reduced form
  bad.tile = {3, 2};
  bad.leaves.push_back(LeafPass{identity(4), Leaf{}});
  EXPECT_THROW(fused_tile_spec(bad, 4), std::invalid_argument);
}

TEST(FusedKernelNvrtc, EveryKeyTypeAndShapeCompilesForSm90) {
  std::vector<std::pair<std::string, std::string>> jobs;
  // The network at n = 24 (first, middle and last pass) with the GPU's cuts (2^13 tiles at n = 24, 2^14 above for
  // 4-byte keys), for every key type and both kernels; the first pass also out of place.
  for (const char* key : kKeyTypes) {
    const int bytes = std::string(key).find("long") != std::string::npos || std::string(key) == "double" ? 8 : 4;
    for (int cut_n : {24, 28}) {
      const FusionOptions f = gpu_fusion_options(bytes, cut_n);
      if (bytes == 8 && cut_n == 28) continue;  // the same cut as at 24
      const std::vector<FusedTileSpec> specs = specs_of(lower(sort_network(24)), f);
      for (std::size_t i : {std::size_t{0}, specs.size() / 2, specs.size() - 1})
        for (FusedKernelKind kind : {FusedKernelKind::Pipelined, FusedKernelKind::Registers, FusedKernelKind::Shared})
          jobs.emplace_back(fmt::format("{} t {} pass {} {}", key, f.tile_bits, i, to_string(kind)),
                            generate_fused(specs[i], key, {f.tile_bits, 5, kind, bytes, i == 0}).source);
    }
  }
  // Small tiles (shared fallback), 64-bit indices, other register counts, random programs.
  std::mt19937_64 rng(90);
  jobs.emplace_back("n 3", generate_fused(specs_of(lower(sort_network(3)), {15, 3})[0], "float").source);
  jobs.emplace_back("n 34", generate_fused(specs_of(lower(sort_network(34)), {13, 5}).back(), "int", {13, 6}).source);
  for (int r = 0; r < 6; ++r) {
    const int n = 8 + static_cast<int>(rng() % 12);
    const auto specs = specs_of(lower(random_parm_program(n, rng)), {10, 2});
    jobs.emplace_back(fmt::format("random n {}", n), generate_fused(specs[0], kKeyTypes[r], {10, 4}).source);
  }
  std::vector<std::future<std::vector<char>>> done;
  for (auto& [what, src] : jobs)
    done.push_back(std::async(std::launch::async, [src = src] { return compile_cubin(src, "bmmc_fused.cu", 90); }));
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::vector<char> cubin;
    EXPECT_NO_THROW(cubin = done[i].get()) << jobs[i].first << "\n" << jobs[i].second;
    EXPECT_TRUE(looks_like_cubin(cubin)) << jobs[i].first;
  }
}

TEST(FusedKernelSource, OpensWithThePassAndItsGeometry) {
  const auto specs = specs_of(lower(sort_network(20)), gpu_fusion_options(4, 28));
  const KernelSource ks = generate_fused(specs[1], "int", {15, 5});
  EXPECT_EQ(ks.kernel_name, "bmmc_fused");
  EXPECT_EQ(ks.block, 1024u);
  EXPECT_EQ(ks.grid, 32u);
  EXPECT_EQ(ks.shared_bytes, 4u << 15);
  EXPECT_EQ(ks.source.rfind("// bmmc generated kernel", 0), 0u);
  EXPECT_NE(ks.source.find("launch: grid 32 blocks x 1024 threads"), std::string::npos) << ks.source.substr(0, 600);
}

}  // namespace
}  // namespace bmmc
