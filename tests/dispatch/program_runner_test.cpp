// The front door for programs on the CPU: the sorting network against std::sort for every DType and strategy,
// random parm programs against the interpreter, a program followed by its inverse giving the input back, what
// the runner reports, and bad input refused before anything is written. The same on CUDA is in
// tests/cuda/program_runner_test.cpp (it needs a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "bmmc/combinators/execute_cpu.hpp"
#include "bmmc/combinators/interpret.hpp"
#include "bmmc/combinators/sorting_network.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/program_runner.hpp"
#include "combinators/random_parm_program.hpp"
#include "dist/error_message.hpp"

namespace bmmc {
namespace {

constexpr DType kTypes[] = {DType::Int32, DType::UInt32, DType::Float32, DType::Int64, DType::UInt64, DType::Float64};
constexpr ExecStrategy kStrategies[] = {ExecStrategy::Fused, ExecStrategy::Folded, ExecStrategy::PermuteThenLeaf};

ProgramOptions on_cpu(ExecStrategy s = ExecStrategy::Fused) {
  ProgramOptions o;
  o.backend = Backend::Cpu;
  o.strategy = s;
  return o;
}

// 2^k random keys of type T as bytes: negative and positive, repeated values, no NaN, no -0.0 (so that a
// bitwise comparison with std::sort is exact).
template <class T>
std::vector<std::byte> random_keys(int k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(std::size_t{1} << k);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>)
      x = static_cast<T>(static_cast<int>(rng() % 2001) - 1000) / T(8) + (rng() % 2 ? T(0.5) : T(0.25));
    else
      x = static_cast<T>(rng() % 4 == 0 ? rng() % 7 : rng());  // some repeats
  }
  std::vector<std::byte> bytes(v.size() * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

template <class T>
std::vector<std::byte> std_sorted(const std::vector<std::byte>& in) {
  std::vector<T> v(in.size() / sizeof(T));
  std::memcpy(v.data(), in.data(), in.size());
  std::sort(v.begin(), v.end());
  std::vector<std::byte> out(in.size());
  std::memcpy(out.data(), v.data(), in.size());
  return out;
}

TEST(ProgramRunner, SortsEveryDTypeWithEveryStrategyAsStdSortDoes) {
  int checked = 0;
  for (DType t : kTypes)
    for (ExecStrategy s : kStrategies)
      for (int k : {1, 2, 5, 9, 12}) {
        visit_dtype(t, [&](auto v) {
          using T = decltype(v);
          const auto in = random_keys<T>(k, 100 * k + static_cast<int>(t));
          const ProgramRunner runner(sort_network(k), t, on_cpu(s));
          std::vector<std::byte> out(in.size());
          EXPECT_EQ(runner.run_host(in.data(), out.data(), out.size()), Backend::Cpu);
          EXPECT_EQ(out, std_sorted<T>(in)) << to_string(t) << " " << to_string(s) << " k = " << k;
          auto again = in;  // in place: the same array as input and output
          runner(again.data());
          EXPECT_EQ(again, out) << to_string(t) << " " << to_string(s) << " k = " << k << " in place";
          ++checked;
        });
      }
  EXPECT_EQ(checked, 6 * 3 * 5);
}

TEST(ProgramRunner, RandomParmProgramsMatchTheInterpreter) {
  std::mt19937_64 rng(7);
  for (int r = 0; r < 20; ++r) {
    const int n = 3 + static_cast<int>(rng() % 10);
    const Program p = test::random_parm_program(n, rng);
    std::vector<std::int64_t> in(std::size_t{1} << n);
    for (auto& x : in) x = static_cast<std::int64_t>(rng() % 1000) - 500;
    auto expect = in;
    interpret(p, std::span<std::int64_t>(expect));
    for (ExecStrategy s : kStrategies) {
      ProgramOptions o = on_cpu(s);
      o.tile_bits = 4;  // small tiles: several cosets, and columns cut over several fused passes
      o.line_bits = 1;
      const ProgramRunner runner(p, DType::Int64, o);
      auto got = in;
      runner(got.data());
      ASSERT_EQ(got, expect) << "n " << n << " " << to_string(s) << "\n" << p.to_string();
    }
  }
}

// A program of permutations (top level and inside parms) has an inverse: the steps reversed, each inverted.
// Running a program and then its inverse gives every element back in place.
TEST(ProgramRunner, APermutationProgramThenItsInverseIsTheIdentity) {
  std::mt19937_64 rng(3);
  for (int r = 0; r < 12; ++r) {
    const int n = 2 + static_cast<int>(rng() % 12);
    const Bmmc a = random_bmmc(n, rng()), b = random_bmmc(n - 1, rng());
    BitVec m = 0;
    while (!m) m = rng() & low_mask(n);
    const Program p = then(bmmc_program(a), parm(m, bmmc_program(b)));
    const Program inverse = then(parm(m, bmmc_program(b.inverse())), bmmc_program(a.inverse()));
    std::vector<std::uint32_t> in(std::size_t{1} << n);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i * 2654435761u);
    for (ExecStrategy s : kStrategies) {
      const ProgramRunner forward(p, DType::UInt32, on_cpu(s)), back(inverse, DType::UInt32, on_cpu(s));
      auto x = in;
      forward(x.data());
      if (n > 2) EXPECT_NE(x, in) << "n " << n << ": the program moved nothing, so the round trip proves little";
      back(x.data());
      ASSERT_EQ(x, in) << "n " << n << " " << to_string(s);
    }
  }
}

TEST(ProgramRunner, ReportsWhatARunDoes) {
  const LoweredProgram lp = lower(sort_network(16));
  for (ExecStrategy s : kStrategies) {
    const ProgramRunner runner(lp, DType::Int32, on_cpu(s));
    EXPECT_EQ(runner.backend(), Backend::Cpu);
    EXPECT_EQ(runner.device(), -1);
    EXPECT_EQ(runner.n(), 16);
    EXPECT_EQ(runner.bytes(), std::size_t{4} << 16);
    EXPECT_EQ(runner.lowered().stages.size(), lp.stages.size());
    // The executor's own count of one run agrees with the report, and every pass has a name and a time.
    auto data = random_keys<std::int32_t>(16, 5);
    const ExecStats st = execute_cpu(lp, data.data(), DType::Int32, s, {}, runner.fusion());
    EXPECT_EQ(runner.passes(), st.passes) << to_string(s);
    EXPECT_EQ(runner.permutation_passes(), st.permutations) << to_string(s);
    EXPECT_EQ(runner.passes(), runner.permutation_passes() + runner.leaf_passes() + runner.permutation_passes() % 2);
    const std::vector<std::string> names = runner.pass_names();
    EXPECT_EQ(names.size(), runner.passes());
    EXPECT_EQ(runner.pass_ms(data.data()).size(), runner.passes());
    EXPECT_EQ(runner.folded_permutations(), 0u);
    EXPECT_TRUE(runner.fused_sources().empty());
    EXPECT_EQ(std::count(names.begin(), names.end(), "fused"), static_cast<long>(runner.fused_passes()));
    EXPECT_EQ(runner.temp_bytes(), runner.permutation_passes() ? runner.bytes() : 0u);
  }
  // Worked example: the fused network at n = 16 on the CPU's cut (tiles of 2^14 in runs of 2^4), relaid: 6 passes
  // (`bmmc sort --n 16 --backend cpu --stats` prints the same), 9 in the network's own order.
  const ProgramRunner fused(lp, DType::Int32, on_cpu());
  EXPECT_EQ(fused.fusion().tile_bits, 14);
  EXPECT_EQ(fused.fusion().line_bits, 4);
  EXPECT_EQ(fused.passes(), 6u);
  EXPECT_EQ(fused.describe_fused(), "tiles of 2^14 keys in runs of 2^4");
  ProgramOptions own = on_cpu();
  own.relayout = false;
  EXPECT_EQ(ProgramRunner(lp, DType::Int32, own).passes(), 9u);
  ProgramOptions small = on_cpu();
  small.tile_bits = 6;
  small.line_bits = 2;
  const ProgramRunner cut(lp, DType::Int32, small);
  EXPECT_EQ(cut.fusion().tile_bits, 6);
  EXPECT_EQ(cut.fusion().line_bits, 2);
  EXPECT_GT(cut.passes(), fused.passes());
  EXPECT_EQ(ProgramRunner(lp, DType::Int32, on_cpu(ExecStrategy::Folded)).describe_fused(), "");
}

// Every refusal leaves the data as it was: nothing is written before the checks are done.
TEST(ProgramRunner, RefusesBadInputBeforeWriting) {
  const Program sort10 = sort_network(10);
  const ProgramRunner runner(sort10, DType::Int32, on_cpu());
  const auto in = random_keys<std::int32_t>(10, 9);
  std::vector<std::byte> out(in.size(), std::byte{0x5a});
  const auto untouched = out;
  using test::error_message;
  EXPECT_NE(error_message([&] { runner(nullptr); }).find("the data pointer is null"), std::string::npos);
  EXPECT_NE(error_message([&] { runner.run_host(in.data(), out.data(), out.size() - 4); })
                .find("the arrays hold 4092 bytes; this program runs on 2^10 int32 keys = 4096 bytes"),
            std::string::npos);
  EXPECT_NE(error_message([&] { runner.run_host(nullptr, out.data(), out.size()); }).find("the input pointer is null"),
            std::string::npos);
  EXPECT_NE(error_message([&] { runner.run_host(in.data(), nullptr, out.size()); }).find("the output pointer is null"),
            std::string::npos);
  EXPECT_EQ(out, untouched);
  // Partly overlapping arrays: the input a few keys into the output.
  std::vector<std::byte> big(2 * in.size(), std::byte{0x5a});
  const auto big_before = big;
  EXPECT_NE(error_message([&] { runner.run_host(big.data() + 16, big.data(), in.size()); })
                .find("overlap (4096 bytes each); expected the same array or disjoint ones"),
            std::string::npos);
  // A temp buffer overlapping the data.
  ProgramOptions perms = on_cpu(ExecStrategy::PermuteThenLeaf);
  const ProgramRunner with_temp(sort10, DType::Int32, perms);
  ASSERT_GT(with_temp.temp_bytes(), 0u);
  EXPECT_NE(error_message([&] { with_temp(big.data(), nullptr, big.data() + 64); }).find("overlaps the data"),
            std::string::npos);
  EXPECT_EQ(big, big_before);
  // Construction: a DType outside the enumeration, a negative thread count, a cut the schedule refuses.
  EXPECT_NE(error_message([&] { ProgramRunner(sort10, static_cast<DType>(17), on_cpu()); }).find("names no"),
            std::string::npos);
  ProgramOptions negative = on_cpu();
  negative.cpu.threads = -2;
  EXPECT_NE(error_message([&] { ProgramRunner(sort10, DType::Int32, negative); }), "no error");
  ProgramOptions bad_cut = on_cpu();
  bad_cut.tile_bits = 4;
  bad_cut.line_bits = 4;
  EXPECT_NE(error_message([&] { ProgramRunner(sort10, DType::Int32, bad_cut); }), "no error");
  ProgramOptions bad_backend = on_cpu();
  bad_backend.backend = static_cast<Backend>(9);
  EXPECT_NE(error_message([&] { ProgramRunner(sort10, DType::Int32, bad_backend); }).find("names no backend"),
            std::string::npos);
}

TEST(ProgramRunner, AnUnavailableBackendIsRefusedWithTheReason) {
  if (backend_available(Backend::Cuda)) GTEST_SKIP() << "a CUDA GPU is usable here: tests/cuda/program_runner_test.cpp";
  ProgramOptions o;
  o.backend = Backend::Cuda;
  EXPECT_NE(test::error_message([&] { ProgramRunner(sort_network(4), DType::Int32, o); })
                .find("backend 'cuda' is not available"),
            std::string::npos);
  o.backend = Backend::Auto;  // Auto falls back to the CPU
  EXPECT_EQ(ProgramRunner(sort_network(4), DType::Int32, o).backend(), Backend::Cpu);
}

}  // namespace
}  // namespace bmmc
