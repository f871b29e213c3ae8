// `bmmc bench` — time permutations against a copy of the same bytes measured in the same run.
//
// Rows share one schema on every backend (case, spec, variant, backend, n, elem_bytes, median_ms, min_ms,
// max_ms, gbps, pct_memcpy, first_use_ms, verified, bound_ms, x_bound); --json prints one array of them, --csv one
// line each. bound_ms and x_bound are the in-place rows' bound (plan/moved_bytes.hpp): the sectors that must
// move, at the rate of the case's memcpy row, and the row's time over it; empty (null) for other rows.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "bmmc/bench/cpu.hpp"
#include "bmmc/bench/gpu.hpp"
#include "bmmc/bench/inplace_gpu.hpp"
#include "bmmc/bench/peer_gpu.hpp"
#include "bmmc/bench/digit.hpp"
#include "bmmc/core/digit_spec.hpp"
#include "bmmc/cpu/executor.hpp"  // CpuPolicy
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/plan/moved_bytes.hpp"
#include "bmmc/permute.hpp"
#include "cli_common.hpp"
#include "plan_options.hpp"

namespace bmmc::cli {
namespace {

struct BenchOptions {
  std::vector<std::string> specs;
  std::optional<int> n;
  std::string shape;  ///< --shape: the specs are any-shape maps (digit specs) of an array of this shape
  std::vector<std::string> digit_tunes;  ///< --digit-tune: further JIT rows of other digit planner policies
  int default_n = 30;  ///< n for specs that do not define it when --n is absent (30 on a GPU, 26 on the CPU)
  int elem_bytes = 4;
  std::vector<std::string> variants = {"naive", "tiled", "tiled-banks", "tiled-banks-iters", "two-pass", "one-pass", "generic"};
  int reps = 20;
  bool json = false, csv = false, streaming = false, host_overhead = false;
  int vector_bits = -1, elems_per_thread = 0, threads = 0;
  int cpu_tile = -1;
  bool cpu_gather = false, cpu_transpose = false, cpu_direct = false, cpu_tiled = false, cpu_avx2 = false;
  bool in_place = false;
  std::string mask;  ///< --mask: swap_index_bits' controls for --in-place swap specs, "BIT=VALUE,..."
  std::vector<std::string> block_orders = {"default"};  ///< one one-pass case per launch order
  std::vector<std::string> longer_runs = {"read"};       ///< … and per side the extra tile rows lengthen
  bool probe = true;                                 ///< DRAM probe rows beside one-pass cases
  std::vector<int> probe_splits = {0};               ///< … with each tile split over 2^C blocks
  bool probe_only = false;                           ///< only the probes, of tiles beyond shared memory too
  std::string backend = "auto";
  int gpus = 0;                  ///< > 0: the multi-GPU engines over devices 0 … gpus−1
  std::vector<int> devices;      ///< or over this list (a device may repeat)
};

// The spec at --n; without --n, a spec that defines n (axes:, bits:, matrix:) keeps it and the others get
// the backend's default n.
Bmmc bench_spec(const BenchOptions& o, const std::string& spec) {
  if (o.n) return parse_spec_options({spec, o.n});
  try {
    return parse_spec_options({spec, std::nullopt});
  } catch (const UsageError&) {
    return parse_spec_options({spec, o.default_n});
  }
}

struct Row {
  std::string case_name, spec, variant, backend;
  int n, elem_bytes;
  double median_ms, min_ms, max_ms, gbps, pct_memcpy, first_use_ms;
  bool verified;
  double bound_ms = -1;  ///< in place: the bytes that must move at memcpy's rate; < 0: none
  bool has_bound() const { return bound_ms >= 0; }
  /// This row's time over the bound (nothing when there is no bound or it is 0: the identity moves nothing).
  std::optional<double> x_bound() const {
    return bound_ms > 0 ? std::optional<double>(median_ms / bound_ms) : std::nullopt;
  }
};

// --mask "27=1,3=0": bits and their values (the mask of swap_index_bits; checked against the map later).
std::pair<BitVec, BitVec> parse_mask(const std::string& text) {
  BitVec bits = 0, value = 0;
  if (text.empty()) return {bits, value};
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    int bit = -1, v = -1;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%d=%d%c", &bit, &v, &tail) != 2 || bit < 0 || bit > 63 || (v != 0 && v != 1))
      throw UsageError(fmt::format("--mask {}: expected BIT=VALUE pairs separated by commas, BIT in 0..63 and VALUE 0 "
                                   "or 1 (e.g. 27=1,3=0); got '{}'",
                                   text, item));
    if ((bits >> bit) & 1) throw UsageError(fmt::format("--mask {}: bit {} is given twice", text, bit));
    bits |= BitVec{1} << bit;
    value |= BitVec(v) << bit;
    at = end + 1;
  }
  return {bits, value};
}

// The bound beside each row of one in-place case (rows[first..]): its bytes at the case's memcpy rate.
void add_bound(std::vector<Row>& rows, std::size_t first, const MovedBytes& moved) {
  const auto copy = std::find_if(rows.begin() + first, rows.end(), [](const Row& r) { return r.variant == "memcpy"; });
  if (copy == rows.end()) return;
  const double bound = copy->median_ms * moved.fraction();
  for (std::size_t i = first; i < rows.size(); ++i) rows[i].bound_ms = bound;
}

// The bound's text: "0.500 of the array (…)", printed once per case.
std::string bound_note(const MovedBytes& m) {
  return fmt::format("bound {:.4f} of the array ({} sectors of {} B read and written once)", m.fraction(), m.sectors,
                     m.sector_bytes);
}

// RFC 4180: a field with a comma, quote or line break is quoted (specs such as axes:4x8:1,0 have commas).
std::string csv_field(const std::string& f) {
  if (f.find_first_of(",\"\n") == std::string::npos) return f;
  std::string q = "\"";
  for (char c : f) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void emit(const BenchOptions& o, const std::vector<Row>& rows) {
  if (o.json) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const Row& r : rows)
      a.push_back({{"case", r.case_name}, {"spec", r.spec}, {"variant", r.variant}, {"backend", r.backend},
                   {"n", r.n}, {"elem_bytes", r.elem_bytes}, {"median_ms", r.median_ms}, {"min_ms", r.min_ms},
                   {"max_ms", r.max_ms}, {"gbps", r.gbps}, {"pct_memcpy", r.pct_memcpy},
                   {"first_use_ms", r.first_use_ms}, {"verified", r.verified},
                   {"bound_ms", r.has_bound() ? nlohmann::ordered_json(r.bound_ms) : nlohmann::ordered_json()},
                   {"x_bound", r.x_bound() ? nlohmann::ordered_json(*r.x_bound()) : nlohmann::ordered_json()}});
    print_json(a);
  } else if (o.csv) {
    fmt::print("case,spec,variant,backend,n,elem_bytes,median_ms,min_ms,max_ms,gbps,pct_memcpy,first_use_ms,verified,"
               "bound_ms,x_bound\n");
    for (const Row& r : rows)
      fmt::print("{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.1f},{:.1f},{:.1f},{},{},{}\n", csv_field(r.case_name), csv_field(r.spec),
                 csv_field(r.variant), r.backend, r.n, r.elem_bytes, r.median_ms, r.min_ms, r.max_ms, r.gbps, r.pct_memcpy, r.first_use_ms,
                 r.verified, r.has_bound() ? fmt::format("{:.6f}", r.bound_ms) : "",
                 r.x_bound() ? fmt::format("{:.3f}", *r.x_bound()) : "");
  } else {
    // Times with their unit (format_ms), so that small runs show digits; the first use is timed on a GPU only.
    // In-place rows add the bound (the bytes that must move at memcpy's rate) and the row's time over it.
    const bool bounds = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.has_bound(); });
    auto bound_columns = [&](const Row& r) -> std::string {
      if (!bounds) return "";
      return fmt::format("  {} {:>8}", pad_left(r.has_bound() ? format_ms(r.bound_ms) : "-", 12),
                         r.x_bound() ? fmt::format("{:.3f}", *r.x_bound()) : "-");
    };
    fmt::print("{:<22} {:<18} {} {} {} {:>9} {:>9} {}  {}{}\n", "case", "variant", pad_left("median", 12),
               pad_left("min", 12), pad_left("max", 12), "GB/s", "% memcpy", pad_left("1st use", 12),
               "verified",
               bounds ? fmt::format("  {} {:>8}", pad_left("bound", 12), "x bound") : "");
    for (const Row& r : rows)
      fmt::print("{:<22} {:<18} {} {} {} {:>9.1f} {:>9.1f} {}  {}{}\n", r.case_name, r.variant,
                 pad_left(format_ms(r.median_ms), 12), pad_left(format_ms(r.min_ms), 12),
                 pad_left(format_ms(r.max_ms), 12), r.gbps, r.pct_memcpy,
                 pad_left(r.backend == "cpu" ? "-" : format_ms(r.first_use_ms), 12),
                 bounds ? fmt::format("{:<8}", r.verified ? "yes" : "NO") : std::string(r.verified ? "yes" : "NO"),
                 bound_columns(r));
  }
}

