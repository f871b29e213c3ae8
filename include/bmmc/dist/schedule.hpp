// The exchange schedule of a distributed plan, per rank: who sends which chunk to whom, in which round, into
// which receive slot; the groups; the pipelined piece schedule; the traffic a plan causes (docs/DESIGN.md §9).
//
// Everything here is a pure function of a DistPlan and a rank. The exchange has 2^k rounds; in round ρ the
// sender in slot j of a group (j = its bits at the pivots of K) sends chunk t = ρ ⊕ j ⊕ M·j, which lands on the
// receiver whose index in the group's receivers is ρ ⊕ j: every round is a perfect matching (each rank sends
// one chunk and receives one), the pattern of a pairwise-exchange all-to-all. Example: for a rank↔local swap of
// one bit (k = 1, A_hh = 0, 2 ranks) round 0 sends chunk r to itself and round 1 swaps the other chunks.
// Groups: senders of one receiver form a coset r_0 ⊕ K, and all of them send to the same 2^k receivers, so the
// G ranks split into 2^(g−k) groups (id = the bits of r_0 at K's non-pivot positions) of 2^k senders and
// 2^k receivers — as a sender a rank may be in another group than as a receiver.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bmmc/dist/dist_plan.hpp"

namespace bmmc {

/// One message of rank r: chunk `chunk` of its pre-pass output (elements [offset, offset + count)) goes to
/// `dest`, which stores it at receive slot `slot` (elements [slot·count, (slot + 1)·count) of its receive buffer).
struct SendStep {
  std::uint64_t round = 0;
  BitVec dest = 0;
  BitVec chunk = 0;
  BitVec slot = 0;
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
  friend bool operator==(const SendStep&, const SendStep&) = default;
};

/// One message rank d receives: from `source`'s chunk `source_chunk`, into slot `slot` (elements
/// [offset, offset + count) of its receive buffer).
struct RecvStep {
  std::uint64_t round = 0;
  BitVec source = 0;
  BitVec source_chunk = 0;
  BitVec slot = 0;
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
  friend bool operator==(const RecvStep&, const RecvStep&) = default;
};

/// Rank r's send, resp. receive, of round ρ < 2^k (the simulator and the engines walk rounds with these).
SendStep send_step(const DistPlan& plan, BitVec rank, std::uint64_t round);
RecvStep recv_step(const DistPlan& plan, BitVec rank, std::uint64_t round);

/// The 2^k sends of rank r, in round order (round i is element i). Throws std::invalid_argument for a rank
/// outside 0..G−1.
std::vector<SendStep> send_schedule(const DistPlan& plan, BitVec rank);
/// The 2^k receives of rank d, in round order.
std::vector<RecvStep> recv_schedule(const DistPlan& plan, BitVec rank);

/// The sends of rank r whose chunk leaves it (destination ≠ r), in round order: what the pipelined engines move
/// between ranks (a chunk a rank keeps is packed straight into its own receive slot).
std::vector<SendStep> leaving_sends(const DistPlan& plan, BitVec rank);

/// The receive slot of sender r at every receiver it sends to: r's bits at the pivots of K.
BitVec sender_slot(const DistPlan& plan, BitVec rank);
/// The group of rank r as a sender, and of rank d as a receiver: 0..2^(g−k)−1; senders of group γ send only
/// to receivers of group γ.
std::uint64_t send_group(const DistPlan& plan, BitVec rank);
std::uint64_t recv_group(const DistPlan& plan, BitVec rank);

/// The pipelined exchange: each chunk splits into 2^q atoms (q = plan.piece_bits), atom a = the offsets u whose top
/// q bits (the piece rows φ·x_l) equal a, i.e. elements [a·2^(c−q), (a+1)·2^(c−q)) of every chunk and slot (c =
/// chunk bits). A piece is a run of consecutive atoms: piece i covers elements [bounds[i], bounds[i+1]) of every
/// chunk and slot, every bound a multiple of the atom. Because φ vanishes on the low input bits and the preimages of
/// the low output bits (dist_plan.hpp), packing a piece through the pre-pass and unpacking it through the post-pass
/// move whole tiles. A pipelined engine packs piece i+1 while piece i is in flight and piece i−1 is unpacked, over a
/// ring of `depth` send and `depth` receive buffers (piece i uses buffer i mod depth): a deeper ring lets the
/// exchange run up to depth − 1 pieces ahead of the unpacks. A receive buffer has 2^k slots of max_piece_elems; a
/// send buffer has a segment for every chunk that leaves the rank — 2^k − 1 when every rank keeps one of its chunks
/// (the kept chunk is packed straight into its own receive slot: piece_layout), else 2^k.
struct PieceSchedule {
  int pieces = 1;
  std::vector<std::uint64_t> bounds;  ///< pieces + 1 offsets within a chunk, 0 first, chunk_elems last
  int depth = 2;
  int atom_bits = 0;                  ///< q: 2^q atoms per chunk
  std::uint64_t atom_elems = 0;       ///< 2^(c − q)
  std::uint64_t max_piece_elems = 0;
  std::uint64_t send_segments = 0;    ///< per send buffer: 2^k − 1 when every rank keeps a chunk, else 2^k
  std::uint64_t scratch_elems = 0;    ///< per rank: depth · (send_segments + 2^k) · max_piece_elems
  friend bool operator==(const PieceSchedule&, const PieceSchedule&) = default;
};

/// The pipeline's two options as every engine and the simulator check them, before anything else and on every rank
/// (also where the map moves nothing between ranks): pieces ≥ 0 (0 = the fewest within 1/8 scratch) and a ring of
/// 2 ≤ depth ≤ 2^kPieceBits buffers each way. Throw std::invalid_argument naming the value ("pieces = -1: give at least one piece
/// (0 = the fewest within 1/8 scratch)").
void check_pieces(int pieces);
void check_depth(int depth);

/// P = min(pieces, 2^q) pieces, piece i = atoms [⌊i·2^q/P⌋, ⌊(i+1)·2^q/P⌋) (odd counts included), over a ring of
/// `depth` buffers each way; pieces = 0 takes pieces_within(plan, depth, local_elems / 8). Throws
/// std::invalid_argument for pieces < 0 or a depth outside 2..2^kPieceBits. Example (q = kPieceBits = 7, k = 1, both ranks keep a
/// chunk, depth 2): 26 pieces are at most 5 atoms = 5·C/128 (C = chunk = half the local array), so the scratch is
/// 2·(1 + 2)·5·C/128 = 15/128 of the local array, within 1/8; 32 pieces (4 atoms) 12/128.
PieceSchedule make_piece_schedule(const DistPlan& plan, int pieces, int depth = 2);

/// The fewest pieces whose PieceSchedule scratch is at most max_scratch_elems per rank; 2^q (every atom a piece)
/// when no count fits, the finest the chunks can be cut.
int pieces_within(const DistPlan& plan, int depth, std::uint64_t max_scratch_elems);

/// Where rank r's pipeline puts piece data in its scratch [send 0 | … | send D−1 | recv 0 | … | recv D−1]
/// (element offsets from the scratch's start, before the piece's own offset within its chunk): chunk t's packed
/// piece in ring buffer b at pack_at[b][t], receive slot j at recv_at[b][j]. The chunk the rank keeps (if any)
/// is packed straight into its own receive slot and never goes through the exchange (kept_chunk; its
/// pack_at is that slot's recv_at); the others fill the send buffer's segments in ascending chunk order.
struct PieceLayout {
  std::vector<std::vector<std::uint64_t>> pack_at;  ///< [buffer][chunk]
  std::vector<std::vector<std::uint64_t>> recv_at;  ///< [buffer][slot]
  bool keeps = false;                               ///< whether the rank is one of its own destinations
  BitVec kept_chunk = 0;                            ///< the chunk it keeps (when keeps)
  friend bool operator==(const PieceLayout&, const PieceLayout&) = default;
};
PieceLayout piece_layout(const DistPlan& plan, const PieceSchedule& ps, BitVec rank);

/// Traffic of the whole exchange (every rank), for the scaling model.
struct DistTraffic {
  std::uint64_t bytes_per_message = 0;     ///< one chunk
  std::uint64_t messages_per_rank = 0;     ///< 2^k, including a chunk a rank keeps
  std::uint64_t max_remote_bytes = 0;      ///< the most bytes one rank sends to other ranks
  std::uint64_t min_remote_bytes = 0;
  std::uint64_t total_remote_bytes = 0;    ///< over all ranks
  std::uint64_t ranks_keeping_a_chunk = 0; ///< ranks that are their own destination for one chunk
  friend bool operator==(const DistTraffic&, const DistTraffic&) = default;
};
DistTraffic dist_traffic(const DistPlan& plan);

/// "round ρ: send chunk t (elements a..b) → rank d slot j" lines, then the receives, for one rank.
std::string describe_schedule(const DistPlan& plan, BitVec rank);

}  // namespace bmmc
