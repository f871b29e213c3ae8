// bmmc sort --n N (--in FILE | --random SEED) [--out FILE]: sorts 2^N keys with the paper's sorting network
// (§7.1), compiled through BMMCs (combinators/lower.hpp), on the CPU or the GPU.
//
// --stats prints what the compilation did (atoms before fusion, stages after, passes over memory for each
// strategy) and the time of the run; --compare-cub (GPU) times cub::DeviceRadixSort and thrust::sort on the
// same device data in the same process. Timed rows are markdown table lines ("| method | ... |") so that
// scripts/gpu/sort.sh can collect them. The input is validated (size) before anything runs, and the output
// is written atomically only after the sort finished (and, with --check, was verified against std::sort).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <thread>
#include <string>
#include <vector>

#include "bmmc/bench/program.hpp"
#include "bmmc/combinators/sorting_network.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/dispatch/array_file.hpp"
#include "bmmc/program_runner.hpp"
#include "cli_common.hpp"

namespace bmmc::cli {
namespace {

struct SortOptions {
  int n = -1;
  std::string in, out, backend = "auto", dtype = "int32", strategy = "fused";
  std::string random;  // seed, when no --in
  bool stats = false, compare_cub = false, compare_std = false, check = false, no_relayout = false, greedy_cut = false;
  bool jit = GpuOptions{}.jit;  // the library's default: JIT-specialised permutation kernels
  int reps = 1;
  int tile_bits = 0, line_bits = -1;  // fused; 0 and -1: the backend's cut
  int reg_bits = FusedKernelOptions{}.reg_bits, run_bits = FusedKernelOptions{}.run_bits;
  std::string fused_kernel = "pipelined";
  std::string orientation = "auto";  // GPU fused: fixed, runtime or auto (FusedKernelOptions::fixed_orientation)
  std::string kernel_dir;  // GPU fused: write each fused pass's generated CUDA source here
};

std::vector<std::byte> random_keys(int n, DType t, std::uint64_t seed) {
  const std::size_t count = std::size_t{1} << n;
  std::vector<std::byte> bytes(count * dtype_bytes(t));
  std::mt19937_64 rng(seed);
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(bytes.data());
    for (std::size_t i = 0; i < count; ++i) {
      if constexpr (std::is_floating_point_v<T>)
        p[i] = static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
      else
        p[i] = static_cast<T>(rng());
    }
  });
  return bytes;
}

// Compares with std::sort of the input (bitwise equal, so every key survived); throws on a mismatch.
void check_sorted(const std::vector<std::byte>& input, const std::vector<std::byte>& output, DType t) {
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    const std::size_t count = input.size() / sizeof(T);
    std::vector<T> expect(count);
    std::memcpy(expect.data(), input.data(), input.size());
    std::sort(expect.begin(), expect.end());
    if (std::memcmp(expect.data(), output.data(), input.size()) != 0) {
      std::size_t i = 0;
      while (i < count && std::memcmp(&expect[i], output.data() + i * sizeof(T), sizeof(T)) == 0) ++i;
      throw std::runtime_error(fmt::format("sort check failed: the output differs from std::sort at element {}", i));
    }
  });
}

// --compare-std: the host's own sorts of the same keys, timed like the CPU sort (wall time per run, the copy of
// the input outside it): std::sort on one thread, and on two (each half std::sort-ed on its own thread, then one
// std::merge into a second buffer; what "std::sort on 2 threads" can be without a parallel STL backend).
struct StdSortTimes {
  std::vector<double> one, two;
  bool agree = true;  // the two results are equivalent element by element
};
StdSortTimes time_std_sorts(const std::vector<std::byte>& input, DType t, int reps) {
  StdSortTimes r;
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    const std::size_t count = input.size() / sizeof(T), half = count / 2;
    std::vector<T> a(count), b(count), merged(count);
    auto ms_since = [](std::chrono::steady_clock::time_point t0) {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    for (int rep = 0; rep < reps; ++rep) {
      std::memcpy(a.data(), input.data(), input.size());
      auto t0 = std::chrono::steady_clock::now();
      std::sort(a.begin(), a.end());
      r.one.push_back(ms_since(t0));
      std::memcpy(b.data(), input.data(), input.size());
      t0 = std::chrono::steady_clock::now();
      std::thread other([&] { std::sort(b.begin() + static_cast<std::ptrdiff_t>(half), b.end()); });
      std::sort(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(half));
      other.join();
      std::merge(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(half), b.begin() + static_cast<std::ptrdiff_t>(half),
                 b.end(), merged.begin());
      r.two.push_back(ms_since(t0));
      // Equivalent element by element (equal keys such as 0.0 and -0.0 may come out in either order).
      for (std::size_t i = 0; r.agree && i < count; ++i) r.agree = !(a[i] < merged[i]) && !(merged[i] < a[i]);
    }
  });
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void row(const std::string& method, int n, DType t, const std::string& passes, const std::vector<double>& ms,
         const std::string& sorted) {
  const double med = median(ms), mn = ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end());
  const double keys = static_cast<double>(std::size_t{1} << n);
  fmt::print("| {:<34} | {:>2} | {:<7} | {:>6} | {:>10.3f} | {:>10.3f} | {:>8.1f} | {:<6} |\n", method, n, to_string(t),
             passes, med, mn, med > 0 ? keys / med / 1e3 : 0.0, sorted);
}

