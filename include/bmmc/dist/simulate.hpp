// Runs a distributed plan on G simulated ranks in one process: the schedule the GPUs will run, on the CPU, as a
// debugging aid and as the test of the plan that anyone can run without GPUs (docs/DESIGN.md §9).
//
// The exchange path does exactly what the plan says: the local pre-pass on every rank (a CpuPermuter of the
// plan's `pre`), then the exchange through an in-process communicator that matches grouped sends and receives
// round by round like ncclSend/ncclRecv (a send without its matching receive, a size mismatch or a rank that
// sends or receives twice in one round is an error: the schedule would deadlock or race on GPUs), then the
// per-rank post-pass (a CpuPermuter of post_for_rank). Modes, as the NCCL engine will have them:
//  - input preserved, pieces = 1: pre-pass in → out, exchange out → scratch (2^m elements), post-pass scratch → out;
//  - input preserved, pieces P > 1 (pipelined): per piece, pack the piece of every chunk from the input through
//    the pre-pass map into a send buffer (the kept chunk straight into its receive slot), exchange it, unpack
//    through the post-pass map; the scratch and its layout are the engines' (PieceSchedule, PieceLayout), at most
//    1/8 of the local array for P ≥ 32 when chunks have at least 128 elements; P = 0 takes the fewest pieces
//    within 1/8;
//  - input destroyed: pre-pass in → out, exchange out → in, post-pass in → out; no scratch.
// The fused path writes every element straight to its destination rank's output (A·(x_l | r << m) ⊕ c), the
// one-pass case of the push path (push_plan.hpp). Example: with G = 4 ranks of 2^m elements, in[r] and out[r] point at rank r's slices.
#pragma once

#include <cstdint>
#include <vector>

#include "bmmc/cpu/executor.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/push_plan.hpp"
#include "bmmc/dist/rank_swap_plan.hpp"
#include "bmmc/dist/staged_swap_plan.hpp"

namespace bmmc {

struct DistSimOptions {
  int pieces = 1;   ///< pipelined exchange in this many pieces (input-preserved mode only; 0 = the fewest within 1/8)
  int depth = 2;    ///< the pipeline's ring of send and receive buffers (PieceSchedule::depth)
  CpuPolicy cpu;    ///< how the local passes run

  friend bool operator==(const DistSimOptions&, const DistSimOptions&) = default;
};

/// What a simulated run did, for tests and the scaling model.
struct DistSimReport {
  std::uint64_t rounds = 0;              ///< communicator rounds (2^k per piece)
  std::uint64_t messages = 0;            ///< matched send/receive pairs, a rank's message to itself included
  std::uint64_t remote_bytes = 0;        ///< bytes of messages between different ranks
  std::uint64_t scratch_bytes_per_rank = 0;
  int pieces = 1;                        ///< pieces run (the PieceSchedule's)
};

/// Exchange path, input preserved. in[r] / out[r]: rank r's 2^m elements (host memory, aligned to elem_bytes,
/// no two buffers overlapping). Everything is checked before anything is written (std::invalid_argument).
DistSimReport simulate_dist_permute(const DistPlan& plan, const std::vector<const void*>& in_per_rank,
                                    const std::vector<void*>& out_per_rank, const DistSimOptions& options = {});

/// Exchange path, input destroyed (the inputs are the receive buffers): no scratch; options.pieces must be 1.
DistSimReport simulate_dist_permute_destroying(const DistPlan& plan, const std::vector<void*>& in_per_rank,
                                               const std::vector<void*>& out_per_rank,
                                               const DistSimOptions& options = {});

/// Exchange path, input preserved, as ONE all-to-all with counts per rank (alltoall.hpp: the form of
/// torch's all_to_all_single and MPI_Alltoallv): rank r runs its pre-pass in → out, the simulated all-to-all moves
/// each sender's segments (ascending destination) into each receiver's scratch (ascending source) after checking
/// that every pair's send and receive counts agree, then rank d runs its post-pass scratch → out.
/// options.pieces must be 1.
DistSimReport simulate_dist_alltoall(const DistPlan& plan, const std::vector<const void*>& in_per_rank,
                                     const std::vector<void*>& out_per_rank, const DistSimOptions& options = {});

/// Fused path: rank r writes each element x_l straight to out[d][y_l] for (d, y_l) = A·(x_l | r << m) ⊕ c split at bit m.
void simulate_dist_fused(const DistPlan& plan, const std::vector<const void*>& in_per_rank,
                         const std::vector<void*>& out_per_rank);

/// Push path (push_plan.hpp): rank r writes each element x_l straight to F·(x_l | r << m) ⊕ c_F — into the
/// destination's output when plan.one_pass(), else into its scratch, after which every rank d applies Q
/// (scratch[d] → out[d]). `scratch` may be empty for one-pass plans; buffers are checked before any write.
void simulate_dist_push(const PushPlan& plan, const std::vector<const void*>& in_per_rank,
                        const std::vector<void*>& out_per_rank, const std::vector<void*>& scratch_per_rank,
                        const CpuPolicy& policy = {});

/// In place across ranks (rank_swap_plan.hpp): Q on every rank, then the pairs of f' swap (the rank of the
/// pair's owner, rank_swap_owns, moves both), then Q again. data[r]: rank r's 2^m elements, no two buffers
/// overlapping; checked first.
void simulate_dist_swap(const RankSwapPlan& plan, const std::vector<void*>& data_per_rank, const CpuPolicy& policy = {});

/// In place in chunks (staged_swap_plan.hpp), the schedule PeerSwapPermuter runs: for each chunk c, every rank's
/// chunk c goes through f_c's engine and back into chunk c — with by_copies false the push plan of f_c
/// (make_gpu_push_plan) into a staging buffer per rank, poisoned before each use so that an element the schedule
/// forgets shows; with by_copies true the copy engine's schedule (pre-pass, the segments between ranks, post-pass:
/// simulate_dist_alltoall of f_c's DistPlan). data[r]: rank r's 2^m elements, no two buffers overlapping; checked
/// first.
void simulate_dist_staged_swap(const StagedSwapPlan& plan, const std::vector<void*>& data_per_rank,
                               const CpuPolicy& policy = {}, bool by_copies = false);

/// The whole array in one buffer (2^N elements): rank r's slice is elements [r·2^m, (r+1)·2^m), the layout of
/// §9, so this is simulate_dist_permute on the slices. Same result as permute_reference(plan.bmmc, in, out).
DistSimReport simulate_dist_permute_array(const DistPlan& plan, const void* in, void* out,
                                          const DistSimOptions& options = {});

}  // namespace bmmc
