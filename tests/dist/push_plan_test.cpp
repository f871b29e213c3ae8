// The push plan (push_plan.hpp): reconstruction (diag(Q, I)·F = A), the run property (F⁻¹ of every low output
// bit is local), Q = I exactly when A already keeps the runs on one rank, the worked example verbatim, and the
// simulated push path against the global reference over poisoned outputs for 1 … 1024 ranks, every element size
// and every class of map; bad buffers and impossible run lengths refused before anything is written.
#include "bmmc/dist/push_plan.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/core/subspace.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/dist/simulate.hpp"
#include "dist/error_message.hpp"
#include "dist_test_support.hpp"

namespace bmmc {
namespace {

constexpr unsigned char kPoison = 0xa5;

Bmmc embed(const Bmmc& q, int n) {
  std::vector<BitVec> cols(n);
  for (int j = 0; j < n; ++j) cols[j] = j < q.n() ? q.matrix().col(j) : BitVec{1} << j;
  return Bmmc(BitMatrix::from_cols(n, cols));
}

// Every map the distributed tests use, plus the rank-bit swaps that need a finishing pass.
std::vector<std::pair<std::string, Bmmc>> push_maps(int m, int g, std::uint64_t seed) {
  auto v = test::maps_for(m + g, seed);
  if (g > 0 && m > 0) {
    v.emplace_back("swap local 0 <-> rank 0", test::one_bit_swap(m, g, 0, 0));
    v.emplace_back("swap top local <-> top rank", test::one_bit_swap(m, g, m - 1, g - 1));
  }
  if (m >= g) v.emplace_back("all rank bits swapped", test::rank_local_swap_all(m, g, seed));
  v.emplace_back("block triangular", test::block_triangular(m, g, seed));
  return v;
}

void check_properties(const PushPlan& p, const std::string& what) {
  const int m = p.local_bits, n = p.n();
  ASSERT_EQ(embed(p.finish, n) * p.push, p.bmmc) << what;  // reconstruction
  EXPECT_EQ(p.finish.complement(), 0u) << what;
  const BitMatrix finv = p.push.matrix().inverse();
  for (int j = 0; j < p.line_bits; ++j) EXPECT_EQ(finv.col(j) >> m, 0u) << what << ": F⁻¹·e_" << j << " leaves rank";
  bool already_local = true;
  const BitMatrix ainv = p.bmmc.matrix().inverse();
  for (int j = 0; j < p.line_bits; ++j) already_local = already_local && (ainv.col(j) >> m) == 0;
  EXPECT_EQ(p.one_pass(), already_local) << what;
  if (p.bmmc.is_bpc()) EXPECT_TRUE(p.finish.is_bp()) << what << ": a BPC needs only a bit permutation to finish";
}

void expect_push_matches(const Bmmc& b, int g, int eb, int line_bits, std::uint64_t seed, const std::string& what) {
  const PushPlan plan = make_push_plan(b, g, eb, line_bits);
  check_properties(plan, what);
  const std::size_t slice = plan.local_elems() * eb, total = slice * plan.ranks();
  std::vector<unsigned char> whole(total), ref(total);
  test::fill_random(whole, seed);
  permute_reference(b, whole.data(), ref.data(), eb);
  std::vector<std::vector<unsigned char>> in(plan.ranks()), out(plan.ranks()), scratch(plan.ranks());
  std::vector<const void*> cin;
  std::vector<void*> vout, vscratch;
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    in[r].assign(whole.begin() + r * slice, whole.begin() + (r + 1) * slice);
    out[r].assign(slice + 16, kPoison);
    scratch[r].assign(slice + 16, kPoison);
    cin.push_back(in[r].data());
    vout.push_back(out[r].data());
    vscratch.push_back(scratch[r].data());
  }
  CpuPolicy cpu;
  cpu.threads = 1;
  simulate_dist_push(plan, cin, vout, vscratch, cpu);
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    ASSERT_EQ(std::memcmp(in[r].data(), whole.data() + r * slice, slice), 0) << what << ": input of rank " << r;
    ASSERT_EQ(std::memcmp(out[r].data(), ref.data() + r * slice, slice), 0)
        << what << ": rank " << r << " of " << plan.ranks() << ", L = " << line_bits << ", eb = " << eb << "\n"
        << describe(plan);
  }
}

TEST(PushPlan, WorkedExampleSwapRankBitWithLocalBitZero) {
  // m = 8, g = 1, the rank bit (8) swapped with local bit 0, runs of 2^6: Q swaps local bits 0 and 6, and F
  // sends local bit 0 to the rank bit, the rank bit to local bit 6 and local bit 6 to local bit 0.
  const Bmmc a = test::one_bit_swap(8, 1, 0, 0);
  const PushPlan p = make_push_plan(a, 1, 8, 6);
  std::vector<int> q_perm = {6, 1, 2, 3, 4, 5, 0, 7}, f_perm = {8, 1, 2, 3, 4, 5, 0, 7, 6};
  EXPECT_EQ(p.finish, bit_permutation(q_perm));
  EXPECT_EQ(p.push, bit_permutation(f_perm));
  EXPECT_FALSE(p.one_pass());
  EXPECT_EQ(max_push_line_bits(a, 1), 7);
  EXPECT_NE(describe(p).find("two passes"), std::string::npos);
}