void sort_command(const SortOptions& o) {
  if (o.n < 0 || o.n > 34) throw UsageError(fmt::format("--n must be in 0..34, got {}", o.n));
  if (o.reps < 1 || o.reps > 1000) throw UsageError("--reps must be in 1..1000");
  const DType t = parse_dtype(o.dtype);  // every DType sorts; parse_dtype refuses other names
  const ExecStrategy strategy = parse_exec_strategy(o.strategy.c_str());
  const std::size_t bytes = array_bytes(o.n, dtype_bytes(t));
  if (o.in.empty() == o.random.empty()) throw UsageError("give exactly one of --in FILE and --random SEED");
  if (o.out == "-")
    throw UsageError("--out -: sort prints its report on standard output, so the keys cannot go there too; give a "
                     "file (./- names a file called -)");
  const std::vector<std::byte> input =
      o.in.empty() ? random_keys(o.n, t, parse_number_arg(o.random, "--random")) : read_array_file(o.in, bytes);
  const Backend backend = cli_backend(o.backend);
  if (o.compare_cub && backend != Backend::Cuda) throw UsageError("--compare-cub needs the cuda backend");
  if (!o.kernel_dir.empty() && (backend != Backend::Cuda || strategy != ExecStrategy::Fused))
    throw UsageError("--kernel-dir needs the cuda backend and the fused strategy");
  for (const auto& [given, flag] : {std::pair{o.no_relayout, "--no-relayout"}, std::pair{o.greedy_cut, "--greedy-cut"}})
    if (given && strategy != ExecStrategy::Fused)
      throw UsageError(fmt::format("{} applies to the fused strategy, not to {}", flag, to_string(strategy)));

  const auto t0 = std::chrono::steady_clock::now();
  const LoweredProgram lp = lower(sort_network(o.n));
  const double lower_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  if (o.fused_kernel != "pipelined" && o.fused_kernel != "registers" && o.fused_kernel != "shared")
    throw UsageError(fmt::format("--fused-kernel '{}': expected pipelined, registers or shared", o.fused_kernel));
  if (o.orientation != "auto" && o.orientation != "fixed" && o.orientation != "runtime")
    throw UsageError(fmt::format("--orientation '{}': expected auto, fixed or runtime", o.orientation));
  if (o.tile_bits < 0 || o.tile_bits > 24 || o.line_bits < -1 || o.line_bits > 24 || o.reg_bits < 1 || o.reg_bits > 6 ||
      o.run_bits < -1 || o.run_bits > 10)
    throw UsageError(fmt::format("--tile-bits {}, --line-bits {}, --reg-bits {}, --run-bits {}: expected --tile-bits in "
                                 "1..24 (0: the default), --line-bits in 0..24 below it (-1: the default), --reg-bits "
                                 "in 1..6, --run-bits in -1..10",
                                 o.tile_bits, o.line_bits, o.reg_bits, o.run_bits));
  ProgramOptions po;
  po.backend = backend;
  po.strategy = strategy;
  po.tile_bits = o.tile_bits;
  po.line_bits = o.line_bits;
  po.relayout = !o.no_relayout;
  po.input_order_free = true;  // a sorting network's output does not depend on its input's order
  po.gpu.jit = o.jit;
  po.fused.cost_aware_cut = !o.greedy_cut;  // (the CPU always cuts greedily: the cost model is the GPU kernel's)
  po.fused.reg_bits = o.reg_bits;
  po.fused.run_bits = o.run_bits;
  if (o.orientation != "auto") po.fused.fixed_orientation = o.orientation == "fixed";
  po.fused.fused_kernel = o.fused_kernel == "shared"      ? FusedKernelKind::Shared
                          : o.fused_kernel == "registers" ? FusedKernelKind::Registers
                                                          : FusedKernelKind::Pipelined;
  const ProgramRunner runner(lp, t, po);
  const std::size_t passes = runner.passes();
  if (!o.kernel_dir.empty()) {  // fused_<i>.cu, i = the fused pass's order: what nvcc -cubin / cuobjdump -sass can read
    std::filesystem::create_directories(o.kernel_dir);
    const std::vector<KernelSource> sources = runner.fused_sources();
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const std::filesystem::path f = std::filesystem::path(o.kernel_dir) / fmt::format("fused_{}.cu", i);
      std::ofstream out(f);
      out << sources[i].source;
      if (!out) throw std::runtime_error(fmt::format("could not write {}", f.string()));
    }
  }
  std::string fused_info = runner.describe_fused();  // --stats: what the fused passes are
  if (backend == Backend::Cuda && runner.fused_passes())
    fused_info += fmt::format("; program built (codegen + JIT/cache) in {:.0f} ms", runner.build_ms());
  std::vector<std::byte> output(bytes);
  // --stats on the GPU: each pass timed alone (events between passes), median over the runs
  const ProgramTiming timing = time_program(runner, input.data(), output.data(), o.reps, o.stats && backend == Backend::Cuda);
  const std::vector<double>& times = timing.ms;
  const std::vector<double>& copy_times = timing.copy_ms;  // cudaMemcpy D2D of the same bytes (GPU)
  std::string pass_lines;  // --stats on the GPU: each pass's median time
  const std::vector<std::string> names = runner.pass_names();
  for (std::size_t i = 0; i < timing.pass_ms.size(); ++i)
    pass_lines += fmt::format("{}{:.1f} us {}", i ? ", " : "", median(timing.pass_ms[i]) * 1e3, names[i]);
  if (o.check) check_sorted(input, output, t);

  if (o.stats) {
    fmt::print("sort network, n = {} ({} {} keys), backend {}, strategy {}{}\n", o.n, std::size_t{1} << o.n,
               to_string(t), to_string(backend), to_string(strategy),
               backend == Backend::Cuda ? (po.gpu.jit ? ", JIT permutation kernels" : ", generic permutation kernels") : "");
    fmt::print("  program: {} steps as written (tree), lowered in {:.1f} ms\n", sort_network(o.n).tree_size(), lower_ms);
    fmt::print("  before fusion: {} bmmc atoms + {} leaf atoms = {} passes if run step by step\n", lp.bmmc_atoms,
               lp.leaf_atoms, lp.passes_unfused());
    fmt::print("  after fusion:  {} stages, {} non-identity permutations; passes permute-then-leaf {}, folded {}\n",
               lp.stages.size(), lp.permutations(), lp.passes_permute_then_leaf(), lp.passes_folded());
    if (!fused_info.empty()) fmt::print("  fused: {}\n", fused_info);
    fmt::print("  this run: {} passes over memory; {}{}\n", passes,
               fmt::format("median {:.3f} ms, min {:.3f} ms over {} run(s)", median(times),
                           *std::min_element(times.begin(), times.end()), times.size()),
               o.check ? "; output checked against std::sort" : "");
  }
  if (o.stats || o.compare_std || o.compare_cub) {  // the table: this sort, then what it is compared with
    fmt::print("| {:<34} | {:>2} | {:<7} | {:>6} | {:>10} | {:>10} | {:>8} | {:<6} |\n", "method", "n", "dtype",
               "passes", "median ms", "min ms", "Mkeys/s", "sorted");
    fmt::print("|{:-<36}|{:-<4}|{:-<9}|{:-<8}|{:-<12}|{:-<12}|{:-<10}|{:-<8}|\n", "", "", "", "", "", "", "", "");
    row(fmt::format("bmmc {} ({})", to_string(strategy), to_string(backend)), o.n, t, std::to_string(passes), times,
        o.check ? "yes" : "-");
    if (!copy_times.empty()) {
      row("cudaMemcpy D2D (one pass)", o.n, t, "1", copy_times, "-");
      const double per_pass = passes ? median(times) / static_cast<double>(passes) : 0;
      fmt::print("  per pass: {:.1f} us against {:.1f} us for a copy pass ({:.0f}% of copy speed)\n", per_pass * 1e3,
                 median(copy_times) * 1e3, per_pass > 0 ? 100 * median(copy_times) / per_pass : 0.0);
      if (!pass_lines.empty()) fmt::print("  each pass alone (median, events between passes): {}\n", pass_lines);
    }
  }
  if (o.compare_std) {
    const StdSortTimes st = time_std_sorts(input, t, o.reps);
    row("std::sort (1 thread)", o.n, t, "-", st.one, "yes");
    row("std::sort, 2 threads + std::merge", o.n, t, "-", st.two, st.agree ? "yes" : "NO");
  }
  if (o.compare_cub) {
    auto to_d = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
    const SortBaselines base = time_sort_baselines(input.data(), std::size_t{1} << o.n, t, o.reps);
    row("cub::DeviceRadixSort::SortKeys", o.n, t, "-", to_d(base.cub.ms), base.cub.sorted ? "yes" : "NO");
    row("thrust::sort", o.n, t, "-", to_d(base.thrust.ms), base.thrust.sorted ? "yes" : "NO");
  }
  if (!o.out.empty()) write_file_atomic(o.out, output.data(), output.size());
}

