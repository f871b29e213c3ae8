#include "bmmc/bench/cpu.hpp"

#include <optional>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cpu/thread_pool.hpp"
#include "../../src/cpu/direct_blocks.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace bmmc {

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

struct HugeDelete {
  void operator()(unsigned char* p) const { ::operator delete[](p, std::align_val_t{kHugePage}); }
};
using Buffer = std::unique_ptr<unsigned char[], HugeDelete>;

// 2 MiB-aligned so that transparent huge pages can back it whole: random-access permutations are otherwise
// bound by TLB misses, which would measure the page tables rather than the permutation.
Buffer huge_buffer(std::size_t bytes) {
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  Buffer b(static_cast<unsigned char*>(::operator new[](rounded, std::align_val_t{kHugePage})));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(b.get(), rounded, MADV_HUGEPAGE);  // advice only: failure just means small pages
#endif
  return b;
}

// splitmix64 bytes with every byte forced non-zero, so a missing element can never read as correct.
void fill_random(unsigned char* p, std::size_t bytes) {
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (std::size_t i = 0; i < bytes; i += 8) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    z |= 0x0101010101010101ULL;
    std::memcpy(p + i, &z, std::min<std::size_t>(8, bytes - i));
  }
}

// The baseline on the permutation's own terms: the same worker pool and the threads the permutation keeps busy
// (CpuPermuter::threads_used: one thread, no pool, where the permutation runs on the caller alone — before,
// `--threads 2` split a 16 KiB copy that the permutation ran on one thread and timed a worker's wake-up,
// ~100 µs against 0.17). Chunks are multiples of 64 bytes so no two threads share a cache line.
void pool_memcpy(unsigned char* dst, const unsigned char* src, std::size_t bytes, int threads) {
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const std::uint64_t lines = (bytes + 63) / 64;
  ThreadPool::shared().run(lines, (lines - 1) / static_cast<std::uint64_t>(threads) + 1, threads,
                           [&](std::uint64_t begin, std::uint64_t end, int) {
                             const std::size_t b = begin * 64, e = std::min(bytes, end * 64);
                             std::memcpy(dst + b, src + b, e - b);
                           });
}

// Calls per timed sample: enough that one sample lasts ~kSampleUs, so that the clock's resolution and its
// call overhead (tens of ns) do not dominate small arrays; times are reported per call.
constexpr double kSampleUs = 50;
constexpr int kMaxBatch = 1 << 16;

struct Timed {
  std::string name;
  std::function<void()> run;
  const unsigned char* expected;
  std::vector<double> ms;
  int batch = 1;
  bool in_place = false;  // runs on the output buffer, which the warm-up first fills with the input
};

}  // namespace

std::vector<BenchRow> bench_cpu(const Bmmc& bmmc, int elem_bytes, int reps, int threads) {
  CpuPolicy options;
  options.threads = threads;
  return bench_cpu(bmmc, elem_bytes, reps, options);
}

