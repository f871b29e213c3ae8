// Per-rank exchange schedules of a distributed plan (see schedule.hpp).
#include "bmmc/dist/schedule.hpp"
#include "bmmc/dist/tuning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace bmmc {

namespace {

void check_rank(const DistPlan& plan, BitVec rank) {
  if (rank >= plan.ranks())
    throw std::invalid_argument(fmt::format("rank {} is outside 0..{} ({} ranks)", rank, plan.ranks() - 1, plan.ranks()));
}

BitVec pivot_mask(const std::vector<BitVec>& basis) {
  BitVec m = 0;
  for (BitVec b : basis) m |= b & -b;
  return m;
}

// The bits of v at the set positions of mask, packed from bit 0 up (a software pext).
BitVec gather_bits(BitVec v, BitVec mask) {
  BitVec out = 0;
  int i = 0;
  for (; mask; mask &= mask - 1, ++i)
    if (v & (mask & -mask)) out |= BitVec{1} << i;
  return out;
}

// v reduced modulo span(K): K's pivot bits cleared by adding basis vectors (the basis is reduced echelon).
BitVec reduce_by(const std::vector<BitVec>& basis, BitVec v) {
  for (BitVec b : basis)
    if (v & (b & -b)) v ^= b;
  return v;
}

BitVec sender_rep(const DistPlan& p, BitVec d) {
  return xor_of_columns(p.sender_rep_cols, d) ^ p.sender_rep_complement;
}

// The chunk t that sender r sends to d: B·t = d ⊕ c_h ⊕ A_hh·r.
BitVec chunk_to(const DistPlan& p, BitVec r, BitVec d) {
  return xor_of_columns(p.chunk_of_dest_cols, d ^ p.dest_complement ^ xor_of_columns(p.dest_rank_cols, r));
}

}  // namespace

BitVec sender_slot(const DistPlan& plan, BitVec rank) {
  check_rank(plan, rank);
  // r = r_0 ⊕ Σ j_i κ_i with r_0 free of pivot bits, and κ_i the only basis vector with bit pivot_i: j_i is
  // bit pivot_i of r.
  return gather_bits(rank, pivot_mask(plan.sender_basis));
}

std::uint64_t send_group(const DistPlan& plan, BitVec rank) {
  check_rank(plan, rank);
  return gather_bits(reduce_by(plan.sender_basis, rank), low_mask(plan.rank_bits) & ~pivot_mask(plan.sender_basis));
}

std::uint64_t recv_group(const DistPlan& plan, BitVec rank) {
  check_rank(plan, rank);
  return send_group(plan, sender_rep(plan, rank));
}

SendStep send_step(const DistPlan& p, BitVec r, std::uint64_t rho) {
  check_rank(p, r);
  if (rho >= p.rounds()) throw std::invalid_argument(fmt::format("round {} is outside 0..{}", rho, p.rounds() - 1));
  const BitVec j = sender_slot(p, r);
  SendStep s;
  s.round = rho;
  s.chunk = rho ^ j ^ xor_of_columns(p.round_cols, j);  // t = ρ ⊕ j ⊕ M·j
  s.dest = xor_of_columns(p.dest_chunk_cols, s.chunk) ^ xor_of_columns(p.dest_rank_cols, r) ^ p.dest_complement;
  s.slot = j;
  s.count = p.chunk_elems();
  s.offset = s.chunk * s.count;
  return s;
}

RecvStep recv_step(const DistPlan& p, BitVec d, std::uint64_t rho) {
  check_rank(p, d);
  if (rho >= p.rounds()) throw std::invalid_argument(fmt::format("round {} is outside 0..{}", rho, p.rounds() - 1));
  const BitVec r0 = sender_rep(p, d);
  // The receiver's index in its group: d = B·i ⊕ (A_hh·r_0 ⊕ c_h). Sender slot j sends to index
  // t ⊕ M·j = ρ ⊕ j in round ρ, so in round ρ receiver i hears from slot j = ρ ⊕ i.
  const BitVec i = chunk_to(p, r0, d);
  RecvStep s;
  s.round = rho;
  s.slot = rho ^ i;
  s.source = r0 ^ xor_of_columns(p.sender_basis, s.slot);
  s.source_chunk = chunk_to(p, s.source, d);
  s.count = p.chunk_elems();
  s.offset = s.slot * s.count;
  return s;
}

