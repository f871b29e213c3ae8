// bmmc demo [--n 24] [--backend ...]: permutes a 2^n array of int32 by a few named BMMCs, checks every
// result element by element, and prints time, bandwidth and % of a memcpy of the same bytes.
//
// The memcpy baseline is measured in the same run on the same buffers, because bandwidth numbers are only
// meaningful relative to what the memory system does at that moment: bench_gpu (cudaMemcpy D2D, CUDA
// events) on a GPU, bench_cpu (a memcpy on as many threads as the permutation, huge-page-advised buffers,
// interleaved rounds) on the CPU. Both check every element against an independent reference.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bmmc/bench/cpu.hpp"
#include "bmmc/bench/gpu.hpp"
#include "bmmc/core/spec.hpp"
#include "bmmc/cpu/executor.hpp"  // CpuPolicy
#include "bmmc/permute.hpp"
#include "cli_common.hpp"

namespace bmmc::cli {
namespace {

struct DemoOptions {
  int n = 0;  // 0: 28 on a GPU, 24 on the CPU
  std::optional<int> reps;  // absent: the least for the backend (kLeastRepsCpu, kLeastRepsGpu)
  std::string backend = "auto";
};

// A median of fewer runs says little on a shared machine: fewer are raised to these, and the header says so.
constexpr int kLeastRepsCpu = 10, kLeastRepsGpu = 20;

// "median of R runs", with what --reps asked for when it was raised.
std::string runs_phrase(const std::optional<int>& asked, int reps, const char* where) {
  if (!asked || *asked >= reps) return fmt::format("median of {} runs", reps);
  return fmt::format("median of {} runs (--reps {} raised to {}, the least {})", reps, *asked, reps, where);
}

// The header line and the column titles of either table.
void print_header(int n, int reps, const std::optional<int>& asked, const std::string& where, const char* least_where,
                  const char* last_column) {
  fmt::print("bmmc demo: 2^{} int32 elements ({}) on {}, one-pass plans, {}\n", n,
             format_bytes(std::uint64_t{4} << n), where, runs_phrase(asked, reps, least_where));
  fmt::print("{:<16} {:<8} {} {:>9} {:>10}  {}\n", "spec", "class", pad_left("time", 11), "GB/s", "% memcpy",
             last_column);
}

std::vector<std::string> demo_specs(int n) {
  return {"bit-reverse", fmt::format("transpose:{}", n / 2), "random-bpc:1", "random-bmmc:1", "gray"};
}

// On a GPU: device arrays, CUDA-event timing, cudaMemcpy D2D of the same bytes in the same run, and an
// on-device check of every element (bench_gpu does all three).
void demo_gpu(const DemoOptions& o, int reps) {
  print_header(o.n, reps, o.reps, gpu_name(), "on a GPU", "check");
  bool all_ok = true, printed_copy = false;
  for (const std::string& spec : demo_specs(o.n)) {
    const Bmmc p = parse_spec(spec, o.n);
    const auto rows = bench_gpu(p, 4, {GpuBenchCase{"one-pass", {}}}, reps);
    if (!printed_copy) {
      fmt::print("{:<16} {:<8} {} {:>9.1f} {:>9.1f}%  -\n", "(cudaMemcpy D2D)", "copy",
                 pad_left(format_ms(rows[0].median_ms), 11), rows[0].gbps, 100.0);
      printed_copy = true;
    }
    const GpuBenchRow& r = rows.back();
    all_ok = all_ok && r.verified;
    fmt::print("{:<16} {:<8} {} {:>9.1f} {:>9.1f}%  {}\n", spec, to_string(p.classify()),
               pad_left(format_ms(r.median_ms), 11), r.gbps, r.pct_memcpy, r.verified ? "ok" : "WRONG");
  }
  if (!all_ok) throw std::runtime_error("some permutations produced wrong results (see the check column)");
  fmt::print("\nAll results checked on the device against out[A·x ^ c] == in[x] for every x.\n");
}

void demo(DemoOptions o) {
  const Backend backend = cli_backend(o.backend);
  if (backend == Backend::Cuda) {
    if (o.n == 0) o.n = 28;
    return demo_gpu(o, std::max(o.reps.value_or(kLeastRepsGpu), kLeastRepsGpu));
  }
  if (o.n == 0) o.n = 24;
  const int reps = std::max(o.reps.value_or(kLeastRepsCpu), kLeastRepsCpu);
  CpuPolicy options;  // all cores
  print_header(o.n, reps, o.reps, "the CPU", "on the CPU", "loop");
  bool printed_copy = false;
  for (const std::string& spec : demo_specs(o.n)) {
    const Bmmc p = parse_spec(spec, o.n);
    // Every variant's output is checked against permute_reference inside bench_cpu (a wrong one throws).
    const std::vector<BenchRow> rows = bench_cpu(p, 4, reps, options, /*naive=*/false);
    if (!printed_copy) {
      fmt::print("{:<16} {:<8} {} {:>9.2f} {:>9.1f}%  -\n", "(memcpy)", "copy", pad_left(format_ms(rows[0].median_ms), 11),
                 rows[0].gbps, 100.0);
      printed_copy = true;
    }
    const auto one = std::find_if(rows.begin(), rows.end(), [](const BenchRow& r) { return r.variant == "one-pass"; });
    fmt::print("{:<16} {:<8} {} {:>9.2f} {:>9.1f}%  {}\n", spec, to_string(p.classify()),
               pad_left(format_ms(one->median_ms), 11), one->gbps, one->pct_memcpy,
               Permuter(p, 4, {.backend = Backend::Cpu, .cpu = options}).kernel_name());
  }
  fmt::print("\nAll results checked against out[A·x ^ c] == in[x] for every x (the reference loop).\n");
}

void add_demo_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<DemoOptions>();
  CLI::App* sub = app.add_subcommand(
      "demo", "Permute a 2^n int32 array by bit-reverse, transpose:n/2, random-bpc:1, random-bmmc:1 and gray; "
              "check each result and report time, GB/s and % of memcpy");
  sub->add_option("--n", opts->n, "log2 of the number of int32 elements (default 28 on a GPU, 24 on the CPU)")
      ->check(CLI::Range(2, 30));
  sub->add_option("--reps", opts->reps,
                  "Timed runs per permutation (the median is shown; default and least 10 on the CPU, 20 on a GPU: "
                  "fewer are raised, and the header says so)")
      ->check(CLI::Range(1, 1000));
  add_backend_option(sub, opts->backend);
  sub->callback([opts, &run] { run = [opts] { demo(*opts); }; });
}

Registrar r(5, add_demo_command);

}  // namespace
}  // namespace bmmc::cli
