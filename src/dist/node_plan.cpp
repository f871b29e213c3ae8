// The plan across nodes (see node_plan.hpp).
#include "bmmc/dist/node_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bmmc/core/named.hpp"
#include "bmmc/dist/schedule.hpp"

namespace bmmc {

namespace {

// R on n − h bits: node-level position p = (u, t), u the low n − h − k' bits and t the top k', goes to
//   [u's low m − rail | t's low rail | u's other bits | t's other k' − rail bits]   (low to high),
// so the rail chunk bits sit at the top of a rank's m offset bits.
Bmmc rail_layout(int node_local_bits, int k, int m, int rail) {
  const int u_bits = node_local_bits - k;
  std::vector<int> to(node_local_bits);
  int at = 0;
  for (int i = 0; i < m - rail; ++i) to[i] = at++;
  for (int i = 0; i < rail; ++i) to[u_bits + i] = at++;
  for (int i = m - rail; i < u_bits; ++i) to[i] = at++;
  for (int i = rail; i < k; ++i) to[u_bits + i] = at++;
  return bit_permutation(to);
}

// Whether v lies in the span of `vectors` (Gaussian elimination on a copy).
bool in_span(std::vector<BitVec> basis, BitVec v) {
  for (std::size_t i = 0; i < basis.size(); ++i) {
    if (basis[i] == 0) continue;
    const BitVec pivot = basis[i] & -basis[i];  // lowest set bit
    for (std::size_t j = i + 1; j < basis.size(); ++j)
      if (basis[j] & pivot) basis[j] ^= basis[i];
    if (v & pivot) v ^= basis[i];
  }
  return v == 0;
}

int span_rank(std::vector<BitVec> basis) {
  int r = 0;
  for (std::size_t i = 0; i < basis.size(); ++i) {
    if (basis[i] == 0) continue;
    ++r;
    const BitVec pivot = basis[i] & -basis[i];
    for (std::size_t j = i + 1; j < basis.size(); ++j)
      if (basis[j] & pivot) basis[j] ^= basis[i];
  }
  return r;
}

void check_rank(const NodePlan& plan, BitVec rank, const char* who) {
  if (rank >= plan.ranks())
    throw std::invalid_argument(fmt::format("{}: rank {} is outside 0..{}", who, rank, plan.ranks() - 1));
}

}  // namespace

int dist_node_bits(std::uint64_t nodes, std::uint64_t ranks) {
  if (nodes == 0 || (nodes & (nodes - 1)) != 0 || nodes > ranks)
    throw std::invalid_argument(fmt::format(
        "nodes = {}: expected a power of two from 1 to the rank count {} (ranks are spread evenly over nodes)", nodes,
        ranks));
  int h = 0;
  while ((std::uint64_t{1} << h) < nodes) ++h;
  return h;
}

NodePlan make_node_plan(const Bmmc& bmmc, int rank_bits, int node_bits, int elem_bytes) {
  check_dist_geometry(bmmc, rank_bits, elem_bytes);
  if (node_bits < 0 || node_bits > rank_bits)
    throw std::invalid_argument(fmt::format("node bits h = {} must lie in 0..g = 0..{}: every node holds whole ranks",
                                            node_bits, rank_bits));
  NodePlan p;
  p.bmmc = bmmc;
  p.rank_bits = rank_bits;
  p.node_bits = node_bits;
  p.local_bits = bmmc.n() - rank_bits;
  p.elem_bytes = elem_bytes;
  p.nodes = make_dist_plan(bmmc, node_bits, elem_bytes);
  p.rail_bits = std::min(p.nodes.k, p.local_bits);
  p.rail = rail_layout(p.nodes.local_bits, p.nodes.k, p.local_bits, p.rail_bits);
  // k' = 0: each node's data goes whole to one node, so nothing needs gathering first; the node-level pre-pass
  // folds into the post (intra_post_for_node) and the intra-node steps take one exchange, not two.
  p.intra_pre = make_dist_plan(p.nodes.k == 0 ? identity(p.nodes.local_bits) : compose(p.rail, p.nodes.pre),
                               rank_bits - node_bits, elem_bytes);
  return p;
}

DistPlan intra_post_for_node(const NodePlan& plan, BitVec node) {
  if (node >= plan.node_count())
    throw std::invalid_argument(
        fmt::format("intra_post_for_node: node {} is outside 0..{}", node, plan.node_count() - 1));
  const Bmmc post = compose(post_for_rank(plan.nodes, node), plan.rail.inverse());
  return make_dist_plan(plan.nodes.k == 0 ? compose(post, plan.nodes.pre) : post, plan.rank_bits - plan.node_bits,
                        plan.elem_bytes);
}

std::vector<NodeSend> inter_node_sends(const NodePlan& plan, BitVec rank) {
  check_rank(plan, rank, "inter_node_sends");
  const int l_bits = plan.rank_bits - plan.node_bits, k = plan.nodes.k, rail = plan.rail_bits;
  const BitVec node = rank >> l_bits, local = rank & low_mask(l_bits);
  // The top k − rail bits of the local rank carry the rest of the chunk index (only when k' > m).
  const int high_at = l_bits - (k - rail);
  const BitVec t_high = local >> high_at;
  // The node-level schedule (schedule.hpp) in closed form: chunk t of node ν goes to node B·t ⊕ A_hh·ν ⊕ c_h,
  // into ν's slot there.
  const DistPlan& np = plan.nodes;
  const BitVec from_node = xor_of_columns(np.dest_rank_cols, node) ^ np.dest_complement;
  const BitVec slot = sender_slot(np, node);
  const std::uint64_t count = std::uint64_t{1} << (plan.local_bits - rail);
  std::vector<NodeSend> sends;
  for (BitVec t_low = 0; t_low < (BitVec{1} << rail); ++t_low) {
    const BitVec t = t_low | (t_high << rail), dest = xor_of_columns(np.dest_chunk_cols, t) ^ from_node;
    const BitVec j_low = slot & low_mask(rail), j_high = slot >> rail;
    const BitVec dest_local = (local & low_mask(high_at)) | (j_high << high_at);
    NodeSend m;
    m.dest_rank = (dest << l_bits) | dest_local;
    m.chunk = t;
    m.offset = t_low * count;
    m.dest_offset = j_low * count;
    m.count = count;
    m.crosses = dest != node;
    sends.push_back(m);
  }
  return sends;
}

NetworkBound network_bound(const Bmmc& bmmc, int rank_bits, int node_bits, int elem_bytes, BitVec rank) {
  check_dist_geometry(bmmc, rank_bits, elem_bytes);
  if (node_bits < 0 || node_bits > rank_bits)
    throw std::invalid_argument(fmt::format("node bits h = {} must lie in 0..g = 0..{}", node_bits, rank_bits));
  const int n = bmmc.n(), h = node_bits, below = n - h;
  if (rank >> rank_bits) throw std::invalid_argument(fmt::format("network_bound: rank {} is outside 0..{}", rank,
                                                                 (std::uint64_t{1} << rank_bits) - 1));
  const BitVec node = rank >> (rank_bits - h);
  // A_nl' as columns (h bits each): column i = the node bits of A·e_i for the n − h node-local bits i.
  std::vector<BitVec> cols;
  for (int i = 0; i < below; ++i) cols.push_back(bmmc.matrix().col(i) >> below);
  const int k = span_rank(cols);
  // Node ν keeps a chunk iff ν = A_nl'·x' ⊕ (A·(ν << (n−h)) ⊕ c)'s node bits for some x'.
  const BitVec own = (bmmc.apply(node << below) >> below) ^ node;
  const std::uint64_t all = std::uint64_t{1} << below;
  NetworkBound b;
  b.node_elems = in_span(cols, own) ? all - (all >> k) : all;
  const std::uint64_t per_node = std::uint64_t{1} << (rank_bits - h);
  b.rank_bytes = (b.node_elems + per_node - 1) / per_node * static_cast<std::uint64_t>(elem_bytes);
  return b;
}

NodeTraffic node_traffic(const NodePlan& plan) {
  // Closed forms, so that 2^16 ranks cost 2^16 small steps (inter_node_sends walks 2^rail_bits messages per rank,
  // the one-exchange schedule 2^k): node ν keeps chunk t_ν = B⁺·v iff v = ν ⊕ A_hh·ν ⊕ c_h lies in im B (B·t_ν = v),
  // and of its ranks only those whose top local-rank bits are t_ν's high bits hold a part of it.
  NodeTraffic t;
  const std::uint64_t e = static_cast<std::uint64_t>(plan.elem_bytes);
  const DistPlan& np = plan.nodes;
  const int l_bits = plan.rank_bits - plan.node_bits, rail = plan.rail_bits;
  const int high_at = l_bits - (plan.node_k() - rail);
  const std::uint64_t part = std::uint64_t{1} << (plan.local_bits - rail);
  std::vector<std::int64_t> kept(plan.node_count(), -1);
  for (BitVec v = 0; v < plan.node_count(); ++v) {
    const BitVec want = v ^ xor_of_columns(np.dest_rank_cols, v) ^ np.dest_complement;
    const BitVec chunk = xor_of_columns(np.chunk_of_dest_cols, want);
    if (xor_of_columns(np.dest_chunk_cols, chunk) == want) {
      kept[v] = static_cast<std::int64_t>(chunk);
      ++t.nodes_keeping_a_chunk;
    }
  }
  // The one-exchange plan: rank r's 2^k chunks go to B_f·t ⊕ A_hh,f·r ⊕ c_f; those on r's node are the t with
  // top_h(B_f·t) = ν ⊕ top_h(A_hh,f·r ⊕ c_f): 2^(k − rank top_h(B_f)) of them when that lies in the span, else none.
  const DistPlan flat = make_dist_plan(plan.bmmc, plan.rank_bits, plan.elem_bytes);
  std::vector<BitVec> flat_node_cols;
  for (BitVec c : flat.dest_chunk_cols) flat_node_cols.push_back(c >> l_bits);
  const int flat_node_rank = span_rank(flat_node_cols);
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    const BitVec node = r >> l_bits, t_high = (r & low_mask(l_bits)) >> high_at;
    const bool keeps = kept[node] >= 0 && (static_cast<BitVec>(kept[node]) >> rail) == t_high;
    t.bytes.push_back((plan.local_elems() - (keeps ? part : 0)) * e);
    const BitVec target = node ^ ((xor_of_columns(flat.dest_rank_cols, r) ^ flat.dest_complement) >> l_bits);
    const std::uint64_t on_node = in_span(flat_node_cols, target) ? std::uint64_t{1} << (flat.k - flat_node_rank) : 0;
    t.one_exchange_bytes.push_back((flat.destinations_per_rank() - on_node) * flat.chunk_bytes());
    t.bound_bytes.push_back(network_bound(plan.bmmc, plan.rank_bits, plan.node_bits, plan.elem_bytes, r).rank_bytes);
  }
  t.intra_pre_remote_bytes = dist_traffic(plan.intra_pre).total_remote_bytes;
  return t;
}

