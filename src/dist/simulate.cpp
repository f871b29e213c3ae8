// Simulated execution of a distributed plan on G ranks in one process (see simulate.hpp).
#include "bmmc/dist/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "bmmc/core/buffers.hpp"
#include "bmmc/dist/alltoall.hpp"
#include "bmmc/dist/push_plan.hpp"
#include "bmmc/dist/rank_swap_plan.hpp"
#include "bmmc/dist/ring.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/dist/staged_swap_plan.hpp"
#include "sim_comm.hpp"

namespace bmmc {

namespace {

using Bytes = std::vector<std::byte>;

// Push, rank-swap and staged-swap plans handed in must be their planner's plan for their own fields (pure
// functions of them): `replan` plans again (throwing for a bad geometry), and any difference is refused, prefixed
// with `who`, before anything runs.
template <class P, class Replan>
void require_replanned(const P& plan, const char* who, const char* planner, Replan replan) {
  std::string error;
  try {
    if (!(plan == replan()))
      error = fmt::format("the plan differs from {}'s for its own bmmc, {} rank bits and {}-byte elements; a "
                          "hand-edited plan cannot be run (plan again with {})",
                          planner, plan.rank_bits, plan.elem_bytes, planner);
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  if (!error.empty()) throw std::invalid_argument(fmt::format("{}: {}", who, error));
}

// World size, pointers, alignment and overlaps, before anything is written.
// `scratch` (optional, one per rank when given) joins the overlap check; an empty `in` checks `out` alone (in place).
template <class Plan>
void check_rank_buffers(const Plan& plan, const std::vector<const void*>& in, const std::vector<void*>& out,
                        const std::vector<void*>* scratch = nullptr) {
  const bool in_place = in.empty();
  if ((!in_place && in.size() != plan.ranks()) || out.size() != plan.ranks() ||
      (scratch && scratch->size() != plan.ranks()))
    throw std::invalid_argument(fmt::format("the plan is for {} ranks, but {} input, {} output{} buffers were given",
                                            plan.ranks(), in.size(), out.size(),
                                            scratch ? fmt::format(" and {} scratch", scratch->size()) : ""));
  const std::size_t bytes = array_bytes(plan.local_bits, plan.elem_bytes);
  std::vector<std::pair<std::uintptr_t, std::string>> ranges;
  for (std::size_t r = 0; r < out.size(); ++r) {
    try {
      if (in_place)
        check_inplace_buffer(out[r], plan.local_bits, plan.elem_bytes);
      else
        check_buffers(in[r], out[r], plan.local_bits, plan.elem_bytes);
      if (scratch) check_buffers(in[r], (*scratch)[r], plan.local_bits, plan.elem_bytes);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("rank {}: {}", r, e.what()));
    }
    if (!in_place) ranges.emplace_back(reinterpret_cast<std::uintptr_t>(in[r]), fmt::format("input of rank {}", r));
    ranges.emplace_back(reinterpret_cast<std::uintptr_t>(out[r]),
                        fmt::format("{} of rank {}", in_place ? "data" : "output", r));
    if (scratch) ranges.emplace_back(reinterpret_cast<std::uintptr_t>((*scratch)[r]), fmt::format("scratch of rank {}", r));
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].first + bytes)
      throw std::invalid_argument(fmt::format("the {} overlaps the {} ({} bytes each); every rank's buffers must be disjoint",
                                              ranges[i].second, ranges[i - 1].second, bytes));
}

// One pass over every rank's buffers with a CpuPermuter; the post-pass differs between ranks only in its
// complement, so one permuter per distinct complement.
class LocalPasses {
 public:
  LocalPasses(const DistPlan& plan, const CpuPolicy& policy) : plan_(plan), policy_(policy), pre_(plan.pre, plan.elem_bytes, policy) {}

  void pre(const void* in, void* out) const { pre_(in, out); }

  void post(BitVec rank, const void* in, void* out) {
    const Bmmc b = post_for_rank(plan_, rank);
    auto it = post_.find(b.complement());
    if (it == post_.end()) it = post_.emplace(b.complement(), CpuPermuter(b, plan_.elem_bytes, policy_)).first;
    it->second(in, out);
  }