std::vector<SendStep> send_schedule(const DistPlan& p, BitVec r) {
  std::vector<SendStep> steps;
  for (std::uint64_t rho = 0; rho < p.rounds(); ++rho) steps.push_back(send_step(p, r, rho));
  return steps;
}

std::vector<SendStep> leaving_sends(const DistPlan& p, BitVec r) {
  std::vector<SendStep> steps;
  for (const SendStep& st : send_schedule(p, r))
    if (st.dest != r) steps.push_back(st);
  return steps;
}

std::vector<RecvStep> recv_schedule(const DistPlan& p, BitVec d) {
  std::vector<RecvStep> steps;
  for (std::uint64_t rho = 0; rho < p.rounds(); ++rho) steps.push_back(recv_step(p, d, rho));
  return steps;
}

namespace {

// Whether every rank keeps one of its chunks (is one of its own destinations): then no send buffer needs a
// segment for the kept chunk.
bool every_rank_keeps(const DistPlan& plan) { return dist_traffic(plan).ranks_keeping_a_chunk == plan.ranks(); }

std::uint64_t piece_scratch(const DistPlan& plan, std::uint64_t send_segments, int depth, std::uint64_t max_piece) {
  return static_cast<std::uint64_t>(depth) * (send_segments + plan.destinations_per_rank()) * max_piece;
}

}  // namespace

void check_pieces(int pieces) {
  if (pieces < 0)
    throw std::invalid_argument(
        fmt::format("pieces = {}: give at least one piece (0 = the fewest within 1/8 scratch)", pieces));
}

void check_depth(int depth) {
  if (depth < 2)
    throw std::invalid_argument(fmt::format("depth = {}: the pipeline needs a ring of at least 2 buffers each way", depth));
  // A ring deeper than the most pieces there can be holds nothing more, and each buffer costs scratch.
  if (depth > (1 << kPieceBits))
    throw std::invalid_argument(fmt::format(
        "depth = {}: at most {} (the most pieces an exchange has; a deeper ring only takes scratch)", depth,
        1 << kPieceBits));
}

int pieces_within(const DistPlan& plan, int depth, std::uint64_t max_scratch_elems) {
  check_depth(depth);
  const std::uint64_t atoms = std::uint64_t{1} << plan.piece_bits, atom = plan.chunk_elems() >> plan.piece_bits;
  const std::uint64_t segments = plan.destinations_per_rank() - (every_rank_keeps(plan) ? 1 : 0);
  // The largest piece of P pieces is ⌈2^q / P⌉ atoms; the scratch only shrinks as P grows.
  for (std::uint64_t p = 1; p < atoms; ++p)
    if (piece_scratch(plan, segments, depth, (atoms + p - 1) / p * atom) <= max_scratch_elems) return static_cast<int>(p);
  return static_cast<int>(atoms);
}

PieceSchedule make_piece_schedule(const DistPlan& plan, int pieces, int depth) {
  check_pieces(pieces);
  check_depth(depth);
  if (pieces == 0) pieces = pieces_within(plan, depth, plan.local_elems() / kPieceScratchDivisor);
  PieceSchedule s;
  s.depth = depth;
  s.atom_bits = plan.piece_bits;
  s.atom_elems = plan.chunk_elems() >> s.atom_bits;
  const std::uint64_t atoms = std::uint64_t{1} << s.atom_bits;
  const std::uint64_t p = std::min<std::uint64_t>(static_cast<std::uint64_t>(pieces), atoms);
  s.pieces = static_cast<int>(p);
  for (std::uint64_t i = 0; i <= p; ++i) s.bounds.push_back(i * atoms / p * s.atom_elems);
  for (std::uint64_t i = 0; i < p; ++i) s.max_piece_elems = std::max(s.max_piece_elems, s.bounds[i + 1] - s.bounds[i]);
  s.send_segments = plan.destinations_per_rank() - (every_rank_keeps(plan) ? 1 : 0);
  s.scratch_elems = piece_scratch(plan, s.send_segments, depth, s.max_piece_elems);
  return s;
}