TEST(PushPlan, OnePassWhenRunsStayOnOneRank) {
  // The top local bit swapped with the rank bit keeps every run of 2^6 on one rank: Q = I, F = A.
  const Bmmc a = test::one_bit_swap(10, 1, 9, 0);
  const PushPlan p = make_push_plan(a, 1, 4, 6);
  EXPECT_TRUE(p.one_pass());
  EXPECT_EQ(p.push, a);
  EXPECT_NE(describe(p).find("one pass"), std::string::npos);
}

TEST(PushPlan, LineBitsAtLeastLocalMinusRankBits) {
  for (int g = 0; g <= 6; ++g)
    for (int m = 0; m <= 12; m += 3)
      for (const auto& [name, b] : push_maps(m, g, 11 + 3 * g + m)) {
        const int most = max_push_line_bits(b, g);
        EXPECT_GE(most, m - g) << name;
        EXPECT_LE(most, m) << name;
        check_properties(make_push_plan(b, g, 4, most), name);
        EXPECT_THROW(make_push_plan(b, g, 4, most + 1), std::invalid_argument) << name;
      }
}

TEST(PushPlan, SimulatedAgainstReferenceUpTo64Ranks) {
  for (int g = 0; g <= 6; ++g)
    for (int m = 0; m <= 10; m += (m < 4 ? 1 : 3))
      for (int eb : {1, 2, 4, 8, 16})
        for (const auto& [name, b] : push_maps(m, g, 5 + g * 17 + m * 3 + eb)) {
          if (eb != 4 && name.rfind("random", 0) != 0 && name.rfind("swap", 0) != 0) continue;
          const int most = max_push_line_bits(b, g);
          for (int line_bits : {0, most / 2, most})
            expect_push_matches(b, g, eb, line_bits, g + m + eb + line_bits,
                                name + " g=" + std::to_string(g) + " m=" + std::to_string(m));
        }
}

TEST(PushPlan, SimulatedAt1024Ranks) {
  for (const auto& [name, b] : push_maps(12, 10, 77)) {
    if (name.rfind("random", 0) != 0 && name.rfind("swap", 0) != 0 && name != "all rank bits swapped") continue;
    expect_push_matches(b, 10, 4, std::min(5, max_push_line_bits(b, 10)), 9, name);
  }
}

TEST(PushPlan, BadInputRefusedBeforeWriting) {
  const Bmmc a = test::one_bit_swap(6, 1, 0, 0);
  EXPECT_NE(test::error_message([&] { make_push_plan(a, 1, 4, 7); }).find("at most 2^5"), std::string::npos);
  EXPECT_THROW(make_push_plan(a, 8, 4, 0), std::invalid_argument);
  EXPECT_THROW(make_push_plan(a, 1, 3, 0), std::invalid_argument);
  const PushPlan p = make_push_plan(a, 1, 4, 5);
  ASSERT_FALSE(p.one_pass());
  std::vector<unsigned char> in0(256), in1(256), out0(256, kPoison), out1(256, kPoison), s0(256, kPoison);
  const std::vector<const void*> in = {in0.data(), in1.data()};
  const std::vector<void*> out = {out0.data(), out1.data()};
  // A two-pass plan without scratch, and scratch that overlaps an output.
  EXPECT_NE(test::error_message([&] { simulate_dist_push(p, in, out, {}); }).find("0 scratch"), std::string::npos);
  // A negative thread count: refused before the push writes the scratch (it was refused only by the finish).
  std::vector<unsigned char> s1(256, kPoison);
  CpuPolicy negative;
  negative.threads = -1;
  EXPECT_NE(test::error_message([&] { simulate_dist_push(p, in, out, {s0.data(), s1.data()}, negative); })
                .find("CPU threads = -1"),
            std::string::npos);
  EXPECT_EQ(s0, std::vector<unsigned char>(256, kPoison));
  EXPECT_EQ(s1, std::vector<unsigned char>(256, kPoison));
  EXPECT_NE(test::error_message([&] { simulate_dist_push(p, in, out, {s0.data(), out1.data() + 8}); }).find("overlaps"),
            std::string::npos);
  // A hand-edited plan (another push map, another finish) is refused before anything is written.
  PushPlan edited = p;
  edited.finish = identity(p.local_bits);
  const std::string m = test::error_message([&] { simulate_dist_push(edited, in, out, {s0.data(), s0.data()}); });
  EXPECT_NE(m.find("simulate_dist_push: the plan differs from make_push_plan's"), std::string::npos) << m;
  edited = p;
  edited.push = identity(p.n());
  EXPECT_THROW(simulate_dist_push(edited, in, out, {s0.data(), s0.data()}), std::invalid_argument);
  EXPECT_EQ(out0, std::vector<unsigned char>(256, kPoison));
  EXPECT_EQ(out1, std::vector<unsigned char>(256, kPoison));
}

}  // namespace
}  // namespace bmmc
