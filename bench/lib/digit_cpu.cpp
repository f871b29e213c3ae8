// bench_cpu_digits (bmmc/bench/digit.hpp): any-shape maps on the CPU beside a memcpy of the same bytes.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>

#include "bmmc/bench/digit.hpp"
#include "bmmc/cpu/digit_executor.hpp"

namespace bmmc {

namespace {

template <class F>
GpuBenchRow time_host(const char* name, int reps, std::size_t bytes, F run) {
  run();  // warm-up (and page-in)
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  GpuBenchRow r;
  r.variant = name;
  r.median_ms = ms[ms.size() / 2];
  r.min_ms = ms.front();
  r.max_ms = ms.back();
  r.gbps = 2.0 * static_cast<double>(bytes) / (r.median_ms * 1e6);
  return r;
}

}  // namespace

std::string digit_tuning_name(const DigitPolicy& p) {
  std::string s;
  for (auto [key, value] : {std::pair{"tile", p.tile_bytes}, std::pair{"run", p.run_bytes},
                            std::pair{"threads", p.threads_per_block}, std::pair{"min-blocks", p.min_blocks}})
    if (value > 0) s += fmt::format("{}{}={}", s.empty() ? "" : ",", key, value);
  // cover and skew as --digit-tune spells them (the policy's −1 = off is cover=0 / skew=0; cover 1 = cover=1).
  if (p.cover != 0) s += fmt::format("{}cover={}", s.empty() ? "" : ",", p.cover > 0 ? 1 : 0);
  if (p.read_skew < 0) s += fmt::format("{}skew=0", s.empty() ? "" : ",");
  return "digit[" + s + "]";
}

std::vector<GpuBenchRow> bench_cpu_digits(const DigitMap& map, int eb, int reps, const CpuPolicy& policy) {
  if (reps < 1) throw std::invalid_argument("reps must be at least 1");
  const std::size_t bytes = static_cast<std::size_t>(map.size()) * static_cast<std::size_t>(eb);
  std::vector<unsigned char> in(bytes), out(bytes, 0xA5);
  std::mt19937_64 rng(static_cast<std::uint64_t>(bytes));
  for (auto& b : in) b = static_cast<unsigned char>(rng());
  std::vector<GpuBenchRow> rows;
  rows.push_back(time_host("memcpy", reps, bytes, [&] { std::memcpy(out.data(), in.data(), bytes); }));
  const CpuDigitPermuter p(map, eb, policy);
  std::fill(out.begin(), out.end(), 0xA5);
  p(in.data(), out.data());
  // Verified element by element from the map's own definition.
  bool ok = true;
  for (Extent x = 0; x < map.size() && ok; ++x)
    ok = std::memcmp(out.data() + map.apply_linear(x) * eb, in.data() + x * eb, static_cast<std::size_t>(eb)) == 0;
  GpuBenchRow r = time_host("digit", reps, bytes, [&] { p(in.data(), out.data()); });
  r.verified = ok;
  rows.push_back(r);
  for (GpuBenchRow& row : rows) row.pct_memcpy = 100.0 * rows[0].median_ms / row.median_ms;
  return rows;
}

}  // namespace bmmc
