// The direct loops in place on pairs of units (src/cpu/direct_blocks.hpp: make_direct_pairs,
// run_direct_pairs; src/cpu/inplace.cpp picks them): random involutions, conjugated bit-reverses, swap sets
// with low bits, transposes and the involution factors of random BMMCs and BPCs, every element size, n = 5..20,
// each direct loop this CPU has (AVX-512 groups of whole lines, AVX2 blends and lane permutes, VBMI byte groups,
// the walk), 1 and 2 threads, against the out-of-place permuter on the same data; the units in any order of
// chunks; and where the in-place permuter runs them (where out of place runs a direct loop).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../src/cpu/direct_blocks.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cpu/inplace.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/plan/inplace_plan.hpp"
#include "cpu_features.hpp"

namespace bmmc {
namespace {

std::vector<unsigned char> random_bytes(std::size_t size, std::uint64_t seed) {
  std::vector<unsigned char> v(size);
  std::mt19937_64 rng(seed);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

// The maps of the suite at n: involutions of every kind the planner and the factorisations give.
std::vector<std::pair<Bmmc, std::string>> involutions(int n, std::mt19937_64& rng) {
  std::vector<std::pair<Bmmc, std::string>> maps;
  maps.emplace_back(bit_reverse(n), "bit-reverse");
  maps.emplace_back(random_involution(n, rng()), "random involution");
  const Bmmc g = random_bmmc(n, rng());
  maps.emplace_back(g.inverse() * bit_reverse(n) * g, "bit-reverse conjugated by a random BMMC");
  maps.emplace_back(swap_index_bits(n, {{0, n - 1}}), "swap of the lowest and highest bit");
  maps.emplace_back(swap_index_bits(n, {{0, n - 1}, {1, n - 2}}), "swap set of low and high bits");
  if (n >= 8) maps.emplace_back(swap_index_bits(n, {{0, n - 1}, {4, n - 2}, {2, 3}}), "swap set, middle bits");
  if (n % 2 == 0) maps.emplace_back(transpose(n, n / 2), "square transpose");
  for (const Bmmc& f : factor_involutions(random_bmmc(n, rng()))) maps.emplace_back(f, "factor of a random BMMC");
  for (const Bmmc& f : factor_involutions(Bmmc(random_bpc(n, rng()).matrix(), rng() & low_mask(n))))
    maps.emplace_back(f, "factor of a random BPC");
  return maps;
}

// The direct-loop policies this CPU can run: each loop kind once (the executor picks the kind per map).
std::vector<std::pair<CpuPolicy, std::string>> loop_policies() {
  std::vector<std::pair<CpuPolicy, std::string>> out;
  CpuPolicy p;
  p.direct = true;
  out.emplace_back(p, "default loops");
  p.avx512 = false;
  if (test::cpu_has_avx512()) out.emplace_back(p, "AVX2 loops");
  p.register_transpose = false;
  out.emplace_back(p, "walk");
  return out;
}

// Runs f in place with `policy` and compares with the out-of-place permuter on the same data; returns the
// in-place loop names.
std::string expect_matches_out_of_place(const Bmmc& f, int eb, const CpuPolicy& policy, const std::string& what,
                                        std::uint64_t seed) {
  const std::size_t bytes = (std::size_t{1} << f.n()) * static_cast<std::size_t>(eb);
  const std::vector<unsigned char> in = random_bytes(bytes, seed);
  std::vector<unsigned char> want(bytes), data = in;
  CpuPermuter(f, eb, policy)(in.data(), want.data());
  const CpuInPlacePermuter p(f, eb, policy);
  p(data.data());
  EXPECT_TRUE(data == want) << what << ": n = " << f.n() << ", " << eb << " B, threads " << policy.threads
                            << ", loops " << p.kernel_name() << "\n"
                            << f.to_string();
  return p.kernel_name();
}

TEST(CpuDirectPairs, InvolutionsEveryLoopAgainstOutOfPlace) {
  std::mt19937_64 rng(4901);
  int direct = 0, total = 0;
  for (int eb : {1, 2, 4, 8, 16})
    for (int n : {5, 6, 9, 12, 14})
      for (const auto& [f, what] : involutions(n, rng))
        for (auto [policy, loops] : loop_policies()) {
          policy.threads = 1 + static_cast<int>(rng() % 2);
          const std::string name = expect_matches_out_of_place(f, eb, policy, what + ", " + loops, rng());
          direct += name.starts_with("pairs-direct-");
          ++total;
        }
  // Nearly every involution's units pair up (a walk block's always; a group's when X can be completed
  // A-invariantly): the rest runs the tile loop on pairs of cosets, checked the same way.
  EXPECT_GT(direct, total * 9 / 10) << direct << " of " << total;
}

// Arrays of up to 4 MiB (the default direct loops' limit with AVX-512) and beyond, on one and two threads:
// several chunks per thread, and pairs whose partners lie in other threads' chunks.
TEST(CpuDirectPairs, LargerArraysOneAndTwoThreads) {
  std::mt19937_64 rng(4902);
  for (int eb : {4, 8, 16})
    for (int n : {17, 20}) {
      if (static_cast<std::size_t>(eb) << n > std::size_t{8} << 20) continue;
      for (int threads : {1, 2}) {
        CpuPolicy policy;
        policy.direct = true;
        policy.threads = threads;
        const Bmmc g = random_bmmc(n, rng());
        expect_matches_out_of_place(g.inverse() * bit_reverse(n) * g, eb, policy, "conjugated bit-reverse", rng());
        expect_matches_out_of_place(swap_index_bits(n, {{0, n - 1}}), eb, policy, "swap:0,n-1", rng());
        expect_matches_out_of_place(random_bmmc(n, rng()), eb, policy, "random BMMC (3-4 passes)", rng());
      }
    }
}

// A pass is independent of the order of its units: run_direct_pairs over chunks in a shuffled order (each
// chunk owning the pairs whose smaller index it holds) gives the out-of-place result.
TEST(CpuDirectPairs, UnitsInAnyOrder) {
  std::mt19937_64 rng(4903);
  for (int eb : {1, 2, 4, 8, 16})
    for (int n : {6, 11, 15})
      for (const auto& [f, what] : involutions(n, rng))
        for (const auto& [policy, loops] : loop_policies()) {
          cpu_detail::DirectTables d = cpu_detail::make_direct_tables(
              f, eb, policy.register_transpose.value_or(true), policy.avx512, true);
          if (!cpu_detail::make_direct_pairs(f, d)) continue;
          const std::size_t bytes = (std::size_t{1} << n) * static_cast<std::size_t>(eb);
          std::vector<unsigned char> data = random_bytes(bytes, rng()), want(bytes);
          permute_reference(f, data.data(), want.data(), eb);
          const std::uint64_t units = cpu_detail::direct_units(d);
          const std::uint64_t chunk = 1 + rng() % std::max<std::uint64_t>(1, units / 3);
          std::vector<std::uint64_t> starts;
          for (std::uint64_t u = 0; u < units; u += chunk) starts.push_back(u);
          std::shuffle(starts.begin(), starts.end(), rng);
          for (std::uint64_t s : starts) cpu_detail::run_direct_pairs(d, data.data(), s, std::min(units, s + chunk));
          EXPECT_TRUE(data == want) << what << ", " << loops << ": " << cpu_detail::direct_kernel_name(d)
                                    << ", n = " << n << ", " << eb << " B, chunks of " << chunk;
        }
}

// Group spaces completed A-invariantly: swaps of lane bits and of the aligned bits just above them with high
// bits (the unit directions that would complete X by default are moved by f), and the factors of random BMMCs
// (rank-one involutions, whose complement may have lane bits) pair up on the groups of every element size.
TEST(CpuDirectPairs, GroupsCompletedInvariantly) {
  for (int eb : {2, 4, 8})
    for (int n : {14, 20}) {
      std::vector<Bmmc> maps = {swap_index_bits(n, {{0, n - 1}, {2, n - 2}, {3, n - 3}, {4, n - 4}, {5, n - 5}})};
      for (std::uint64_t seed : {1, 2, 3})
        for (const Bmmc& f : factor_involutions(random_bmmc(n, seed))) maps.push_back(f);
      for (const Bmmc& f : maps) {
        cpu_detail::DirectTables d = cpu_detail::make_direct_tables(f, eb, true, true, true);
        if (!d.groups) continue;  // no vector loop for this element size on this CPU
        EXPECT_TRUE(cpu_detail::make_direct_pairs(f, d))
            << cpu_detail::direct_kernel_name(d) << ", n = " << n << ", " << eb << " B\n" << f.to_string();
      }
    }
}

// Only an involution pairs its units; a refused map leaves the tables without pairs.
TEST(CpuDirectPairs, OnlyInvolutionsPair) {
  for (int eb : {4, 16}) {
    const Bmmc f = gray(12);
    cpu_detail::DirectTables d = cpu_detail::make_direct_tables(f, eb, true, true, true);
    EXPECT_FALSE(cpu_detail::make_direct_pairs(f, d));
    EXPECT_FALSE(d.pairs.has_value());
    EXPECT_FALSE(cpu_detail::make_direct_pairs(bit_reverse(11), d)) << "tables of another n";
    EXPECT_THROW(cpu_detail::run_direct_pairs(d, nullptr, 0, 1), std::logic_error);
  }
}

// Where the in-place permuter runs the direct loops: where out of place would (the size rule, or
// CpuPolicy::direct), never with an explicit tile, a mask or a plan handed in (the tile loop on pairs of cosets
// then) unless CpuPolicy::direct, and not above the size rule's limit.
TEST(CpuDirectPairs, ChosenWhereOutOfPlaceRunsDirect) {
  const Bmmc f = bit_reverse(14), big = bit_reverse(22);
  const std::string small = CpuInPlacePermuter(f, 4).kernel_name();
  EXPECT_EQ(small, "pairs-" + CpuPermuter(f, 4).kernel_name());
  EXPECT_TRUE(small.starts_with("pairs-direct-")) << small;
  EXPECT_FALSE(CpuInPlacePermuter(big, 4).kernel_name().starts_with("pairs-direct-"));  // 16 MiB
  CpuPolicy tiled;
  tiled.direct = false;
  EXPECT_FALSE(CpuInPlacePermuter(f, 4, tiled).kernel_name().starts_with("pairs-direct-"));
  CpuPolicy tile;
  tile.tile_bits = 10;
  EXPECT_FALSE(CpuInPlacePermuter(f, 4, tile).kernel_name().starts_with("pairs-direct-"));
  CpuPolicy forced;
  forced.direct = true;
  EXPECT_TRUE(CpuInPlacePermuter(big, 4, forced).kernel_name().starts_with("pairs-direct-"));
  const CpuInPlacePermuter masked(
      make_swap_plan(14, {{0, 12}}, 4, cpu_inplace_plan_options({}), BitVec{1} << 13, BitVec{1} << 13), forced);
  EXPECT_FALSE(masked.kernel_name().starts_with("pairs-direct-")) << masked.kernel_name();
  CpuPolicy walk;
  walk.register_transpose = false;
  EXPECT_EQ(CpuInPlacePermuter(f, 16, walk).kernel_name(), "pairs-direct-walk");
  // A plan handed in runs as given (the tile loop) unless CpuPolicy::direct asks for the direct loop.
  const InPlacePlan plan = make_inplace_plan(f, 4, cpu_inplace_plan_options({}));
  EXPECT_FALSE(CpuInPlacePermuter(plan).kernel_name().starts_with("pairs-direct-"));
  EXPECT_TRUE(CpuInPlacePermuter(plan, forced).kernel_name().starts_with("pairs-direct-"));
}

}  // namespace
}  // namespace bmmc