std::vector<Row> bench_cuda(const BenchOptions& o) {
  std::vector<Row> rows;
  const std::string device = gpu_name();
  for (size_t i = 0; i < o.specs.size(); ++i) {
    const Bmmc b = bench_spec(o, o.specs[i]);
    if (o.in_place) {
      GpuOptions g;
      g.codegen.streaming_hints = o.streaming;
      g.policy.elems_per_thread = o.elems_per_thread;
      g.policy.threads_per_block = o.threads;
      g.policy.vector_bits = o.vector_bits;
      const auto [mask_bits, mask_value] = parse_mask(o.mask);
      const MovedBytes moved = moved_bytes(b, o.elem_bytes, mask_bits, mask_value);  // checks the mask first
      const std::string spec = fmt::format("{} --n {}{}", o.specs[i], b.n(), o.mask.empty() ? "" : " --mask " + o.mask);
      if (!o.json && !o.csv) {
        std::string why;
        const auto v = custatevec_version(&why);
        fmt::print(stderr, "[{}/{}] {} in place (n = {}, {} B elements{}) on {}; cuStateVec: {}; {}\n", i + 1,
                   o.specs.size(), o.specs[i], b.n(), o.elem_bytes, o.mask.empty() ? "" : ", mask " + o.mask, device,
                   v ? std::to_string(*v) : "not loaded (" + why + ")", bound_note(moved));
      }
      const std::size_t first = rows.size();
      for (const GpuBenchRow& r : bench_gpu_inplace(b, o.elem_bytes, o.reps, g, mask_bits, mask_value))
        rows.push_back({o.specs[i], spec, r.variant, "cuda", b.n(), o.elem_bytes, r.median_ms, r.min_ms, r.max_ms,
                        r.gbps, r.pct_memcpy, r.first_use_ms, r.verified});
      add_bound(rows, first, moved);
      continue;
    }
    std::vector<GpuBenchCase> cases;
    for (const std::string& v : o.variants) {
      GpuBenchCase c{v, {}, false};
      c.options.codegen.streaming_hints = o.streaming;
      c.options.policy.elems_per_thread = o.elems_per_thread;
      c.options.policy.threads_per_block = o.threads;
      if (v == "generic") {
        c.options.jit = false;
        c.options.policy.variant = Variant::OnePass;
      } else {
        c.options.policy.variant = parse_variant(v);
        if (c.options.policy.variant == Variant::OnePass) c.options.policy.vector_bits = o.vector_bits;
      }
      const Variant pv = c.options.policy.variant;
      if ((pv == Variant::Tiled || pv == Variant::TiledBanks || pv == Variant::TiledBanksIters) && !b.is_tiled(kLaneBits))
        continue;  // the paper's tiled kernels do not apply to this BMMC
      if (v != "one-pass") {
        cases.push_back(c);
        continue;
      }
      for (const std::string& order : o.block_orders)
        for (const std::string& runs : o.longer_runs) {
          GpuBenchCase oc = c;
          if (order != "default") {
            oc.options.policy.block_order = parse_block_order(order);
            oc.variant += "/" + order;
          }
          oc.options.policy.longer_runs = parse_run_side(runs);
          if (o.longer_runs.size() > 1 || runs != "read") oc.variant += "/" + runs;
          oc.probe = o.probe || o.probe_only;
          oc.probe_splits = o.probe_splits;
          oc.probe_only = o.probe_only;
          cases.push_back(oc);
        }
    }
    if (!o.json && !o.csv)
      fmt::print(stderr, "[{}/{}] {} (n = {}, {} B elements) on {}\n", i + 1, o.specs.size(), o.specs[i], b.n(),
                 o.elem_bytes, device);
    for (const GpuBenchRow& r : bench_gpu(b, o.elem_bytes, cases, o.reps))
      rows.push_back({o.specs[i], fmt::format("{} --n {}", o.specs[i], b.n()), r.variant, "cuda", b.n(), o.elem_bytes,
                      r.median_ms, r.min_ms, r.max_ms, r.gbps, r.pct_memcpy, r.first_use_ms, r.verified});
  }
  if (o.host_overhead)
    for (const HostCallRow& r : host_call_costs())
      fmt::print(stderr, "host time per call: {:<36} median {:6.2f} us, min {:6.2f} us\n", r.call, r.median_us, r.min_us);
  return rows;
}

