// bmmc demo [--n 24] [--backend ...]: permutes a 2^n array of int32 by a few named BMMCs, checks every
// result element by element, and prints time, bandwidth and % of a memcpy of the same bytes.
//
// The memcpy baseline is measured in the same run on the same buffers, because bandwidth numbers are only
// meaningful relative to what the memory system does at that moment. Timing goes through a Timer so that
// a GPU backend only has to supply its own (events, device buffers) next to the CPU one.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bmmc/core/spec.hpp"
#include "cli_common.hpp"
#if BMMC_HAS_CUDA
#include "bmmc/cuda/bench.hpp"
#include "bmmc/cuda/device.hpp"
#endif

namespace bmmc::cli {
namespace {

struct DemoOptions {
  int n = 0;  // 0: 28 on a GPU, 24 on the CPU
  int reps = 3;
  std::string backend = "auto";
};

// Runs one permutation (in → out) and returns its time in milliseconds.
using Timer = std::function<double(const Bmmc&, const void* in, void* out, int elem_bytes)>;

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

Timer make_timer(Backend backend) {
  return [backend](const Bmmc& p, const void* in, void* out, int elem_bytes) {
    const double t0 = now_ms();
    run_permute(p, in, out, elem_bytes, backend);
    return now_ms() - t0;
  };
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Checks out[A·x ⊕ c] == in[x] with Bmmc::apply (row parities), independent of the incremental column
// update the reference uses. Returns the number of wrong elements.
std::uint64_t count_wrong(const Bmmc& p, const std::vector<std::int32_t>& in, const std::vector<std::int32_t>& out) {
  std::uint64_t wrong = 0;
  for (std::uint64_t x = 0; x < in.size(); ++x) wrong += out[p.apply(x)] != in[x];
  return wrong;
}

std::vector<std::string> demo_specs(int n) {
  return {"bit-reverse", fmt::format("transpose:{}", n / 2), "random-bpc:1", "random-bmmc:1", "gray"};
}

#if BMMC_HAS_CUDA
// On a GPU: device arrays, CUDA-event timing, cudaMemcpy D2D of the same bytes in the same run, and an
// on-device check of every element (bench_gpu does all three).
void demo_gpu(const DemoOptions& o) {
  fmt::print("bmmc demo: 2^{} int32 elements ({} MiB) on {}, one-pass plans, median of {} runs\n", o.n,
             (std::uint64_t{4} << o.n) >> 20, device_caps().name, o.reps);
  fmt::print("{:<16} {:<8} {:>10} {:>9} {:>10}  {}\n", "spec", "class", "time ms", "GB/s", "% memcpy", "check");
  bool all_ok = true, printed_copy = false;
  for (const std::string& spec : demo_specs(o.n)) {
    const Bmmc p = parse_spec(spec, o.n);
    const auto rows = bench_gpu(p, 4, {GpuBenchCase{"one-pass", {}}}, o.reps);
    if (!printed_copy) {
      fmt::print("{:<16} {:<8} {:>10.3f} {:>9.1f} {:>9.1f}%  -\n", "(cudaMemcpy D2D)", "copy", rows[0].median_ms,
                 rows[0].gbps, 100.0);
      printed_copy = true;
    }
    const GpuBenchRow& r = rows.back();
    all_ok = all_ok && r.verified;
    fmt::print("{:<16} {:<8} {:>10.3f} {:>9.1f} {:>9.1f}%  {}\n", spec, to_string(p.classify()), r.median_ms, r.gbps,
               r.pct_memcpy, r.verified ? "ok" : "WRONG");
  }
  if (!all_ok) throw std::runtime_error("some permutations produced wrong results (see the check column)");
  fmt::print("\nAll results checked on the device against out[A·x ^ c] == in[x] for every x.\n");
}
#endif

void demo(DemoOptions o) {
  const Backend backend = resolve_backend(parse_backend(o.backend));
#if BMMC_HAS_CUDA
  if (backend == Backend::Cuda) {
    if (o.n == 0) o.n = 28;
    if (o.reps < 10) o.reps = 20;
    return demo_gpu(o);
  }
#endif
  if (o.n == 0) o.n = 24;
  const Timer timer = make_timer(backend);
  const std::uint64_t count = std::uint64_t{1} << o.n;
  const double bytes_moved = 2.0 * static_cast<double>(count) * sizeof(std::int32_t);  // read + write

  std::vector<std::int32_t> in(count), out(count);
  std::mt19937 rng(12345);
  for (auto& v : in) v = static_cast<std::int32_t>(rng() | 1u);  // random, never zero

  std::vector<double> copy_ms;
  for (int r = 0; r < o.reps + 1; ++r) {
    const double t0 = now_ms();
    std::memcpy(out.data(), in.data(), count * sizeof(std::int32_t));
    if (r > 0) copy_ms.push_back(now_ms() - t0);  // the first run faults the pages in
  }
  const double memcpy_ms = median(copy_ms);
  fmt::print("bmmc demo: 2^{} int32 elements ({} MiB), backend {}, median of {} runs\n", o.n,
             count * sizeof(std::int32_t) >> 20, to_string(backend), o.reps);
  fmt::print("memcpy of the same bytes: {:.2f} ms, {:.2f} GB/s\n\n", memcpy_ms, bytes_moved / memcpy_ms / 1e6);
  fmt::print("{:<16} {:<8} {:>10} {:>9} {:>10}  {}\n", "spec", "class", "time ms", "GB/s", "% memcpy", "check");

  const std::vector<std::string> specs = demo_specs(o.n);
  bool all_ok = true;
  for (const std::string& spec : specs) {
    const Bmmc p = parse_spec(spec, o.n);
    std::fill(out.begin(), out.end(), 0);  // poison: the data is never zero
    std::vector<double> ms{timer(p, in.data(), out.data(), 4)};
    const std::uint64_t wrong = count_wrong(p, in, out);
    for (int r = 1; r < o.reps; ++r) ms.push_back(timer(p, in.data(), out.data(), 4));
    const double t = median(ms);
    all_ok = all_ok && wrong == 0;
    fmt::print("{:<16} {:<8} {:>10.2f} {:>9.2f} {:>9.1f}%  {}\n", spec, to_string(p.classify()), t,
               bytes_moved / t / 1e6, 100.0 * memcpy_ms / t,
               wrong == 0 ? std::string("ok") : fmt::format("{} WRONG", wrong));
  }
  if (!all_ok) throw std::runtime_error("some permutations produced wrong results (see the check column)");
  fmt::print("\nAll results checked against out[A·x ^ c] == in[x] for every x.\n");
}

void add_demo_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<DemoOptions>();
  CLI::App* sub = app.add_subcommand(
      "demo", "Permute a 2^n int32 array by bit-reverse, transpose:n/2, random-bpc:1, random-bmmc:1 and gray; "
              "check each result and report time, GB/s and % of memcpy");
  sub->add_option("--n", opts->n, "log2 of the number of int32 elements (default 28 on a GPU, 24 on the CPU)")
      ->check(CLI::Range(2, 30));
  sub->add_option("--reps", opts->reps, "Timed runs per permutation (the median is shown; at least 20 on a GPU)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  add_backend_option(sub, opts->backend);
  sub->callback([opts, &run] { run = [opts] { demo(*opts); }; });
}

Registrar r(5, add_demo_command);

}  // namespace
}  // namespace bmmc::cli
