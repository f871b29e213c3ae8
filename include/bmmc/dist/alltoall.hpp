// The exchange of a distributed plan as ONE all-to-all with counts, per rank: what MPI_Alltoallv, torch's
// `all_to_all_single` with split sizes, or grouped ncclSend/ncclRecv in rank order need (docs/DESIGN.md §9).
//
// Such collectives take the send buffer as one segment per destination in ascending rank order and fill the
// receive buffer with one segment per source in ascending rank order. The plan's pre-pass instead leaves chunk t
// at [t·C, (t+1)·C) (C = 2^(m−k) elements) and its post-pass expects the chunk of sender slot j at [j·C, ...).
// Both reorderings are affine on the k chunk bits, so they fold into the local passes at no cost:
//   - sender r: chunk t goes to d(t) = B·t ⊕ A_hh·r ⊕ c_h, and the destinations of r (a coset of im B) sorted
//     ascending are indexed by their bits at the highest-bit pivots of im B, so t ↦ position is affine (with a
//     rank-dependent constant): pre_r = σ_r ∘ pre, σ_r acting on the top k bits;
//   - receiver d: its senders r_0(d) ⊕ K sorted ascending are indexed the same way, so position ↦ slot j is
//     affine: post_d = post_for_rank(d) ∘ τ_d.
// Both maps are computed from the schedule (schedule.hpp) and checked affine on every chunk. Every rank then
// sends C elements to each of its 2^k destinations and 0 to the others, and receives C from each of its 2^k
// senders. Worked example: a rank↔local swap of local bit 0 and the one rank bit on 2 ranks (k = 1, A_hh = 0):
// every rank sends chunk t to rank t, so σ = identity, and receives from ranks 0 and 1 in slots 0 and 1, so
// τ = identity; counts are (C, C) everywhere. When k = 0 and the rank map is the identity (A_hh = I, c_h = 0),
// no data leaves any rank: `local_only` says so and `local` = post ∘ pre is the one local pass to run.
#pragma once

#include <cstdint>
#include <vector>

#include "bmmc/dist/dist_plan.hpp"

namespace bmmc {

struct AllToAllStep {
  BitVec rank = 0;
  Bmmc pre;    ///< m bits: the plan's pre-pass with chunks in ascending destination order
  Bmmc post;   ///< m bits: reads the received segments in ascending source order
  std::vector<std::uint64_t> send_counts;  ///< elements to each of the G ranks (C or 0)
  std::vector<std::uint64_t> recv_counts;  ///< elements from each of the G ranks (C or 0)
  bool local_only = false;                 ///< no element changes rank (k = 0, rank map the identity)
  Bmmc local;                              ///< post ∘ pre: the whole job when local_only

  friend bool operator==(const AllToAllStep&, const AllToAllStep&) = default;
};

/// Where each rank's segment starts (elements): the exclusive prefix sums of send_counts or recv_counts, G + 1
/// entries (the last is the total), as MPI_Alltoallv's displacements.
std::vector<std::uint64_t> displacements(const std::vector<std::uint64_t>& counts);

/// Rank r's all-to-all step. Throws std::invalid_argument for a rank outside 0..G−1.
AllToAllStep alltoall_step(const DistPlan& plan, BitVec rank);

}  // namespace bmmc
