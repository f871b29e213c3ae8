// In-place GPU benchmark and the cuStateVec anchor (see include/bmmc/bench/inplace_gpu.hpp).
#include "bmmc/bench/inplace_gpu.hpp"

#include <library_types.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "bmmc/core/involution.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "fill_words.cuh"
#include "timing.hpp"
#include "vendor_libs.hpp"
#include "bmmc/cuda/inplace.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/plan/gpu_policy.hpp"

namespace bmmc {

namespace {

using bench_detail::time_reps;

using bench_detail::CuStateVec;
using bench_detail::load_custatevec;

}  // namespace

std::optional<std::vector<std::pair<int, int>>> as_bit_swaps(const Bmmc& f) {
  if (!f.is_bp() || !is_involution(f)) return std::nullopt;
  std::vector<std::pair<int, int>> pairs;
  for (int j = 0; j < f.n(); ++j) {
    const int i = __builtin_ctzll(f.matrix().col(j));
    if (i > j) pairs.emplace_back(j, i);
  }
  return pairs;
}

std::optional<int> custatevec_version(std::string* why) {
  const auto c = load_custatevec(why);
  if (!c) return std::nullopt;
  return static_cast<int>(c->version());
}

std::vector<GpuBenchRow> bench_gpu_inplace(const Bmmc& f, int eb, int reps, const GpuOptions& options,
                                           BitVec mask_bits, BitVec mask_value) {
  if (reps < 1) throw std::invalid_argument("reps must be at least 1");
  const auto swaps = as_bit_swaps(f);
  const bool masked = mask_bits || mask_value;
  if (masked && !swaps)
    throw std::invalid_argument("a mask applies to a set of bit swaps (swap_index_bits' vocabulary: an involutive bit "
                                "permutation with no complement); this map is not one");
  // The masked plan, made (and its mask checked) before anything is allocated.
  std::optional<InPlacePlan> masked_plan;
  if (masked)
    masked_plan = make_swap_plan(f.n(), *swaps, eb, gpu_plan_options(options.policy, f.n(), device_caps()), mask_bits,
                                 mask_value);
  const std::size_t bytes = (std::size_t{1} << f.n()) * static_cast<std::size_t>(eb);
  DeviceBuffer orig(bytes), data(bytes);
  // Distinct words (splitmix64 of the word's index), written on the device at memory speed: a host fill of the
  // largest arrays (n = 32 of 8-byte elements) took longer than their whole benchmark.
  orig.fill_bytes(0);  // the tail below a whole word (arrays of fewer than 8 bytes)
  bench_detail::fill_rank_words<<<4096, 256>>>(orig.as<unsigned long long>(), bytes / 8, 0);
  BMMC_CUDA_CHECK(cudaGetLastError());
  auto reset = [&] { BMMC_CUDA_CHECK(cudaMemcpy(data.get(), orig.get(), bytes, cudaMemcpyDeviceToDevice)); };
  std::vector<GpuBenchRow> rows;
  rows.push_back(time_reps("memcpy", reps, bytes, [&] {
    BMMC_CUDA_CHECK(cudaMemcpyAsync(data.get(), orig.get(), bytes, cudaMemcpyDeviceToDevice));
  }));

  // Ours, in place.
  reset();
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  const CudaInPlacePermuter p = masked_plan ? CudaInPlacePermuter(*masked_plan, options) : CudaInPlacePermuter(f, eb, options);
  p(data.get());
  BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  const double first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  bool ok = count_mismatches(f, orig.get(), data.get(), eb, mask_bits, mask_value) == 0;
  GpuBenchRow in_place = time_reps("in-place-" + std::to_string(p.plan().passes.size()) + "-pass", reps, bytes, [&] { p(data.get()); });
  in_place.first_use_ms = first;
  in_place.verified = ok;
  rows.push_back(in_place);

  // Ours, out of place, for reference (one pass into a second buffer).
  if (!masked) {
    const CudaPermuter op(f, eb, options);
    data.fill_bytes(0xA5);
    op(orig.get(), data.get());
    BMMC_CUDA_CHECK(cudaDeviceSynchronize());
    const bool good = count_mismatches(f, orig.get(), data.get(), eb) == 0;
    GpuBenchRow r = time_reps("out-of-place", reps, bytes, [&] { op(orig.get(), data.get()); });
    r.verified = good;
    rows.push_back(r);
  }

  // The anchor: cuStateVec's in-place bit swaps, complex types only.
  const auto lib = swaps && (eb == 8 || eb == 16) ? load_custatevec(nullptr) : std::nullopt;
  if (lib) {
    void* handle = nullptr;
    if (lib->create(&handle) != 0) throw std::runtime_error("custatevecCreate failed");
    std::vector<int2> s;
    for (auto [i, j] : *swaps) s.push_back(int2{i, j});
    std::vector<std::int32_t> mask_values, mask_ordering;  // cuStateVec's maskBitString and maskOrdering
    for (int i = 0; i < f.n(); ++i)
      if ((mask_bits >> i) & 1) {
        mask_ordering.push_back(i);
        mask_values.push_back(static_cast<std::int32_t>((mask_value >> i) & 1));
      }
    const cudaDataType_t type = eb == 8 ? CUDA_C_32F : CUDA_C_64F;
    auto run = [&] {
      if (lib->swap(handle, data.get(), type, static_cast<std::uint32_t>(f.n()), s.data(),
                    static_cast<std::uint32_t>(s.size()), mask_values.empty() ? nullptr : mask_values.data(),
                    mask_ordering.empty() ? nullptr : mask_ordering.data(),
                    static_cast<std::uint32_t>(mask_ordering.size())) != 0)
        throw std::runtime_error("custatevecSwapIndexBits failed");
    };
    reset();
    run();
    BMMC_CUDA_CHECK(cudaDeviceSynchronize());
    const bool good = count_mismatches(f, orig.get(), data.get(), eb, mask_bits, mask_value) == 0;
    GpuBenchRow r = time_reps("custatevec", reps, bytes, run);
    r.verified = good;
    rows.push_back(r);
    lib->destroy(handle);
  }
  for (GpuBenchRow& r : rows) r.pct_memcpy = 100.0 * rows[0].median_ms / r.median_ms;
  return rows;
}

}  // namespace bmmc