 private:
  const DistPlan& plan_;
  CpuPolicy policy_;
  CpuPermuter pre_;
  std::map<BitVec, CpuPermuter> post_;
};

// One exchange of every chunk (or of one piece of every chunk) in 2^k communicator rounds. Chunk t of sender r
// is at send[r] + (t·stride + first) elements; slot j of receiver d at recv[d] + (j·stride + first).
void exchange(const DistPlan& plan, detail::SimComm& comm, const std::vector<const std::byte*>& send,
              const std::vector<std::byte*>& recv, std::uint64_t stride, std::uint64_t first, std::uint64_t count) {
  const std::size_t eb = static_cast<std::size_t>(plan.elem_bytes);
  for (std::uint64_t rho = 0; rho < plan.rounds(); ++rho) {
    comm.group_start();
    for (BitVec r = 0; r < plan.ranks(); ++r) {
      const SendStep s = send_step(plan, r, rho);
      comm.send(r, s.dest, send[r] + (s.chunk * stride + first) * eb, count);
    }
    for (BitVec d = 0; d < plan.ranks(); ++d) {
      const RecvStep s = recv_step(plan, d, rho);
      comm.recv(d, s.source, recv[d] + (s.slot * stride + first) * eb, count);
    }
    comm.group_end();
  }
}

template <class P>
std::vector<std::byte*> as_bytes(const std::vector<P>& v) {
  std::vector<std::byte*> b;
  for (P p : v) b.push_back(static_cast<std::byte*>(const_cast<void*>(static_cast<const void*>(p))));
  return b;
}

DistSimReport report_of(const detail::SimComm& comm, std::uint64_t scratch_bytes, int pieces) {
  DistSimReport rep;
  rep.rounds = comm.groups();
  rep.messages = comm.messages();
  rep.remote_bytes = comm.remote_bytes();
  rep.scratch_bytes_per_rank = scratch_bytes;
  rep.pieces = pieces;
  return rep;
}

// Pipelined, input preserved: per piece, pack through the pre-pass map, exchange, unpack through the post-pass —
// in the engines' own scratch layout (piece_layout): the chunk a rank keeps goes straight into its receive slot
// and is no message.
DistSimReport run_pieces(const DistPlan& plan, const std::vector<const void*>& in, const std::vector<void*>& out,
                         int pieces, int depth) {
  const PieceSchedule ps = make_piece_schedule(plan, pieces, depth);
  const std::size_t eb = static_cast<std::size_t>(plan.elem_bytes);
  const int cb = plan.chunk_bits();
  const Bmmc pre_inv = plan.pre.inverse();
  std::vector<Bmmc> post;
  std::vector<PieceLayout> at;
  for (BitVec d = 0; d < plan.ranks(); ++d) {
    post.push_back(post_for_rank(plan, d));
    at.push_back(piece_layout(plan, ps, d));
  }
  // Per rank exactly PieceSchedule::scratch_elems; piece_layout says where each chunk and slot sits.
  std::vector<Bytes> scratch(plan.ranks(), Bytes(ps.scratch_elems * eb));
  const auto src = as_bytes(in);
  const auto dst = as_bytes(out);
  detail::SimComm comm(plan.ranks(), plan.elem_bytes);
  const auto piece = [&](int i) { return std::pair{ps.bounds[i], ps.bounds[i + 1] - ps.bounds[i]}; };
  // In the engines' order (ring.hpp), so that a layout whose slots a later piece overwrites too early fails here.
  const auto send = [&](int i, int b) {
    const auto [lo, len] = piece(i);
    for (BitVec r = 0; r < plan.ranks(); ++r)  // pack: the pre-pass restricted to offsets lo..lo+len of each chunk
      for (BitVec t = 0; t < plan.destinations_per_rank(); ++t)
        for (std::uint64_t e = 0; e < len; ++e)
          std::memcpy(scratch[r].data() + (at[r].pack_at[b][t] + e) * eb,
                      src[r] + pre_inv.apply((lo + e) | (t << cb)) * eb, eb);
    for (std::uint64_t rho = 0; rho < plan.rounds(); ++rho) {
      comm.group_start();
      for (BitVec r = 0; r < plan.ranks(); ++r) {
        const SendStep st = send_step(plan, r, rho);
        if (st.dest != r) comm.send(r, st.dest, scratch[r].data() + at[r].pack_at[b][st.chunk] * eb, len);
      }
      for (BitVec d = 0; d < plan.ranks(); ++d) {
        const RecvStep st = recv_step(plan, d, rho);
        if (st.source != d) comm.recv(d, st.source, scratch[d].data() + at[d].recv_at[b][st.slot] * eb, len);
      }
      comm.group_end();
    }
  };
  const auto receive = [&](int i, int b) {
    const auto [lo, len] = piece(i);
    for (BitVec d = 0; d < plan.ranks(); ++d)  // unpack: the post-pass restricted to the same offsets
      for (BitVec j = 0; j < plan.destinations_per_rank(); ++j)
        for (std::uint64_t e = 0; e < len; ++e)
          std::memcpy(dst[d] + post[d].apply((lo + e) | (j << cb)) * eb,
                      scratch[d].data() + (at[d].recv_at[b][j] + e) * eb, eb);
  };
  for_each_ring_step(ps.pieces, ps.depth, [&](const RingStep& s) {
    if (s.kind == RingStep::Kind::Send)
      send(s.step, s.slot);
    else
      receive(s.step, s.slot);
  });
  return report_of(comm, ps.scratch_elems * eb, ps.pieces);
}

}  // namespace