std::string describe(const NodePlan& p) {
  const NodeTraffic t = node_traffic(p);
  const auto [lo, hi] = std::minmax_element(t.bytes.begin(), t.bytes.end());
  const auto [blo, bhi] = std::minmax_element(t.bound_bytes.begin(), t.bound_bytes.end());
  const auto [olo, ohi] = std::minmax_element(t.one_exchange_bytes.begin(), t.one_exchange_bytes.end());
  std::string s = fmt::format(
      "node plan: n = {}, {} ranks in {} nodes ({} per node), {} elements of {} bytes per rank\n"
      " k' = {}: every node sends to {} nodes; {} nodes keep one of their own chunks\n"
      " network bytes per rank: {}..{} (bound {}..{}; the one-exchange plan {}..{})\n"
      " 1. intra-node pre over {} ranks (k = {}, {} bytes between ranks of a node):\n{}"
      " 2. inter-node exchange: the chunk bits are offset bits [{}, {}) of a rank{}\n"
      " 3. intra-node post of node 0 (k = {}):\n{}",
      p.n(), p.ranks(), p.node_count(), p.ranks_per_node(), p.local_elems(), p.elem_bytes, p.node_k(),
      p.nodes.destinations_per_rank(), t.nodes_keeping_a_chunk, *lo, *hi, *blo, *bhi, *olo, *ohi,
      p.intra_pre.ranks(), p.intra_pre.k, t.intra_pre_remote_bytes, p.intra_pre.bmmc.to_string(),
      p.local_bits - p.rail_bits, p.local_bits,
      p.node_k() > p.rail_bits ? fmt::format(", {} more at the top local-rank bits", p.node_k() - p.rail_bits) : "",
      intra_post_for_node(p, 0).k, intra_post_for_node(p, 0).bmmc.to_string());
  for (const NodeSend& m : inter_node_sends(p, 0))
    s += fmt::format("  rank 0 sends chunk {} (elements {}..{}) to rank {} at {}{}\n", m.chunk, m.offset,
                     m.offset + m.count, m.dest_rank, m.dest_offset, m.crosses ? " over the network" : "");
  return s;
}

}  // namespace bmmc
