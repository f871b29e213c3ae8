// The plan across nodes: any BMMC of an array split over G = 2^g ranks in N = 2^h nodes, moving every element
// over the network at most once and no more bytes per rank than the bound the node bits of A fix — plain
// printable data, built by a pure function (docs/DESIGN.md §9.1b).
//
// Layout: rank r = node·L + local (L = G/N = 2^(g−h) ranks per node), so the global index x of n = m + g bits is
// (x_l, λ, ν): m offset bits, g − h local-rank bits, h node bits on top. The node bits of the destination are
// A_nl'·x' ⊕ A_nn·ν ⊕ c_n, with x' = (x_l, λ) the n − h node-local bits and A_nl' the node rows of A on them.
// The bound (network_bound_bytes): with k' = rank(A_nl'), node ν's 2^(n−h) elements go to the 2^k' nodes of a
// coset of im A_nl', 2^(n−h−k') to each, so exactly 2^(n−h) − [ν in its coset]·2^(n−h−k') of them must leave ν,
// whatever the plan; one rank sends at least the ceiling of 1/L of that. The plan:
//  1. intra-node pre (`intra_pre`, the same DistPlan on every node, over its L ranks): the node-level plan's
//     pre-pass (the DistPlan with the nodes as ranks) followed by R, the bit permutation that puts the chunk
//     bits t at the top of a rank's offset ("rail" layout; the rest above them when k' > m);
//  2. inter-node exchange (`inter_node_sends`): rank (ν, λ) sends its part of chunk t to node d(t), into the
//     slot j of ν there, at the same rank offset bits — rank λ of node d when k' ≤ m (the same rail);
//  3. intra-node post (`intra_post_for_node(d)`): the node-level post-pass of node d after R⁻¹, over its L ranks.
// When k' = 0 (one node, or node rows of A that ignore the node-local bits) every node's data goes whole to one
// node: `intra_pre` is the identity and the node-level pre-pass folds into `intra_post`, one intra-node exchange.
// Each element crosses the network only in step 2 and only when its destination node is not its own, so the
// network carries exactly the elements that must cross; with the chunk bits inside the rank offset every rank
// of a node sends the same share, which meets the per-rank bound. The one-exchange plan of dist_plan.hpp already
// sends each element once, but whole ranks' buffers for maps that permute ranks across nodes (a local-rank bit
// swapped with a node bit: half the ranks of a node send everything, the other half nothing).
// Worked example (G = 4 ranks in N = 2 nodes, m = 3, n = 5, the swap of local-rank bit 3 and node bit 4):
// k' = 1, every node keeps one chunk, so 16 − 8 = 8 elements leave each node: at 4 bytes, 16 bytes per rank
// (the one-exchange plan: ranks 1 and 2 send 32, ranks 0 and 3 none). The node plan's pre-pass on a node's 4 bits
// (x_3 = the local rank) is p = (x_2, x_1, x_0, x_3), its chunk bit t = x_3 on top, and R swaps bits 2 and 3, so
// `intra_pre` is y = (x_2, x_1, x_3, x_0): half of every rank's buffer goes to the other rank of its node. Node ν
// keeps chunk t = ν, so rank (ν, λ) sends elements 4..7 (ν = 0) or 0..3 (ν = 1) to rank (1 − ν, λ), at 4ν in
// its receive buffer, and `intra_post` is the inverse of `intra_pre` on both nodes.
// `bmmc plan SPEC --ranks G --nodes N` prints the plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bmmc/dist/dist_plan.hpp"

namespace bmmc {

struct NodePlan {
  Bmmc bmmc;           ///< the global permutation on n = local_bits + rank_bits bits
  int rank_bits = 0;   ///< g: G = 2^g ranks
  int node_bits = 0;   ///< h ≤ g: N = 2^h nodes, the top h index bits; rank = node·2^(g−h) + local rank
  int local_bits = 0;  ///< m = n − g: elements per rank 2^m
  int elem_bytes = 4;

  DistPlan nodes;        ///< make_dist_plan(bmmc, h, elem_bytes): the nodes as ranks of 2^(n−h) elements
  int rail_bits = 0;     ///< min(k', m): chunk bits inside a rank's offset, at bits [m − rail_bits, m)
  Bmmc rail;             ///< R on n − h bits: node-level position (u, t) ↦ the rail layout
  DistPlan intra_pre;    ///< on the n − h node-local bits over 2^(g−h) ranks: R ∘ nodes.pre (every node); the
                         ///< identity when k' = 0