void add_sort_command(CLI::App& app, Action& run) {
  auto opts = std::make_shared<SortOptions>();
  CLI::App* sub = app.add_subcommand(
      "sort",
      "Sort 2^n keys with the paper's sorting network (sort/merge/vcolumn built from parm), compiled to BMMC "
      "permutations and compare-swap passes, on the CPU or the GPU");
  sub->add_option("--n", opts->n, "log2 of the number of keys")->required();
  sub->add_option("--in,-i", opts->in, "Input file: 2^n raw little-endian keys; - reads standard input")
      ->check(file_name());
  sub->add_option("--random", opts->random, "Sort random keys from this seed instead of --in");
  sub->add_option("--out,-o", opts->out, "Output file (replaced atomically after the sort)")->check(file_name());
  sub->add_option("--dtype", opts->dtype, "Key type: int32, float32, uint32, int64, uint64, float64")
      ->capture_default_str();
  sub->add_option("--strategy", opts->strategy,
                  "fused (runs of compare-swap columns that fit one tile in one pass over memory: tiles of 2^13 "
                  "4-byte keys up to n = 24 and 2^14 above, 2^13 8-byte keys on the GPU, 2^14 on the CPU), folded (one pass per column) or "
                  "permute-then-leaf (a BMMC pass, then a compare-swap pass, per stage)")
      ->capture_default_str();
  sub->add_option("--tile-bits", opts->tile_bits, "Fused: log2 of the tile (default: the backend's)");
  sub->add_option("--line-bits", opts->line_bits,
                  "Fused: log2 of the runs of consecutive keys a tile is made of (default: GPU 3 or 2 = 32 bytes, CPU 4)");
  sub->add_option("--fused-kernel", opts->fused_kernel,
                  "GPU fused: pipelined (keys in registers, shared memory between register windows, persistent "
                  "blocks that copy the next tile in while working on this one), registers (the same without the "
                  "copy-ahead; one tile per block) or shared (shared memory per column)")
      ->capture_default_str();
  sub->add_option("--reg-bits", opts->reg_bits, "GPU fused registers kernel: log2 of the keys per thread")
      ->capture_default_str();
  sub->add_option("--run-bits", opts->run_bits,
                  "GPU fused: grow a pass's kernel tile (beyond --tile-bits) until its runs have 2^run-bits consecutive keys (0: never; -1: runs of 64 bytes)")
      ->capture_default_str();
  sub->add_option("--orientation", opts->orientation,
                  "GPU fused: fixed (block origins and thread layouts chosen so that each pair's orientation is known "
                  "when the kernel is generated), runtime (plain layouts, orientation computed per thread) or auto "
                  "(fixed, except for 8-byte integer keys)")
      ->capture_default_str();
  add_backend_option(sub, opts->backend);
  sub->add_flag("--no-relayout", opts->no_relayout,
                "Fused: keep the network's own memory order (no relayout making the most used pair directions low bits)");
  sub->add_flag("--greedy-cut", opts->greedy_cut,
                "GPU fused: cut the columns greedily (longest runs first) instead of the least-cost cut with the same pass count (the CPU always cuts greedily)");
  sub->add_flag("--stats", opts->stats, "Print atoms before / stages after fusion, passes over memory and times (GPU: also each pass timed alone)");
  sub->add_option("--reps", opts->reps, "Timed runs (the GPU adds one untimed warm-up)")->capture_default_str();
  sub->add_option("--kernel-dir", opts->kernel_dir,
                  "GPU fused: write the generated CUDA source of each fused pass to DIR/fused_<i>.cu (i in pass order)");
  sub->add_flag("--check", opts->check, "Verify the output against std::sort (exit 1 when it differs)");
  sub->add_flag("--jit,!--generic", opts->jit,
                "GPU: the permutation passes' kernels JIT-specialised (the default) or, with --generic, the precompiled "
                "generic ones");
  sub->add_flag("--compare-std", opts->compare_std,
                "Also time std::sort of the same keys on one thread, and on two (each half on its own thread, then "
                "std::merge)");
  sub->add_flag("--compare-cub", opts->compare_cub,
                "GPU: also time cub::DeviceRadixSort::SortKeys and thrust::sort on the same data");
  sub->callback([opts, &run] { run = [opts] { sort_command(*opts); }; });
}

Registrar r(75, add_sort_command);

}  // namespace
}  // namespace bmmc::cli