// --digit-tune "tile=16384,run=256,threads=256,min-blocks=6,cover=0,skew=0": a DigitPolicy (any subset of the keys, each once),
// refused unless every value is one the planner takes as given.
DigitPolicy parse_digit_tune(const std::string& text) {
  DigitPolicy p;
  std::vector<std::string> seen;
  const auto refuse = [&](std::size_t at, const std::string& item, const std::string& why) {
    return UsageError(fmt::format("--digit-tune '{}': '{}' at column {}: {}", text, item, at + 1, why));
  };
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    int* field = key == "tile" ? &p.tile_bytes : key == "run" ? &p.run_bytes : key == "threads" ? &p.threads_per_block
                 : key == "min-blocks" ? &p.min_blocks : key == "cover" ? &p.cover : key == "skew" ? &p.read_skew
                 : nullptr;
    if (field == nullptr || eq == std::string::npos)
      throw refuse(at, item, "expected KEY=N with KEY one of tile, run, threads, min-blocks, cover, skew");
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) throw refuse(at, item, fmt::format("{} is given twice", key));
    seen.push_back(key);
    int value = 0;
    const auto [ptr, ec] = std::from_chars(item.data() + eq + 1, item.data() + item.size(), value);
    if (ec == std::errc::result_out_of_range) throw refuse(at, item, "the number is out of range");
    if (key == "cover" || key == "skew") {  // cover 0: never, 1: wherever wider; skew 0: never (1 is the default)
      const bool one_ok = key == "cover";
      if (ec != std::errc{} || ptr != item.data() + item.size() || (value != 0 && !(one_ok && value == 1)))
        throw refuse(at, item, one_ok ? "expected cover=0 (no covering vectors) or cover=1 (wherever they are wider)"
                                      : "expected skew=0 (no read skew; the planner's rule is the default)");
      *field = value == 0 ? -1 : 1;
      at = end + 1;
      continue;
    }
    if (ec != std::errc{} || ptr != item.data() + item.size() || value <= 0)
      throw refuse(at, item, "expected a positive integer after '='");
    if (key == "tile" && value > 32768)
      throw refuse(at, item, "a tile takes at most 32768 bytes of shared memory (the planner's limit)");
    if (key == "run" && value > 32768) throw refuse(at, item, "a run of at most 32768 bytes (one tile)");
    if (key == "threads" && (value % 32 != 0 || value > 1024))
      throw refuse(at, item, "threads per block are a multiple of 32, at most 1024");
    *field = value;
    at = end + 1;
  }
  const int threads = p.threads_per_block > 0 ? p.threads_per_block : 256;
  if (p.min_blocks > 0 && p.min_blocks * threads > 2048)
    throw UsageError(fmt::format("--digit-tune '{}': min-blocks {} of {} threads is more than the 2048 threads a "
                                 "multiprocessor holds",
                                 text, p.min_blocks, threads));
  return p;
}