PieceLayout piece_layout(const DistPlan& plan, const PieceSchedule& ps, BitVec rank) {
  PieceLayout l;
  const std::uint64_t seg = ps.max_piece_elems, chunks = plan.destinations_per_rank();
  const std::uint64_t send_buf = ps.send_segments * seg, recv_buf = chunks * seg;
  for (const SendStep& st : send_schedule(plan, rank))
    if (st.dest == rank) {
      l.keeps = true;
      l.kept_chunk = st.chunk;
    }
  const BitVec slot = sender_slot(plan, rank);  // where a rank's chunks land at every receiver, itself included
  for (int b = 0; b < ps.depth; ++b) {
    const std::uint64_t send0 = static_cast<std::uint64_t>(b) * send_buf;
    const std::uint64_t recv0 = static_cast<std::uint64_t>(ps.depth) * send_buf + static_cast<std::uint64_t>(b) * recv_buf;
    auto& pack = l.pack_at.emplace_back(chunks);
    auto& recv = l.recv_at.emplace_back(chunks);
    for (std::uint64_t j = 0; j < chunks; ++j) recv[j] = recv0 + j * seg;
    for (BitVec t = 0; t < chunks; ++t) {
      // Segments skip the kept chunk only where the schedule left it out of every send buffer.
      const bool skip = l.keeps && ps.send_segments < chunks;
      pack[t] = l.keeps && t == l.kept_chunk ? recv[slot] : send0 + (skip && t > l.kept_chunk ? t - 1 : t) * seg;
    }
  }
  return l;
}

DistTraffic dist_traffic(const DistPlan& p) {
  DistTraffic t;
  t.bytes_per_message = p.chunk_bytes();
  t.messages_per_rank = p.destinations_per_rank();
  t.min_remote_bytes = ~std::uint64_t{0};
  // Rank r keeps one chunk iff r is one of its destinations: r ⊕ A_hh·r ⊕ c_h ∈ im B, i.e. B·B⁺ maps it to itself.
  for (BitVec r = 0; r < p.ranks(); ++r) {
    const BitVec v = r ^ xor_of_columns(p.dest_rank_cols, r) ^ p.dest_complement;
    const bool keeps = xor_of_columns(p.dest_chunk_cols, xor_of_columns(p.chunk_of_dest_cols, v)) == v;
    const std::uint64_t remote = (p.destinations_per_rank() - (keeps ? 1 : 0)) * p.chunk_bytes();
    t.ranks_keeping_a_chunk += keeps ? 1 : 0;
    t.max_remote_bytes = std::max(t.max_remote_bytes, remote);
    t.min_remote_bytes = std::min(t.min_remote_bytes, remote);
    t.total_remote_bytes += remote;
  }
  return t;
}

std::string describe_schedule(const DistPlan& p, BitVec rank) {
  std::string s = fmt::format(" rank {}: sender slot {}, send group {}, receive group {}\n", rank, sender_slot(p, rank),
                              send_group(p, rank), recv_group(p, rank));
  for (const SendStep& st : send_schedule(p, rank))
    s += fmt::format("  round {}: send chunk {} (elements {}..{}) -> rank {} slot {}\n", st.round, st.chunk, st.offset,
                     st.offset + st.count - 1, st.dest, st.slot);
  for (const RecvStep& st : recv_schedule(p, rank))
    s += fmt::format("  round {}: recv slot {} (elements {}..{}) <- rank {} chunk {}\n", st.round, st.slot, st.offset,
                     st.offset + st.count - 1, st.source, st.source_chunk);
  return s;
}

}  // namespace bmmc
