// The fast CPU backend: executes the same coset-tile plans as the GPU, with a cache-resident tile in the
// role of shared memory, on std::threads. It is the embedded default when there is no GPU.
//
// A TilePass becomes lookup tables once (CpuPermuter); then blocks of the coset tiling go to the threads in
// chunks. Per block, phase 1 copies the input runs x0 ⊕ R·ρ into the tile and phase 2 writes the output runs
// y0 ⊕ U·σ from it — through register transposes (groups of 2^W vectors × 2^W lanes, AVX2 for 4/8-byte and
// AVX-512 VBMI for 1/2-byte elements, chosen at run time) where the CPU has them, else through per-element
// gathers. CpuPolicy maps onto the planner's PlanOptions: runs of 128 bytes and a 16 KiB (bit permutations)
// or 128 KiB (general BMMCs) tile. docs/DESIGN.md §4.2 derives the loops; src/cpu/tuning.hpp holds the sizes
// and budgets with the measurements behind them.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/plan/plan.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {

/// How the CPU runs a permutation.
struct CpuPolicy {
  int threads = 0;           ///< 0 = as many as the array size is worth, up to cpu_cores() (CpuPermuter::threads)
  int tile_bits = -1;        ///< -1 = choose (16 KiB for BPCs, 128 KiB otherwise); else log2 of the tile's elements, 5..20
  /// Register transposes (AVX2 / AVX-512 VBMI, where the CPU has them) or per-element gathers. nullopt: the
  /// faster of the two on this CPU, measured once per process for each element size and kind of
  /// permutation (src/cpu/loop_choice.hpp); true / false force one.
  std::optional<bool> register_transpose;
  /// The direct loop instead of a one-pass plan's tile loop (one pass from input to output through
  /// registers, no tile; src/cpu/direct_blocks.hpp): nullopt = for the CPU's own plan (CpuPermuter made
  /// from a Bmmc, bmmc::permute) on arrays up to 1 MiB (4 MiB for the groups of 64-byte vectors), where it
  /// is faster (docs/DESIGN.md §4.2) — a plan
  /// handed in, or an explicit tile_bits, keeps the tile loop —; true = for any one-pass plan at every
  /// size; false = never. With register_transpose = false it is the table walk. In place
  /// (CpuInPlacePermuter) the same rule picks the direct loop for each involution pass.
  std::optional<bool> direct;
  /// The AVX-512 loops where the CPU has them (the direct groups of 64-byte vectors for 2/4/8-byte elements,
  /// the 1/2-byte VBMI loops); false runs what a CPU with AVX2 only would run (for comparisons and tests).
  bool avx512 = true;

  friend bool operator==(const CpuPolicy&, const CpuPolicy&) = default;
};

/// The planner options the CPU uses for this permutation: one-pass with CPU-sized runs and tile (naive for
/// n < 5). Throws std::invalid_argument for an unsupported elem_bytes or a tile_bits outside 5..20.
PlanOptions cpu_plan_options(const CpuPolicy& policy, const Bmmc& bmmc, int elem_bytes);
/// make_plan(bmmc, elem_bytes, cpu_plan_options(policy, bmmc, elem_bytes)).
Plan make_cpu_plan(const Bmmc& bmmc, int elem_bytes, const CpuPolicy& policy = {});

/// Throws std::invalid_argument for a negative thread count (CpuPolicy::threads: 0 = choose, else a count).
void check_cpu_threads(int threads);

/// The threads a CPU call runs on: `threads` when positive, else one per 512 KiB of the array's
/// 2^n · elem_bytes bytes, from 1 up to cpu_cores(). Throws std::invalid_argument for a negative count.
int resolve_cpu_threads(int threads, int n, int elem_bytes);

/// A plan prepared for the CPU: its loop tables are built (and checked) once; run it any number of times,
/// from any number of threads. Any Plan runs — one-pass, the paper's tiled variants, two-pass, naive, CPU or
/// GPU geometry.
class CpuPermuter {
 public:
  /// Throws std::invalid_argument for a malformed plan (inconsistent tables, passes of another n).
  explicit CpuPermuter(Plan plan, const CpuPolicy& policy = {});
  /// CpuPermuter(make_cpu_plan(bmmc, elem_bytes, policy), policy).
  CpuPermuter(const Bmmc& bmmc, int elem_bytes, const CpuPolicy& policy = {});

  /// out[A·x ⊕ c] = in[x] for all 2^n indices. `in` and `out` are host buffers of 2^n · elem_bytes bytes,
  /// disjoint and aligned to elem_bytes; `temp` (same size, disjoint from both) is needed when the plan has
  /// several passes. Everything is checked before anything is written (std::invalid_argument).
  void operator()(const void* in, void* out, void* temp = nullptr) const;

  const Plan& plan() const noexcept;
  const CpuPolicy& policy() const noexcept { return policy_; }
  /// The threads a call runs on: policy().threads, or for 0 one per 512 KiB of array up to cpu_cores()
  /// (a single thread, with no pool hand-off, below 1 MiB).
  int threads() const noexcept;
  /// The threads a call can keep busy: threads(), or fewer where the array has fewer chunks than that (a
  /// chunk is at least 128 KiB for the direct loops and 16 blocks for the tile loop, so that the pool's
  /// counter line does not travel between cores per block); 1 means the caller runs alone, with no pool
  /// hand-off. The most over the plan's passes. Benchmarks run their memcpy baseline on this many threads.
  int threads_used() const noexcept;
  std::size_t temp_bytes() const noexcept;
  /// The inner loop(s) that run, one name per pass joined by " + ": "direct-blend-avx2" /
  /// "direct-transpose-avx2" / "direct-transpose-avx512" (4/8-byte elements in 64-byte vectors) /
  /// "direct-transpose-avx512vbmi-64" (2-byte elements in 64-byte vectors) / "direct-transpose-avx512vbmi"
  /// (1/2-byte elements in 32-byte vectors) / "direct-walk" (the direct loops: a one-pass CPU plan made from
  /// a Bmmc, on arrays up to 1 MiB — 4 MiB for the 64-byte vectors —, or any one-pass plan
  /// with CpuPolicy::direct = true), "transpose-avx2" (4/8-byte elements),
  /// "transpose-avx512vbmi" (1/2-byte elements) — register transposes —, "gather" (per-element loads;
  /// vpgather for 4/8-byte elements on arrays that are streamed), "scatter" (a naive pass).
  std::string kernel_name() const;

 private:
  // own_plan: the plan was made here from a Bmmc (the direct loop's size rule applies), not handed in.
  CpuPermuter(Plan plan, const CpuPolicy& policy, bool own_plan);
  struct Prepared;
  std::shared_ptr<const Prepared> prepared_;
  CpuPolicy policy_;
};

/// CpuPermuter(bmmc, elem_bytes, policy)(in, out): plans and builds tables on every call. Repeated calls
/// should keep a CpuPermuter, or go through bmmc::permute (bmmc/permute.hpp), which caches them.
void permute_cpu(const Bmmc& bmmc, const void* in, void* out, int elem_bytes, const CpuPolicy& policy = {});

/// CpuPermuter(plan, policy)(in, out, temp).
void execute_plan_cpu(const Plan& plan, const void* in, void* out, void* temp, const CpuPolicy& policy = {});

/// CpuPermuter(plan, policy).kernel_name(), for tests and benchmark reports.
std::string cpu_kernel_name(const Plan& plan, const CpuPolicy& policy = {});

}  // namespace bmmc
