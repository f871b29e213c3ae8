// The plan across nodes on simulated ranks and nodes (see node_simulate.hpp).
#include "bmmc/dist/node_simulate.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "bmmc/core/buffers.hpp"
#include "bmmc/dist/simulate.hpp"

namespace bmmc {

namespace {

// The plan must be make_node_plan's for its own fields: a hand-edited one is refused before anything runs.
void require_node_planned(const NodePlan& plan) {
  std::string error;
  try {
    if (!(plan == make_node_plan(plan.bmmc, plan.rank_bits, plan.node_bits, plan.elem_bytes)))
      error = fmt::format("the plan differs from make_node_plan's for its own bmmc, {} rank bits, {} node bits and "
                          "{}-byte elements; a hand-edited plan cannot be run (plan again with make_node_plan)",
                          plan.rank_bits, plan.node_bits, plan.elem_bytes);
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  if (!error.empty()) throw std::invalid_argument(fmt::format("simulate_node_permute: {}", error));
}

// Runs `plan` (one DistPlan over a node's ranks) on node v's slices of `from` into `to`.
DistSimReport run_on_node(const DistPlan& plan, BitVec node, const std::byte* from, std::byte* to,
                          std::size_t slice, const CpuPolicy& policy) {
  std::vector<const void*> ins;
  std::vector<void*> outs;
  const std::size_t at = node * plan.ranks() * slice;
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    ins.push_back(from + at + r * slice);
    outs.push_back(to + at + r * slice);
  }
  DistSimOptions o;
  o.cpu = policy;
  return simulate_dist_permute(plan, ins, outs, o);
}

}  // namespace

NodeSimReport simulate_node_permute(const NodePlan& plan, const void* in, void* out, const CpuPolicy& policy) {
  require_node_planned(plan);
  check_buffers(in, out, plan.n(), plan.elem_bytes);
  const std::size_t e = static_cast<std::size_t>(plan.elem_bytes), slice = plan.local_elems() * e;
  const std::size_t total = plan.ranks() * slice;
  const int l_bits = plan.rank_bits - plan.node_bits;
  std::vector<std::byte> packed(total), received(total);
  NodeSimReport rep;
  rep.network_bytes.assign(plan.ranks(), 0);
  rep.received_bytes.assign(plan.ranks(), 0);

  // 1. Every node's own ranks only.
  for (BitVec v = 0; v < plan.node_count(); ++v)
    rep.intra_node_bytes +=
        run_on_node(plan.intra_pre, v, static_cast<const std::byte*>(in), packed.data(), slice, policy).remote_bytes;

  // 2. The inter-node exchange, message by message; every receive element written exactly once.
  std::vector<std::uint8_t> written(plan.ranks() * plan.local_elems(), 0);
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    for (const NodeSend& m : inter_node_sends(plan, r)) {
      if (m.dest_rank >= plan.ranks() || m.offset + m.count > plan.local_elems() ||
          m.dest_offset + m.count > plan.local_elems())
        throw std::logic_error(fmt::format("simulate_node_permute: rank {} sends outside the buffers (to rank {}, "
                                           "elements {}..{} → {}..)",
                                           r, m.dest_rank, m.offset, m.offset + m.count, m.dest_offset));
      for (std::uint64_t i = 0; i < m.count; ++i)
        if (written[m.dest_rank * plan.local_elems() + m.dest_offset + i]++)
          throw std::logic_error(fmt::format("simulate_node_permute: element {} of rank {} is received twice",
                                             m.dest_offset + i, m.dest_rank));
      std::memcpy(received.data() + m.dest_rank * slice + m.dest_offset * e, packed.data() + r * slice + m.offset * e,
                  m.count * e);
      const std::uint64_t bytes = m.count * e;
      if ((m.dest_rank >> l_bits) != (r >> l_bits)) {
        rep.network_bytes[r] += bytes;
        rep.received_bytes[m.dest_rank] += bytes;
        ++rep.network_messages;
      } else if (m.dest_rank != r) {
        rep.intra_node_bytes += bytes;
      }
    }
  }
  for (std::size_t i = 0; i < written.size(); ++i)
    if (!written[i])
      throw std::logic_error(fmt::format("simulate_node_permute: element {} of rank {} is never received",
                                         i % plan.local_elems(), i / plan.local_elems()));

  // 3. Every node's post-pass over its own ranks.
  for (BitVec v = 0; v < plan.node_count(); ++v)
    rep.intra_node_bytes += run_on_node(intra_post_for_node(plan, v), v, received.data(),
                                        static_cast<std::byte*>(out), slice, policy)
                                .remote_bytes;
  return rep;
}

}  // namespace bmmc
