// Runs a plan across nodes (node_plan.hpp) on G simulated ranks in N simulated nodes in one process, counting the
// bytes that cross between nodes exactly: the test of the hierarchical plan that anyone can run without a cluster
// (docs/DESIGN.md §9.1b).
//
// The three steps run as planned: on every node, simulate_dist_permute of `intra_pre` over that node's ranks only
// (so no byte of it can leave the node); the inter-node exchange, message by message from inter_node_sends into
// per-rank receive buffers, where every receive element must be written exactly once (else std::logic_error:
// the schedule would lose or overwrite data) and every byte between ranks of different nodes is counted against
// its sender; on every node d, simulate_dist_permute of intra_post_for_node(d). Example: G = 8 ranks in N = 2
// nodes, `in` and `out` the whole array of 2^n elements, rank r's slice at [r·2^m, (r+1)·2^m) as in §9.
#pragma once

#include <cstdint>
#include <vector>

#include "bmmc/cpu/executor.hpp"
#include "bmmc/dist/node_plan.hpp"

namespace bmmc {

struct NodeSimReport {
  std::vector<std::uint64_t> network_bytes;  ///< per rank: bytes it sent to ranks of other nodes
  std::vector<std::uint64_t> received_bytes; ///< per rank: bytes it received from ranks of other nodes
  std::uint64_t network_messages = 0;        ///< messages between ranks of different nodes
  std::uint64_t intra_node_bytes = 0;        ///< bytes between different ranks of one node, all three steps
};

/// The whole array in one buffer each way (2^n elements, host memory, aligned to elem_bytes, not overlapping):
/// the same result as permute_reference(plan.bmmc, in, out). Buffers are checked before anything is written
/// (std::invalid_argument); a plan that is not make_node_plan's for its own arguments is refused.
NodeSimReport simulate_node_permute(const NodePlan& plan, const void* in, void* out, const CpuPolicy& policy = {});

}  // namespace bmmc
