#include "bmmc/bench/cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cpu/reference.hpp"

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

void parallel_memcpy(unsigned char* dst, const unsigned char* src, std::size_t bytes, int threads) {
  // Chunks are multiples of 64 bytes so no two threads share a cache line.
  const std::size_t lines = (bytes + 63) / 64;
  auto chunk = [&](int i) { return std::min(bytes, lines * i / threads * 64); };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i)
    pool.emplace_back([=] { std::memcpy(dst + chunk(i), src + chunk(i), chunk(i + 1) - chunk(i)); });
  std::memcpy(dst, src, chunk(1));
  for (auto& t : pool) t.join();
}

struct Timed {
  std::string name;
  std::function<void()> run;
  const unsigned char* expected;
  std::vector<double> ms;
};

}  // namespace

std::vector<BenchRow> bench_cpu(const Bmmc& bmmc, int elem_bytes, int reps, int threads) {
  CpuOptions options;
  options.threads = threads;
  return bench_cpu(bmmc, elem_bytes, reps, options);
}

std::vector<BenchRow> bench_cpu(const Bmmc& bmmc, int elem_bytes, int reps, CpuOptions options, bool naive) {
  if (reps < 1) throw std::invalid_argument(fmt::format("bench_cpu: reps must be at least 1, got {}", reps));
  const std::size_t bytes = array_bytes(bmmc.n(), elem_bytes);
  make_cpu_plan(bmmc, elem_bytes, options);  // refuses a bad tile size before the buffers are allocated
  if (options.threads <= 0) options.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = options.threads;
  Buffer in = huge_buffer(bytes), out = huge_buffer(bytes), ref = huge_buffer(bytes);
  fill_random(in.get(), bytes);
  std::memset(out.get(), 0, bytes);
  std::memset(ref.get(), 0, bytes);
  permute_reference(bmmc, in.get(), ref.get(), elem_bytes);

  unsigned char* o = out.get();
  const unsigned char* i = in.get();
  std::vector<Timed> variants = {
      {"memcpy", [&] { parallel_memcpy(o, i, bytes, threads); }, i, {}},
      {"memcpy-1t", [&] { std::memcpy(o, i, bytes); }, i, {}},
      {"naive", [&] { permute_reference(bmmc, i, o, elem_bytes); }, ref.get(), {}},
      {"one-pass", [&] { permute_cpu(bmmc, i, o, elem_bytes, options); }, ref.get(), {}},
  };
  if (!naive) variants.erase(variants.begin() + 2);
  // Where the register-transpose loop runs, also the gather loop it replaced, for the comparison.
  CpuOptions gather = options;
  gather.register_transpose = false;
  if (bmmc.n() >= 5 && cpu_kernel_name(make_cpu_plan(bmmc, elem_bytes, options), options) !=
                           cpu_kernel_name(make_cpu_plan(bmmc, elem_bytes, gather), gather))
    variants.push_back({"one-pass-gather", [&] { permute_cpu(bmmc, i, o, elem_bytes, gather); }, ref.get(), {}});
  using Clock = std::chrono::steady_clock;
  for (Timed& v : variants) {  // warm-up, verified
    std::memset(o, 0xa5, bytes);
    v.run();
    if (std::memcmp(o, v.expected, bytes) != 0)
      throw std::runtime_error(fmt::format("bench_cpu: variant {} produced a wrong output (n = {}, {}-byte elements)",
                                           v.name, bmmc.n(), elem_bytes));
  }
  for (int r = 0; r < reps; ++r)
    for (Timed& v : variants) {
      const auto t0 = Clock::now();
      v.run();
      v.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
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
