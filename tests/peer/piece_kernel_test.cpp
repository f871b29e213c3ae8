// The pipelined exchange's piece kernel without a GPU (codegen/piece_source.hpp): the pack and unpack passes of
// random distributed plans, renumbered by piece_launch_order, generate kernels with tables of source and target
// buffers that compile with NVRTC for sm_90 (32- and 64-bit indices, every element size); splits that cannot
// hold a warp row or tables that are too large are refused.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <future>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "bmmc/codegen/piece_source.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cuda/nvrtc.hpp"
#include "bmmc/dist/piece_pass.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "peer_test_support.hpp"

namespace bmmc {
namespace {

TilePass piece_pass_of(const Bmmc& b, int eb, const std::vector<BitVec>& rows) {
  const Plan plan = make_plan(b, eb, default_caps(), piece_policy({}, eb));  // as make_piece_kernels does
  EXPECT_EQ(plan.passes.size(), 1u);
  TilePass p = std::get<TilePass>(plan.passes.at(0));
  p.block_order = piece_launch_order(p, rows);  // as DistPermuter does
  return p;
}

TEST(PieceKernel, PackAndUnpackCompileForSm90) {
  std::vector<std::pair<std::string, std::string>> jobs;
  int seed = 7;
  for (int eb : {1, 4, 8, 16})
    for (auto [m, g] : {std::pair{26, 1}, std::pair{33, 2}}) {  // 33 local bits: 64-bit indices
      const DistPlan plan = make_dist_plan(random_bmmc(m + g, ++seed), g, eb);
      const int k = plan.k;
      const TilePass pack = piece_pass_of(plan.pre, eb, pack_atom_rows(plan));
      const TilePass unpack = piece_pass_of(post_for_rank(plan, 1), eb, unpack_atom_rows(plan));
      const KernelSource kp = generate_piece(pack, m, m - k), ku = generate_piece(unpack, m - k, m);
      EXPECT_EQ(kp.kernel_name, "bmmc_piece");
      EXPECT_EQ(kp.grid, pack.blocks());
      EXPECT_NE(kp.source.find(fmt::format("struct bmmc_targets {{ vec_t* p[{}]; }}", 1 << k)), std::string::npos);
      EXPECT_NE(ku.source.find(fmt::format("struct bmmc_sources {{ const vec_t* p[{}]; }}", 1 << k)), std::string::npos);
      jobs.emplace_back(fmt::format("pack eb {} m {} g {}", eb, m, g), kp.source);
      jobs.emplace_back(fmt::format("unpack eb {} m {} g {}", eb, m, g), ku.source);
    }
  std::vector<std::future<std::vector<char>>> done;
  for (auto& [what, src] : jobs)
    done.push_back(std::async(std::launch::async, [src = src] { return compile_cubin(src, "bmmc_piece.cu", 90); }));
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::vector<char> cubin;
    EXPECT_NO_THROW(cubin = done[i].get()) << jobs[i].first << "\n" << jobs[i].second;
    EXPECT_TRUE(looks_like_cubin(cubin)) << jobs[i].first;
  }
}

TEST(PieceKernel, SplitsThatCannotHoldAWarpRowAreRefused) {
  const DistPlan plan = make_dist_plan(random_bmmc(27, 1), 1, 4);
  const TilePass pack = piece_pass_of(plan.pre, 4, pack_atom_rows(plan));
  EXPECT_THROW(generate_piece(pack, 26, pack.segment_bits() - 1), std::invalid_argument);  // rows straddle buffers
  EXPECT_THROW(generate_piece(pack, 27, 26), std::invalid_argument);                        // beyond n
  EXPECT_THROW(generate_piece(pack, 26, 26 - kMaxPieceTableBits - 1), std::invalid_argument);  // 2^9 targets
}

}  // namespace
}  // namespace bmmc