DistSimReport simulate_dist_permute(const DistPlan& plan, const std::vector<const void*>& in,
                                    const std::vector<void*>& out, const DistSimOptions& options) {
  require_planned(plan, "simulate_dist_permute");
  check_rank_buffers(plan, in, out);
  check_pieces(options.pieces);
  check_cpu_threads(options.cpu.threads);  // also where the pieces path runs without a CpuPermuter
  if (options.pieces != 1) return run_pieces(plan, in, out, options.pieces, options.depth);
  // pre-pass in → out (the send buffer), exchange out → scratch (the receive buffer), post-pass scratch → out:
  // the outputs are overwritten only after every chunk left them.
  const std::size_t bytes = plan.local_elems() * static_cast<std::size_t>(plan.elem_bytes);
  LocalPasses passes(plan, options.cpu);
  for (BitVec r = 0; r < plan.ranks(); ++r) passes.pre(in[r], out[r]);
  std::vector<Bytes> scratch(plan.ranks(), Bytes(bytes));
  std::vector<const std::byte*> send;
  std::vector<std::byte*> recv;
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    send.push_back(static_cast<const std::byte*>(out[r]));
    recv.push_back(scratch[r].data());
  }
  detail::SimComm comm(plan.ranks(), plan.elem_bytes);
  exchange(plan, comm, send, recv, plan.chunk_elems(), 0, plan.chunk_elems());
  for (BitVec d = 0; d < plan.ranks(); ++d) passes.post(d, scratch[d].data(), out[d]);
  return report_of(comm, bytes, 1);
}

DistSimReport simulate_dist_permute_destroying(const DistPlan& plan, const std::vector<void*>& in,
                                               const std::vector<void*>& out, const DistSimOptions& options) {
  require_planned(plan, "simulate_dist_permute_destroying");
  check_rank_buffers(plan, std::vector<const void*>(in.begin(), in.end()), out);
  check_cpu_threads(options.cpu.threads);
  if (options.pieces != 1)
    throw std::invalid_argument(fmt::format(
        "pieces = {}: the input-destroyed mode exchanges in one piece (pipelining needs the input-preserved mode)",
        options.pieces));
  // pre-pass in → out, exchange out → in (the input is the receive buffer), post-pass in → out: no scratch.
  LocalPasses passes(plan, options.cpu);
  for (BitVec r = 0; r < plan.ranks(); ++r) passes.pre(in[r], out[r]);
  std::vector<const std::byte*> send;
  for (void* p : out) send.push_back(static_cast<const std::byte*>(p));
  detail::SimComm comm(plan.ranks(), plan.elem_bytes);
  exchange(plan, comm, send, as_bytes(in), plan.chunk_elems(), 0, plan.chunk_elems());
  for (BitVec d = 0; d < plan.ranks(); ++d) passes.post(d, in[d], out[d]);
  return report_of(comm, 0, 1);
}