  int n() const { return bmmc.n(); }
  int node_k() const { return nodes.k; }  ///< k' = rank(A_nl'): every node sends to 2^k' nodes
  std::uint64_t ranks() const { return std::uint64_t{1} << rank_bits; }
  std::uint64_t node_count() const { return std::uint64_t{1} << node_bits; }
  std::uint64_t ranks_per_node() const { return std::uint64_t{1} << (rank_bits - node_bits); }
  std::uint64_t local_elems() const { return std::uint64_t{1} << local_bits; }

  friend bool operator==(const NodePlan&, const NodePlan&) = default;
};

/// The plan of `bmmc` over 2^rank_bits ranks in 2^node_bits nodes. Throws std::invalid_argument when the geometry
/// is refused by check_dist_geometry or node_bits lies outside 0..rank_bits.
NodePlan make_node_plan(const Bmmc& bmmc, int rank_bits, int node_bits, int elem_bytes);

/// log2(nodes), checking that `nodes` is a power of two between 1 and `ranks` (std::invalid_argument naming the
/// count and what was expected).
int dist_node_bits(std::uint64_t nodes, std::uint64_t ranks);

/// The intra-node post-pass of node d: nodes' post_for_rank(d) ∘ R⁻¹ (∘ nodes.pre when k' = 0) on the n − h
/// node-local bits, planned over the node's 2^(g−h) ranks (nodes differ only in the complement).
DistPlan intra_post_for_node(const NodePlan& plan, BitVec node);

/// One message of the inter-node exchange: elements [offset, offset + count) of the sender's intra_pre output go
/// to elements [dest_offset, dest_offset + count) of dest_rank's receive buffer.
struct NodeSend {
  BitVec dest_rank = 0;
  BitVec chunk = 0;  ///< the node-level chunk t the elements belong to
  std::uint64_t offset = 0;
  std::uint64_t dest_offset = 0;
  std::uint64_t count = 0;
  bool crosses = false;  ///< dest_rank is on another node: these bytes go over the network

  friend bool operator==(const NodeSend&, const NodeSend&) = default;
};

/// Rank r's messages of the inter-node exchange, 2^rail_bits of them, in chunk order. Throws
/// std::invalid_argument for a rank outside 0..G−1.
std::vector<NodeSend> inter_node_sends(const NodePlan& plan, BitVec rank);

/// The least bytes rank r's node must send over the network for this map (the node bits of A fix it, whatever
/// the plan), and the per-rank share: the ceiling of 1/L of the node's bytes. Computed from A alone (not from
/// any plan), so a plan can be checked against it.
struct NetworkBound {
  std::uint64_t node_elems = 0;  ///< elements of the node whose destination node is another
  std::uint64_t rank_bytes = 0;  ///< ceil(node_elems / L) · elem_bytes
  friend bool operator==(const NetworkBound&, const NetworkBound&) = default;
};
NetworkBound network_bound(const Bmmc& bmmc, int rank_bits, int node_bits, int elem_bytes, BitVec rank);

/// Bytes over the network, per rank: the plan's, the bound's, and for comparison those of the one-exchange plan of
/// dist_plan.hpp on the same ranks. Closed forms (the plan's equal the crossing messages of inter_node_sends, the
/// one-exchange plan's its send_schedule's), so 2^16 ranks cost 2^16 short steps.
struct NodeTraffic {
  std::vector<std::uint64_t> bytes;            ///< per rank, this plan
  std::vector<std::uint64_t> bound_bytes;      ///< per rank, network_bound
  std::vector<std::uint64_t> one_exchange_bytes;  ///< per rank, make_dist_plan(bmmc, g) sending straight
  std::uint64_t intra_pre_remote_bytes = 0;    ///< per node: bytes between ranks of a node in step 1 (NVLink)
  std::uint64_t nodes_keeping_a_chunk = 0;     ///< nodes that are one of their own destinations
  friend bool operator==(const NodeTraffic&, const NodeTraffic&) = default;
};
NodeTraffic node_traffic(const NodePlan& plan);

/// Human-readable: geometry, k', the rail layout, the three steps, rank 0's sends.
std::string describe(const NodePlan& plan);

}  // namespace bmmc