// --shape: any-shape maps (the digit spec language) on either backend, beside a copy of the same bytes.
std::vector<Row> bench_shape_rows(const BenchOptions& o, Backend backend) {
  const std::vector<Extent> shape = parse_shape(o.shape);
  std::vector<DigitPolicy> tunings;
  for (const std::string& t : o.digit_tunes) tunings.push_back(parse_digit_tune(t));
  std::vector<Row> rows;
  for (const std::string& spec : o.specs) {
    const DigitMap m = parse_digit_spec(spec, shape, "--shape");
    const std::string full = fmt::format("{} --shape {}", spec, o.shape);
    std::vector<GpuBenchRow> got;
    if (backend == Backend::Cuda) {
      if (!o.json && !o.csv)
        fmt::print(stderr, "{} ({} B elements, {} bytes) on {}\n", full, o.elem_bytes,
                   m.size() * o.elem_bytes, gpu_name());
      got = bench_gpu_digits(m, o.elem_bytes, o.reps, o.in_place, tunings);
    } else {
      CpuPolicy cpu;
      cpu.threads = o.threads;
      got = bench_cpu_digits(m, o.elem_bytes, o.reps, cpu);
    }
    for (const GpuBenchRow& r : got)
      rows.push_back({spec, full, r.variant, backend == Backend::Cuda ? "cuda" : "cpu", -1, o.elem_bytes, r.median_ms,
                      r.min_ms, r.max_ms, r.gbps, r.pct_memcpy, r.first_use_ms, r.verified});
  }
  return rows;
}

