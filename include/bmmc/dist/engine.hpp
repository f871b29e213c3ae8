// The engines of the distributed plan (docs/DESIGN.md §9), one vocabulary for every group a DistributedPermuter
// (bmmc/distributed.hpp) runs on — the GPUs of one process, the ranks of an NCCL communicator, simulated ranks:
//  - Exchange: the all-to-all form (dist/alltoall.hpp): pre-pass, one exchange of every chunk, post-pass;
//  - Pieces: the same exchange pipelined in pieces (dist/schedule.hpp): pack, move, unpack per piece, so that the
//    links carry one piece while the SMs pack and unpack its neighbours;
//  - Push: the fused engine (dist/push_plan.hpp): every rank stores whole runs straight into its destinations,
//    then, for two-pass push plans, the finishing local pass;
//  - Swap: in place, an involution's pairs swapped across ranks between local passes (dist/rank_swap_plan.hpp);
//  - StagedSwap: in place, chunk by chunk through a staging buffer (dist/staged_swap_plan.hpp).
// Auto asks the library to choose; an engine never reports Auto.
#pragma once

#include <string_view>
#include <vector>

namespace bmmc {

enum class DistEngine { Auto, Exchange, Pieces, Push, Swap, StagedSwap };

/// "auto", "exchange", "pieces", "push", "swap", "staged-swap" ("?" for a value outside the enumeration).
const char* to_string(DistEngine e) noexcept;
/// The inverse of to_string; throws std::invalid_argument listing the names otherwise.
DistEngine parse_dist_engine(std::string_view name);
/// The names parse_dist_engine accepts, in order.
const std::vector<std::string_view>& dist_engine_names() noexcept;
/// Throws std::invalid_argument unless e is one of the DistEngines (a value cast from an integer may not be).
void check_dist_engine(DistEngine e);
/// Whether the engine permutes in place (Swap, StagedSwap).
bool in_place_engine(DistEngine e) noexcept;

}  // namespace bmmc
