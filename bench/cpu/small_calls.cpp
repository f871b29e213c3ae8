// Cached-call timing for small arrays (BENCHMARKS.md "CPU small arrays", issue 15): per call, the cached
// bmmc::permute (PermuterCache), a kept CpuPermuter (the default: the direct loop on small arrays), a kept
// CpuPermuter with CpuPolicy::direct = false (the tile loop it replaces) and std::memcpy of the same bytes,
// each timed in batches of ≥ 200 µs, median of 31. Not part of the build; compile against a build folder:
//   g++ -std=c++20 -O2 -Iinclude bench/cpu/small_calls.cpp -Lbuild -lbmmc_dispatch -lbmmc_cpu \
//       -lbmmc_combinators -lbmmc_plan -lbmmc_codegen -lbmmc_core -lfmt -lpthread -o small_calls
//   ./small_calls bit-reverse 4
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bmmc/core/spec.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/permute.hpp"

using namespace bmmc;

template <class F>
double per_call_us(F f) {
  using C = std::chrono::steady_clock;
  int batch = 1;
  for (;;) {
    const auto t0 = C::now();
    for (int i = 0; i < batch; ++i) f();
    if (std::chrono::duration<double, std::micro>(C::now() - t0).count() >= 200) break;
    batch *= 2;
  }
  std::vector<double> s;
  for (int r = 0; r < 31; ++r) {
    const auto t0 = C::now();
    for (int i = 0; i < batch; ++i) f();
    s.push_back(std::chrono::duration<double, std::micro>(C::now() - t0).count() / batch);
  }
  std::sort(s.begin(), s.end());
  return s[15];
}

int main(int argc, char** argv) {
  const char* spec = argc > 1 ? argv[1] : "bit-reverse";
  const int eb = argc > 2 ? std::atoi(argv[2]) : 4;
  for (int n : {4, 6, 8, 10, 12, 14, 15, 16}) {
    const Bmmc b = parse_spec(spec, n);
    const std::size_t bytes = std::size_t(eb) << n;
    auto* in = static_cast<unsigned char*>(std::aligned_alloc(64, bytes + 64));
    auto* out = static_cast<unsigned char*>(std::aligned_alloc(64, bytes + 64));
    std::memset(in, 1, bytes), std::memset(out, 0, bytes);
    PermuterOptions o;
    o.backend = Backend::Cpu;
    CpuPolicy tiled_policy;
    tiled_policy.direct = false;
    const CpuPermuter kept(b, eb), tiled(b, eb, tiled_policy);
    const double p = per_call_us([&] { permute(b, in, out, eb, o); });
    const double k = per_call_us([&] { kept(in, out); });
    const double t = per_call_us([&] { tiled(in, out); });
    const double m = per_call_us([&] {
      std::memcpy(out, in, bytes);
      asm volatile("" ::: "memory");
    });
    std::printf("%s n=%2d %dB  permute %.3f  CpuPermuter %.3f  tiled %.3f  memcpy %.3f us  (%s)\n", spec, n, eb, p, k, t,
                m, kept.kernel_name().c_str());
    std::free(in), std::free(out);
  }
}