// --gpus / --devices: the single-process multi-GPU engines beside the local and peer-copy bounds.
void bench_peer_rows(const BenchOptions& o) {
  std::vector<int> devices = o.devices;
  for (int d = 0; d < o.gpus; ++d) devices.push_back(d);
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const std::string& spec : o.specs) {
    const Bmmc b = bench_spec(o, spec);
    const DistPlan plan = make_dist_plan(b, dist_rank_bits(devices.size(), b.n()), o.elem_bytes);
    if (!o.json)
      fmt::print("{} (N = {}, {} B elements) over {} ranks on devices {} ({}), k = {}\n", spec, b.n(), o.elem_bytes,
                 devices.size(), fmt::join(devices, ","), gpu_name(devices[0]), plan.k);
    const std::vector<PeerBenchRow> rows = bench_peer(b, o.elem_bytes, devices, o.reps);
    if (!o.json) {
      fmt::print("{:<16} {} {} {} {:>11} {:>9} {}  {:<8} {}\n", "variant", pad_left("median", 12), pad_left("min", 12),
                 pad_left("max", 12), "crossing GB", "% bound", pad_left("1st use", 12), "verified", "note");
      for (const PeerBenchRow& r : rows)
        fmt::print("{:<16} {} {} {} {:>11.3f} {:>9.1f} {}  {:<8} {}\n", r.variant, pad_left(format_ms(r.median_ms), 12),
                   pad_left(format_ms(r.min_ms), 12), pad_left(format_ms(r.max_ms), 12), r.crossing_gb, r.pct_bound,
                   pad_left(format_ms(r.first_use_ms), 12), r.verified ? "yes" : "NO", r.note);
    }
    for (const PeerBenchRow& r : rows)
      all.push_back({{"case", spec}, {"spec", fmt::format("{} --n {}", spec, b.n())}, {"variant", r.variant},
                     {"ranks", devices.size()}, {"devices", devices}, {"k", plan.k}, {"n", b.n()},
                     {"elem_bytes", o.elem_bytes}, {"median_ms", r.median_ms}, {"min_ms", r.min_ms},
                     {"max_ms", r.max_ms}, {"crossing_gb", r.crossing_gb}, {"pct_bound", r.pct_bound},
                     {"first_use_ms", r.first_use_ms}, {"verified", r.verified}, {"note", r.note}});
  }
  if (o.json) print_json(all);
}

