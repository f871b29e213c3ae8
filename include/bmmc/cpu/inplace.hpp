// The CPU executor of in-place plans (plan/inplace_plan.hpp): the same passes the GPU runs, on a host array,
// through the loops of the out-of-place executor (executor.hpp), each on pairs.
//
// Where the out-of-place executor would run a direct loop for the pass's map and array (arrays that fit in
// cache; CpuPolicy::direct), the direct loop runs on pairs of its units: a unit's output set is another unit's
// input set (docs/DESIGN.md §8), and one unit of each pair loads both and stores both. Otherwise an involution
// pass walks the block indices in parallel (the shared thread pool). A block that owns a pair
// of cosets {C, f(C)} (partner(b) > b) copies the partner's coset, whole runs, into a thread-local staged
// tile; runs the tile loop on its own block from the array into the array (it reads C into the tile before
// it writes f(C), whose old contents are staged); then runs the tile loop on the staged copy into C. A coset
// that f maps onto itself is one block of the tile loop in place; a coset f fixes pointwise is skipped. So
// each element is read from the array once and written once, as out of place, and a block writes only the
// elements it has read — the GPU block's read-both-then-write-both, which the plan checker proves race-free.
// The next pair's cosets are prefetched into L2 while a pair runs. A naive pass swaps x and f(x) for every
// x < f(x), whole runs at a time. Everything is validated before the first write; no pass can fail once started.
#pragma once

#include <memory>
#include <string>

#include "bmmc/cpu/executor.hpp"
#include "bmmc/plan/inplace_plan.hpp"

namespace bmmc {

/// Planner options for in-place plans on the CPU: the runs (128 bytes) and tile (16 KiB) of the out-of-place
/// CPU plan of a bit permutation (cpu_plan_options), for every map, unless policy.tile_bits says otherwise.
/// Throws std::invalid_argument for a bad element size or tile_bits.
PlanOptions cpu_inplace_plan_options(const CpuPolicy& policy, int elem_bytes = 4);

class CpuInPlacePermuter {
 public:
  /// Throws std::invalid_argument for a malformed plan (a pass that is not an involution, passes of another n).
  /// A plan handed in runs as given (the tile loop on pairs of cosets) unless policy.direct is true.
  explicit CpuInPlacePermuter(InPlacePlan plan, const CpuPolicy& policy = {});
  /// make_inplace_plan(bmmc, elem_bytes, cpu_inplace_plan_options(policy)); each involution pass runs the direct
  /// loop on pairs where the out-of-place executor would run a direct loop (CpuPolicy::direct).
  CpuInPlacePermuter(const Bmmc& bmmc, int elem_bytes, const CpuPolicy& policy = {});

  /// Permutes the 2^n elements at `data` (host memory, aligned to elem_bytes) in place.
  void operator()(void* data) const;

  const InPlacePlan& plan() const noexcept;
  /// The loop of each pass, joined by " + ": "pairs-" and the direct loop's name (CpuPermuter::kernel_name,
  /// e.g. "pairs-direct-transpose-avx512", "pairs-direct-walk": the direct loop on pairs of units),
  /// "pairs-transpose-avx2" / "pairs-transpose-avx512vbmi" / "pairs-gather" (the tile loop on pairs of cosets:
  /// register transposes or gathers), "swap" (a naive pass, whole runs at a time). Empty for the identity.
  std::string kernel_name() const;
  /// The threads a call runs on: policy.threads, or one per 512 KiB of array up to cpu_cores().
  int threads() const noexcept;

 private:
  CpuInPlacePermuter(InPlacePlan plan, const CpuPolicy& policy, bool own_plan);
  struct Prepared;
  std::shared_ptr<const Prepared> prepared_;
  CpuPolicy policy_;
};

}  // namespace bmmc