DistSimReport simulate_dist_alltoall(const DistPlan& plan, const std::vector<const void*>& in,
                                     const std::vector<void*>& out, const DistSimOptions& options) {
  require_planned(plan, "simulate_dist_alltoall");
  check_rank_buffers(plan, in, out);
  check_cpu_threads(options.cpu.threads);
  if (options.pieces != 1)
    throw std::invalid_argument(fmt::format("pieces = {}: the all-to-all form exchanges in one piece", options.pieces));
  const std::size_t eb = static_cast<std::size_t>(plan.elem_bytes);
  std::vector<AllToAllStep> steps;
  for (BitVec r = 0; r < plan.ranks(); ++r) steps.push_back(alltoall_step(plan, r));
  for (BitVec r = 0; r < plan.ranks(); ++r)
    for (BitVec d = 0; d < plan.ranks(); ++d)
      if (steps[r].send_counts[d] != steps[d].recv_counts[r])
        throw std::logic_error(fmt::format("all-to-all: rank {} sends {} elements to rank {}, which expects {}", r,
                                           steps[r].send_counts[d], d, steps[d].recv_counts[r]));
  for (BitVec r = 0; r < plan.ranks(); ++r) CpuPermuter(steps[r].pre, plan.elem_bytes, options.cpu)(in[r], out[r]);
  DistSimReport rep;
  rep.rounds = 1;
  rep.scratch_bytes_per_rank = plan.local_elems() * eb;
  std::vector<Bytes> scratch(plan.ranks(), Bytes(rep.scratch_bytes_per_rank));
  // Displacements: prefix sums of the counts in rank order, as the collective computes them.
  std::vector<std::vector<std::uint64_t>> send_at(plan.ranks());
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    send_at[r].assign(plan.ranks(), 0);
    for (BitVec d = 1; d < plan.ranks(); ++d) send_at[r][d] = send_at[r][d - 1] + steps[r].send_counts[d - 1];
  }
  for (BitVec d = 0; d < plan.ranks(); ++d) {
    std::uint64_t at = 0;
    for (BitVec r = 0; r < plan.ranks(); ++r) {
      const std::uint64_t count = steps[d].recv_counts[r];
      if (!count) continue;
      const std::uint64_t from = send_at[r][d];
      std::memcpy(scratch[d].data() + at * eb, static_cast<const std::byte*>(out[r]) + from * eb, count * eb);
      ++rep.messages;
      if (r != d) rep.remote_bytes += count * eb;
      at += count;
    }
  }
  for (BitVec d = 0; d < plan.ranks(); ++d) CpuPermuter(steps[d].post, plan.elem_bytes, options.cpu)(scratch[d].data(), out[d]);
  return rep;
}

void simulate_dist_push(const PushPlan& plan, const std::vector<const void*>& in, const std::vector<void*>& out,
                        const std::vector<void*>& scratch, const CpuPolicy& policy) {
  require_replanned(plan, "simulate_dist_push", "make_push_plan",
                    [&] { return make_push_plan(plan.bmmc, plan.rank_bits, plan.elem_bytes, plan.line_bits); });
  const bool one_pass = plan.one_pass();
  check_rank_buffers(plan, in, out, one_pass ? nullptr : &scratch);
  check_cpu_threads(policy.threads);  // before the push writes the scratch, not when the finish is made
  const std::size_t eb = static_cast<std::size_t>(plan.elem_bytes);
  const int m = plan.local_bits;
  const BitVec lmask = low_mask(m);
  const auto dst = as_bytes(one_pass ? out : scratch);
  const BitMatrix& f = plan.push.matrix();
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    const auto* src = static_cast<const std::byte*>(in[r]);
    // Gray-code walk over x_l: consecutive x_l differ in one bit, so the target changes by one column of F.
    BitVec target = plan.push.apply(r << m), x = 0;
    for (std::uint64_t i = 0; i < plan.local_elems(); ++i) {
      if (i) {
        const int bit = __builtin_ctzll(i);
        x ^= BitVec{1} << bit;
        target ^= f.col(bit);
      }
      std::memcpy(dst[target >> m] + (target & lmask) * eb, src + x * eb, eb);
    }
  }
  if (one_pass) return;
  const CpuPermuter finish(plan.finish, plan.elem_bytes, policy);
  for (BitVec d = 0; d < plan.ranks(); ++d) finish(scratch[d], out[d]);
}

void simulate_dist_swap(const RankSwapPlan& plan, const std::vector<void*>& data, const CpuPolicy& policy) {
  require_replanned(plan, "simulate_dist_swap", "make_rank_swap_plan",
                    [&] { return make_rank_swap_plan(plan.bmmc, plan.rank_bits, plan.elem_bytes); });
  check_rank_buffers(plan, {}, data);
  check_cpu_threads(policy.threads);
  const std::size_t eb = static_cast<std::size_t>(plan.elem_bytes);
  const int m = plan.local_bits;
  const BitVec lmask = low_mask(m);
  const auto bytes = as_bytes(data);
  auto conjugate = [&] {
    if (!plan.conjugated()) return;
    const CpuPermuter q(plan.conjugate, plan.elem_bytes, policy);
    std::vector<std::byte> tmp(plan.local_elems() * eb);
    for (std::byte* d : bytes) {
      q(d, tmp.data());
      std::memcpy(d, tmp.data(), tmp.size());
    }
  };
  conjugate();
  std::vector<std::byte> a(eb);
  for (BitVec r = 0; r < plan.ranks(); ++r)
    for (BitVec xl = 0; xl < plan.local_elems(); ++xl) {
      const BitVec x = (r << m) | xl, y = plan.direct.apply(x);
      if (!rank_swap_owns(plan.owner_bit, x, y)) continue;  // the pair's owner swaps it; fixed points stay
      std::byte* px = bytes[r] + xl * eb;
      std::byte* py = bytes[y >> m] + (y & lmask) * eb;
      std::memcpy(a.data(), px, eb);
      std::memcpy(px, py, eb);
      std::memcpy(py, a.data(), eb);
    }
  conjugate();
}