void add_bench(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("bench", "Benchmark permutations against a copy of the same bytes (same run)");
  auto o = std::make_shared<BenchOptions>();
  sub->add_option("--spec", o->specs, "permutation(s) to time (repeatable); default: bit-reverse")->take_all();
  sub->add_option("--n", o->n, "index bits where the spec does not define them (default 30 on a GPU, 26 on the CPU)");
  sub->add_option("--shape", o->shape,
                  "an array of this shape, e.g. 1000x1003x257: the specs are any-shape maps (flip, roll, axes: ...; "
                  "see `bmmc help spec`)");
  sub->add_option("--digit-tune", o->digit_tunes,
                  "with --shape on the GPU: one more JIT row per planner policy, e.g. "
                  "tile=16384,run=256,threads=256,min-blocks=6,cover=0,skew=0 (repeatable; cover=0/1: covering "
                  "vectors never / wherever wider; skew=0: no read skew)");
  sub->add_option("--elem-bytes,-b", o->elem_bytes, "element size in bytes: 1, 2, 4, 8 or 16")->capture_default_str();
  sub->add_option("--variant", o->variants,
                  "variants to time: naive tiled tiled-banks tiled-banks-iters two-pass one-pass generic")
      ->take_all();
  sub->add_option("--reps", o->reps, "timed repetitions per configuration (median reported)")->capture_default_str();
  sub->add_option("--vector-bits", o->vector_bits, "one-pass lane accesses of 2^K elements (-1 = default)");
  sub->add_option("--elems-per-thread", o->elems_per_thread, "elements per thread (0 = default)");
  sub->add_option("--threads", o->threads, "GPU: threads per block; CPU: worker threads (0 = default)");
  sub->add_option("--cpu-tile", o->cpu_tile, "CPU: tile of 2^K elements (5..20; -1 = default, see executor.hpp)");
  auto* gather = sub->add_flag("--cpu-gather", o->cpu_gather,
                               "CPU: run the gather loop (default: the faster loop on this CPU, measured)");
  sub->add_flag("--cpu-transpose", o->cpu_transpose, "CPU: run the register-transpose loop")->excludes(gather);
  auto* direct = sub->add_flag("--cpu-direct", o->cpu_direct,
                               "CPU: run the direct loop (no tile) at any size (default: up to 1 MiB, see DESIGN §4.2)");
  sub->add_flag("--cpu-tiled", o->cpu_tiled, "CPU: run the tile loop also on small arrays")->excludes(direct);
  sub->add_flag("--cpu-avx2", o->cpu_avx2, "CPU: leave out the AVX-512 loops (run what an AVX2-only CPU runs)");
  sub->add_flag("--streaming", o->streaming, "JIT kernels use __ldcs/__stcs");
  sub->add_option("--block-order", o->block_orders,
                  "one-pass launch order(s): default, coordinate, input, output, balanced (one row each)")
      ->take_all()
      ->check(CLI::IsMember({"default", "coordinate", "input", "output", "balanced"}));
  sub->add_option("--longer-runs", o->longer_runs,
                  "one-pass: which runs the tile rows beyond the forced ones lengthen: read, write, both (one row each)")
      ->take_all()
      ->check(CLI::IsMember({"read", "write", "both"}));
  sub->add_flag("--probe,!--no-probe", o->probe,
                "time the DRAM probe of each one-pass plan beside it (its reads and writes without the tile)");
  sub->add_option("--probe-split", o->probe_splits,
                  "probe rows with each tile's rows split over 2^C consecutive blocks, as a cluster would (one row per C)")
      ->take_all()
      ->check(CLI::Range(0, 6));
  sub->add_flag("--probe-only", o->probe_only,
                "time only the one-pass probes, planned as if shared memory were unbounded (e.g. --threads 1024 "
                "--elems-per-thread 64: 2^16-element tiles, what a cluster kernel's reads and writes would cost)");
  sub->add_flag("--in-place", o->in_place,
                "time the in-place permutation (docs/DESIGN.md §8) beside memcpy, the out-of-place pass and, for bit "
                "swaps on 8/16-byte elements, NVIDIA cuStateVec where libcustatevec.so.1 loads; each row with the "
                "bound (the 32-byte sectors holding an element that moves, read and written once at memcpy's rate) "
                "and its time over it");
  sub->add_option("--mask", o->mask,
                  "--in-place on the cuda backend, swap specs: only indices whose bits match move, as BIT=VALUE pairs "
                  "(e.g. 27=1,3=0; swap_index_bits' mask, given to cuStateVec too)");
  sub->add_flag("--host-overhead", o->host_overhead, "also print the host time per call of permute(), a kept Permuter and the CUDA calls under them");
  auto* gpus = sub->add_option("--gpus", o->gpus,
                               "several GPUs of this process: the array of 2^n elements over devices 0..G-1 (push "
                               "and copy engines, local memcpy and peer-copy bound in the same run)");
  sub->add_option("--devices", o->devices, "like --gpus over this device list, e.g. 0,1 (a device may repeat)")
      ->delimiter(',')
      ->excludes(gpus);
  CLI::Option* json = sub->add_flag("--json", o->json, "print one JSON array of rows");
  sub->add_flag("--csv", o->csv, "print CSV rows")->excludes(json);
  add_backend_option(sub, o->backend);
  sub->callback([&run, o] {
    run = [o] {
      if (o->specs.empty()) o->specs = {"bit-reverse"};
      if (o->reps < 1 || o->reps > 100000) throw UsageError(fmt::format("--reps {}: expected 1..100000", o->reps));
      for (const std::string& t : o->digit_tunes) parse_digit_tune(t);  // malformed: refused before anything runs
      const Backend backend = cli_backend(o->backend);
      // Options of one backend are refused on the other rather than ignored, so that a row is what was asked.
      const std::pair<bool, const char*> gpu_only[] = {
          {o->vector_bits != -1, "--vector-bits"},   {o->elems_per_thread != 0, "--elems-per-thread"},
          {o->streaming, "--streaming"},             {o->block_orders != std::vector<std::string>{"default"}, "--block-order"},
          {o->host_overhead, "--host-overhead"},     {!o->digit_tunes.empty(), "--digit-tune"}};
      const std::pair<bool, const char*> cpu_only[] = {
          {o->cpu_tile != -1, "--cpu-tile"},  {o->cpu_gather, "--cpu-gather"}, {o->cpu_transpose, "--cpu-transpose"},
          {o->cpu_direct, "--cpu-direct"},    {o->cpu_tiled, "--cpu-tiled"},   {o->cpu_avx2, "--cpu-avx2"}};
      if (backend == Backend::Cpu && o->variants != BenchOptions{}.variants)
        for (const std::string& v : o->variants)
          if (v != "naive" && v != "one-pass")
            throw UsageError(fmt::format("--variant {}: the cpu backend times naive and one-pass (with the "
                                         "loops beside one-pass); the other variants are GPU kernels",
                                         v));
      using Given = std::span<const std::pair<bool, const char*>>;
      for (const auto& [given, name] : backend == Backend::Cpu ? Given(gpu_only) : Given(cpu_only))
        if (given)
          throw UsageError(fmt::format("{} applies to the {} backend; this run uses the {} backend", name,
                                       backend == Backend::Cpu ? "cuda" : "cpu", backend == Backend::Cpu ? "cpu" : "cuda"));
      const bool runs_asked = o->longer_runs != std::vector<std::string>{"read"};
      const bool probes_asked = o->probe_only || o->probe_splits != std::vector<int>{0};
      if (probes_asked && (o->in_place || o->gpus > 0 || !o->devices.empty() || backend == Backend::Cpu))
        throw UsageError("--probe-split and --probe-only apply to the one-pass rows of a single GPU");
      if (!o->probe && o->probe_splits != std::vector<int>{0} && !o->probe_only)
        throw UsageError("--probe-split times probe rows: it cannot go with --no-probe");
      if (o->probe_only && o->variants != std::vector<std::string>{"one-pass"})
        throw UsageError("--probe-only times one-pass probes only: add --variant one-pass");
      parse_mask(o->mask);  // a malformed mask is refused before anything runs
      if (!o->mask.empty() && (!o->in_place || backend == Backend::Cpu || !o->shape.empty() || o->gpus > 0 ||
                               !o->devices.empty()))
        throw UsageError("--mask applies to --in-place swap specs on one GPU (the cuda backend, no --shape, --gpus "
                         "or --devices)");
      if (runs_asked && (o->in_place || o->gpus > 0 || !o->devices.empty() || backend == Backend::Cpu))
        throw UsageError("--longer-runs applies to the one-pass rows of a single GPU (not --in-place, --gpus, "
                         "--devices or the CPU backend)");
      std::vector<Row> rows;
      if (!o->digit_tunes.empty() && o->shape.empty())
        throw UsageError("--digit-tune times planner policies of --shape maps: give --shape");
      if (!o->shape.empty()) {
        if (o->n) throw UsageError("--shape and --n both give the array's size: give one");
        if (o->gpus > 0 || !o->devices.empty()) throw UsageError("--shape runs on one device (no --gpus or --devices)");
        emit(*o, bench_shape_rows(*o, backend));
        return;
      }
      if (o->gpus > 0 || !o->devices.empty()) {
        if (!has_cuda_build()) throw UsageError("--gpus and --devices need a build with CUDA");
        if (backend != Backend::Cuda) throw UsageError("--gpus and --devices need the CUDA backend");
        o->default_n = 30;
        bench_peer_rows(*o);
        return;
      }
      if (backend == Backend::Cuda) {
        o->default_n = 30;
        rows = bench_cuda(*o);
      }
      if (backend == Backend::Cpu) {
        o->default_n = 26;
        for (const std::string& spec : o->specs) {
          const Bmmc b = bench_spec(*o, spec);
          CpuPolicy cpu;
          cpu.threads = o->threads;
          cpu.tile_bits = o->cpu_tile;
          if (o->cpu_gather) cpu.register_transpose = false;
          if (o->cpu_transpose) cpu.register_transpose = true;  // else measured per CPU
          if (o->cpu_direct) cpu.direct = true;
          if (o->cpu_tiled) cpu.direct = false;  // else by the size rule
          if (o->cpu_avx2) cpu.avx512 = false;
          if (!o->json && !o->csv)
            fmt::print(stderr, "{} (n = {}, {} B elements) on the CPU, one-pass loop: {}\n", spec, b.n(),
                       o->elem_bytes, Permuter(b, o->elem_bytes, {.backend = Backend::Cpu, .cpu = cpu}).kernel_name());
          // Verified inside bench_cpu against the reference permutation.
          // --variant filters the CPU rows only by leaving out "naive" when it is not named.
          const bool naive = o->variants.empty() ||
                             std::find(o->variants.begin(), o->variants.end(), "naive") != o->variants.end();
          const std::size_t first = rows.size();
          for (const BenchRow& r : bench_cpu(b, o->elem_bytes, o->reps, cpu, naive, o->in_place))
            rows.push_back({spec, fmt::format("{} --n {}", spec, b.n()), r.variant, "cpu", b.n(), o->elem_bytes,
                            r.median_ms, r.min_ms, r.max_ms, r.gbps, r.pct_memcpy, 0, true});
          if (o->in_place) add_bound(rows, first, moved_bytes(b, o->elem_bytes));
        }
      }
      emit(*o, rows);
    };
  });
}

const Registrar reg(70, add_bench);

}  // namespace
}  // namespace bmmc::cli