std::vector<BenchRow> bench_cpu(const Bmmc& bmmc, int elem_bytes, int reps, CpuPolicy options, bool naive,
                                bool in_place) {
  if (reps < 1) throw std::invalid_argument(fmt::format("bench_cpu: reps must be at least 1, got {}", reps));
  const std::size_t bytes = array_bytes(bmmc.n(), elem_bytes);
  make_cpu_plan(bmmc, elem_bytes, options);  // refuses a bad tile size before the buffers are allocated
  Buffer in = huge_buffer(bytes), out = huge_buffer(bytes), ref = huge_buffer(bytes);
  fill_random(in.get(), bytes);
  std::memset(out.get(), 0, bytes);
  std::memset(ref.get(), 0, bytes);
  permute_reference(bmmc, in.get(), ref.get(), elem_bytes);

  unsigned char* o = out.get();
  const unsigned char* i = in.get();
  // Prepared once, as a caller that permutes many arrays would (bmmc::permute's cache does the same).
  const CpuPermuter one_pass(bmmc, elem_bytes, options);
  const int threads = one_pass.threads_used();  // what options.threads (or the default) keeps busy on this array
  std::vector<Timed> variants = {
      {"memcpy", [&] { pool_memcpy(o, i, bytes, threads); }, i, {}},
      {"memcpy-1t", [&] { std::memcpy(o, i, bytes); }, i, {}},
      {"naive", [&] { permute_reference(bmmc, i, o, elem_bytes); }, ref.get(), {}},
      {"one-pass", [&] { one_pass(i, o); }, ref.get(), {}},
  };
  if (!naive) variants.erase(variants.begin() + 2);
  // The other phase loop too (gathers where the transposes run, and the reverse where this CPU's measured
  // choice is the gathers), for the comparison.
  const std::string loop = one_pass.kernel_name();
  const bool transposes = loop.find("transpose") != std::string::npos || loop.find("blend") != std::string::npos;
  CpuPolicy other = options;
  other.register_transpose = !transposes;
  const CpuPermuter alternative(bmmc, elem_bytes, other);
  if (bmmc.n() >= 5 && one_pass.kernel_name() != alternative.kernel_name())
    variants.push_back(
        {transposes ? "one-pass-gather" : "one-pass-transpose", [&] { alternative(i, o); }, ref.get(), {}});
  // Where the direct loop runs (small arrays), the tile loop it replaces, for the comparison.
  CpuPolicy tiled = options;
  tiled.direct = false;
  const std::optional<CpuPermuter> tile_loop =
      one_pass.kernel_name().starts_with("direct") ? std::optional<CpuPermuter>(std::in_place, bmmc, elem_bytes, tiled)
                                                   : std::nullopt;
  if (tile_loop) variants.push_back({"one-pass-tiled", [&] { (*tile_loop)(i, o); }, ref.get(), {}});
  // Where an AVX-512 loop runs, the loop a CPU with AVX2 only would run, for the comparison.
  CpuPolicy avx2 = options;
  avx2.avx512 = false;
  const std::optional<CpuPermuter> avx2_loop =
      loop.find("avx512") != std::string::npos ? std::optional<CpuPermuter>(std::in_place, bmmc, elem_bytes, avx2)
                                               : std::nullopt;
  if (avx2_loop && avx2_loop->kernel_name() != loop)
    variants.push_back({"one-pass-avx2", [&] { (*avx2_loop)(i, o); }, ref.get(), {}});
  // The direct group loop's probe: its loads and stores with no permutes, what the access pattern alone
  // costs (single thread; its output is not the permutation, so it is checked only for running).
  std::optional<cpu_detail::DirectTables> probe_tables;
  if (loop.starts_with("direct-transpose") && threads == 1)
    probe_tables = cpu_detail::make_direct_tables(bmmc, elem_bytes, true, options.avx512);
  if (probe_tables && probe_tables->groups)
    variants.push_back({"one-pass-probe",
                        [&] {
                          if (!cpu_detail::run_direct_probe(*probe_tables, i, o))
                            throw std::logic_error("bench_cpu: the direct loop's probe cannot run on this CPU");
                        },
                        nullptr,
                        {}});
  const std::optional<CpuInPlacePermuter> inplace =
      in_place ? std::optional<CpuInPlacePermuter>(std::in_place, bmmc, elem_bytes, options) : std::nullopt;
  if (inplace)
    variants.push_back({fmt::format("in-place-{}-pass", inplace->plan().passes.size()), [&] { (*inplace)(o); },
                        ref.get(), {}, 1, true});
  using Clock = std::chrono::steady_clock;
  for (Timed& v : variants) {  // warm-up, verified; then the batch size from the fastest of a few calls
    if (v.in_place)
      std::memcpy(o, i, bytes);
    else
      std::memset(o, 0xa5, bytes);
    auto t0 = Clock::now();
    v.run();
    double best_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (v.expected == nullptr) {  // a probe: every 32-byte piece of the output written (random input)
      for (std::size_t at = 0; at + 32 <= bytes; at += 32)
        if (std::all_of(o + at, o + at + 32, [](unsigned char c) { return c == 0xa5; }))
          throw std::runtime_error(fmt::format("bench_cpu: {} left output bytes {}..{} unwritten", v.name, at, at + 31));
    } else if (std::memcmp(o, v.expected, bytes) != 0)
      throw std::runtime_error(fmt::format("bench_cpu: variant {} produced a wrong output (n = {}, {}-byte elements)",
                                           v.name, bmmc.n(), elem_bytes));
    for (int k = 0; k < 3 && best_us < kSampleUs; ++k) {  // only small arrays need batches
      t0 = Clock::now();
      v.run();
      best_us = std::min(best_us, std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    v.batch = static_cast<int>(std::clamp(kSampleUs / std::max(best_us, 1e-3), 1.0, double{kMaxBatch}));
  }
  for (int r = 0; r < reps; ++r)
    for (Timed& v : variants) {
      const auto t0 = Clock::now();
      for (int k = 0; k < v.batch; ++k) v.run();
      v.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / v.batch);
    }
  std::vector<BenchRow> rows;
  for (Timed& v : variants) {
    std::sort(v.ms.begin(), v.ms.end());
    const std::size_t k = v.ms.size();
    const double median = k % 2 ? v.ms[k / 2] : (v.ms[k / 2 - 1] + v.ms[k / 2]) / 2;
    rows.push_back({v.name, median, v.ms.front(), v.ms.back(), 2.0 * static_cast<double>(bytes) / (median * 1e6), 0});
  }
  for (BenchRow& row : rows) row.pct_memcpy = 100.0 * rows[0].median_ms / row.median_ms;
  return rows;
}

}  // namespace bmmc