void simulate_dist_fused(const DistPlan& plan, const std::vector<const void*>& in, const std::vector<void*>& out) {
  require_planned(plan, "simulate_dist_fused");
  // Line bits 0 ask nothing of F, so the push plan is A itself: one pass.
  simulate_dist_push(make_push_plan(plan.bmmc, plan.rank_bits, plan.elem_bytes, 0), in, out, {});
}

void simulate_dist_staged_swap(const StagedSwapPlan& plan, const std::vector<void*>& data, const CpuPolicy& policy,
                               bool by_copies) {
  // Planned again with its own chunk size as the budget, which gives back its chunk bits if they are the planner's.
  require_replanned(plan, "simulate_dist_staged_swap", "make_staged_swap_plan", [&] {
    if (plan.local_bits != plan.n() - plan.rank_bits || plan.chunk_bits < 1 || plan.chunk_bits > plan.local_bits)
      throw std::invalid_argument(fmt::format(
          "the plan has {} local bits, {} rank bits and {} chunk bits for n = {}; expected local + rank bits = n "
          "and 1 <= chunk bits <= local bits",
          plan.local_bits, plan.rank_bits, plan.chunk_bits, plan.n()));
    const std::optional<StagedSwapPlan> again =
        make_staged_swap_plan(plan.bmmc, plan.rank_bits, plan.elem_bytes, plan.chunk_bytes(), 0);
    if (!again) throw std::invalid_argument("its map fixes no top local bit, so it has no staged plan");
    return *again;
  });
  check_rank_buffers(plan, {}, data);
  check_cpu_threads(policy.threads);  // before the first chunk is permuted
  // One engine's plan of f_c, the same for every chunk.
  std::optional<PushPlan> push;
  std::optional<DistPlan> copies;
  if (by_copies)
    copies = make_dist_plan(plan.chunk_map, plan.rank_bits, plan.elem_bytes);
  else
    push = make_gpu_push_plan(plan.chunk_map, plan.rank_bits, plan.elem_bytes);
  DistSimOptions options;
  options.cpu = policy;
  const std::size_t chunk = plan.chunk_bytes(), g = data.size();
  std::vector<Bytes> source(g, Bytes(chunk)), staging(g, Bytes(chunk));
  for (std::uint64_t c = 0; c < plan.chunks(); ++c) {
    std::vector<const void*> in(g);
    std::vector<void*> out(g), scratch(g);
    for (std::size_t r = 0; r < g; ++r) {
      std::byte* mine = static_cast<std::byte*>(data[r]) + c * chunk;
      // The GPU reads and finishes the same chunk (PeerPermuter::permute_in_place); the simulated push wants
      // disjoint buffers, so it reads a copy: the same bytes, read before any finish writes.
      std::memcpy(source[r].data(), mine, chunk);
      std::fill(staging[r].begin(), staging[r].end(), std::byte{0xA5});
      in[r] = source[r].data();
      out[r] = mine;
      scratch[r] = staging[r].data();
    }
    if (by_copies)
      simulate_dist_alltoall(*copies, in, out, options);
    else
      simulate_dist_push(*push, in, out, scratch, policy);
  }
}

DistSimReport simulate_dist_permute_array(const DistPlan& plan, const void* in, void* out,
                                          const DistSimOptions& options) {
  check_buffers(in, out, plan.n(), plan.elem_bytes);
  const std::size_t slice = plan.local_elems() * static_cast<std::size_t>(plan.elem_bytes);
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    ins.push_back(static_cast<const std::byte*>(in) + r * slice);
    outs.push_back(static_cast<std::byte*>(out) + r * slice);
  }
  return simulate_dist_permute(plan, ins, outs, options);
}

}  // namespace bmmc
