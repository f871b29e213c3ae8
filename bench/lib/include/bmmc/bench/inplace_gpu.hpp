// GPU benchmarking of in-place permutations: the in-place plan, cudaMemcpy D2D of the same bytes and, for bit
// swaps, NVIDIA cuStateVec's custatevecSwapIndexBits (the anchor of docs/DESIGN.md §8), all in one run.
//
// cuStateVec is loaded at run time (dlopen of libcustatevec.so.1, found through LD_LIBRARY_PATH or
// BMMC_CUSTATEVEC_LIB), so nothing links it and its row is simply absent where the library is not installed.
// Every timed configuration is verified: the array is reset to the same random data, permuted once, and
// compared on the device with out[A·x ⊕ c] == in[x] (count_mismatches).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bmmc/bench/gpu.hpp"
#include "bmmc/plan/inplace_plan.hpp"

namespace bmmc {

/// The disjoint swaps that make up an involutive bit permutation (A a permutation matrix, A² = I, c = 0), in
/// cuStateVec's terms; nothing for any other map.
std::optional<std::vector<std::pair<int, int>>> as_bit_swaps(const Bmmc& f);

/// cuStateVec's version where the library loads, else nothing (and `why` says what failed).
std::optional<int> custatevec_version(std::string* why = nullptr);

/// Rows: "memcpy", "in-place" (the plan, `passes` in the variant name), "out-of-place" (the one-pass plan into
/// a second buffer, for reference) and, when the map is a set of bit swaps and cuStateVec loads, "custatevec"
/// (elem_bytes must be 8 or 16: complex64 / complex128). pct_memcpy is memcpy time / row time × 100.
/// With a mask (swap_index_bits' controls: only indices whose bits under mask_bits equal mask_value move), f must
/// be a set of bit swaps (std::invalid_argument otherwise, or when make_swap_plan refuses the mask, before any
/// allocation); the in-place row runs make_swap_plan's plan, cuStateVec gets the same mask, and there is no
/// out-of-place row (a masked swap is no BMMC).
std::vector<GpuBenchRow> bench_gpu_inplace(const Bmmc& f, int elem_bytes, int reps, const GpuOptions& options = {},
                                           BitVec mask_bits = 0, BitVec mask_value = 0);

}  // namespace bmmc
