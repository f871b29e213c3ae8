// The distributed plan: any BMMC of an array split over G = 2^g ranks, as one exchange between two local
// passes — plain printable data, built by a pure function (docs/DESIGN.md §9).
//
// Layout: the global index x of N = m + g bits is (x_l, r): the low m bits x_l are the offset on rank r, the
// top g bits. With A split into blocks (l = the m low bits, h = the g top bits), element (x_l, r) goes to
//   rank d = A_hl·x_l ⊕ A_hh·r ⊕ c_h,   offset y_l = A_ll·x_l ⊕ A_lh·r ⊕ c_l.
// k = rank(A_hl) and A_hl = B·T with T (k × m) the reduced echelon row basis of A_hl and B (g × k) injective.
// S = m − k rows such that [S; T] is invertible: the piece rows φ on top (q ≤ kPieceBits functionals that
// vanish on the low input bits and on the preimages of the low output bits, so the pipelined exchange can cut a
// chunk along them without cutting a tile), below them coordinate vectors e_j at the remaining positions. Then:
//  1. pre-pass (local BMMC on m bits, the same for every rank): x_l ↦ p = (u, t), u = S·x_l in the low m − k
//     bits, t = T·x_l in the top k bits. Chunk t is the contiguous range [t·2^(m−k), (t+1)·2^(m−k)).
//  2. exchange: rank r sends chunk t to d = B·t ⊕ A_hh·r ⊕ c_h (2^k distinct ranks since B is injective).
//     The receiver stores it in slot j = the bits of r at the pivots of K = {r : A_hh·r ∈ im B} (dim k):
//     the senders of d are exactly r_0(d) ⊕ K with r_0(d) = H·d ⊕ h0, so j indexes them.
//  3. post-pass (local BMMC on m bits): receive position q = (u, j) ↦ y_l = Π·q ⊕ c_post ⊕ C·d. Π and c_post
//     are `post`; the receiving rank only adds C·d (`post_rank_cols`) to the complement.
// Worked example, N = 3, g = 1 (2 ranks of 4 elements), A swaps index bits 0 and 2 (a rank↔local bit swap):
// A_hl = [1 0], so k = 1, T = (0b01), B = (1), S = (e_1): the pre-pass p = (x_1, x_0) swaps the two local bits,
// putting t = x_0 on top. A_hh = 0, so both ranks send chunk 0 to rank 0 and chunk 1 to rank 1, and K = F2:
// both ranks send to every rank, in slot j = r. Receiver d = x_0 holds q = (x_1, r) and needs
// y_l = (x_2, x_1) = (r, x_1): the post-pass swaps the two bits back, with no rank-dependent complement.
// `bmmc plan SPEC --n N --ranks G` prints this plan; tests/dist/ proves it against the global reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"

namespace bmmc {

/// At most 2^16 = 65536 ranks: beyond any NCCL world deployed, and a rank's schedule (2^k ≤ 2^16 steps) stays
/// small. The algebra has no such limit; the schedules and simulations are per rank.
inline constexpr int kMaxRankBits = 16;

/// The pipelined exchange cuts every chunk into at most 2^kPieceBits "atoms" along the piece rows φ (the top bits
/// of the chunk offset u), chosen so that every tile of the local passes lies in one atom (dist_plan.cpp).
inline constexpr int kPieceBits = 7;

/// Version of the distributed plan's algebra, part of dist_plan_hash: ranks running library versions whose
/// plans could differ must not agree by accident.
inline constexpr std::uint64_t kDistPlanVersion = 3;  // 2: S carries the piece rows φ; 3: 2^7 atoms, kept chunk out of the send buffers

struct DistPlan {
  Bmmc bmmc;           ///< the global permutation (A, c) on N = local_bits + rank_bits bits
  int rank_bits = 0;   ///< g: G = 2^g ranks, rank = the top g index bits
  int local_bits = 0;  ///< m = N − g: each rank holds 2^m elements
  int elem_bytes = 4;
  int k = 0;           ///< rank(A_hl): every rank sends 2^(m−k) elements to each of 2^k ranks

  // Decomposition A_hl = B·T, [S; T] invertible.
  std::vector<BitVec> chunk_rows;       ///< T: k rows of m bits (reduced echelon, pivots = lowest set bits)
  std::vector<BitVec> dest_chunk_cols;  ///< B: k columns of g bits, B·T = A_hl
  std::vector<BitVec> spread_rows;      ///< S: m − k rows of m bits: coordinate vectors e_j, then the piece rows φ
  int piece_bits = 0;                   ///< q ≤ kPieceBits: the top q rows of S are φ (pieces of the pipelined
                                        ///< exchange: chunk offset u's top q bits, schedule.hpp)
  Bmmc pre;                             ///< m bits: rows S then T, c = 0: p = S·x_l | (T·x_l) << (m − k)

  // Send schedule: rank r sends chunk t to  dest_chunk_cols·t ⊕ dest_rank_cols·r ⊕ dest_complement.
  std::vector<BitVec> dest_rank_cols;   ///< A_hh: g columns of g bits
  BitVec dest_complement = 0;           ///< c_h
  std::vector<BitVec> chunk_of_dest_cols;  ///< B⁺: g columns of k bits, a left inverse of B (B⁺·B = I_k)

  // Receive schedule: the senders of rank d are  sender_rep_cols·d ⊕ sender_rep_complement ⊕ span(sender_basis).
  std::vector<BitVec> sender_basis;      ///< K: k vectors of g bits, reduced echelon basis of {r : A_hh·r ∈ im B}
  std::vector<BitVec> sender_rep_cols;   ///< H: g columns of g bits; r_0(d) = H·d ⊕ h0 has its K-pivot bits clear
  BitVec sender_rep_complement = 0;      ///< h0
  std::vector<BitVec> round_cols;        ///< M = B⁺·A_hh·K: k columns of k bits; sender slot j sends chunk t in
                                         ///< round t ⊕ j ⊕ M·j (each round is a perfect matching, schedule.hpp)

  // Post-pass: receive position q = u | j << (m − k)  ↦  y_l = post.apply(q) ⊕ post_rank_cols·d on rank d.
  Bmmc post;                             ///< m bits, the post-pass of rank d = 0
  std::vector<BitVec> post_rank_cols;    ///< C: g columns of m bits

  // Fused engine: element x_l of rank r goes to global index A·(x_l | r << m) ⊕ c (destination rank = its top g
  // bits); push_plan.hpp turns that into a kernel's plan.
  int fused_line_bits = 0;  ///< the largest s ≤ m with A⁻¹·span(e_0..e_(s−1)) local: every aligned output run of
                            ///< 2^s elements comes from ONE source rank, so a pushing kernel writes whole runs

  int n() const { return bmmc.n(); }
  std::uint64_t ranks() const { return std::uint64_t{1} << rank_bits; }
  std::uint64_t local_elems() const { return std::uint64_t{1} << local_bits; }
  int chunk_bits() const { return local_bits - k; }
  std::uint64_t chunk_elems() const { return std::uint64_t{1} << chunk_bits(); }
  std::uint64_t chunk_bytes() const { return chunk_elems() * static_cast<std::uint64_t>(elem_bytes); }
  std::uint64_t destinations_per_rank() const { return std::uint64_t{1} << k; }
  std::uint64_t groups() const { return std::uint64_t{1} << (rank_bits - k); }
  /// Rounds of the exchange: 2^k, each a perfect matching of senders and receivers within every group.
  std::uint64_t rounds() const { return destinations_per_rank(); }

  friend bool operator==(const DistPlan&, const DistPlan&) = default;
};

/// The plan of `bmmc` over 2^rank_bits ranks. Throws std::invalid_argument when rank_bits is outside
/// 0..min(n, kMaxRankBits), n is above kMaxPermuteBits, or elem_bytes is not 1, 2, 4, 8 or 16.
DistPlan make_dist_plan(const Bmmc& bmmc, int rank_bits, int elem_bytes);

/// A DistPlan is a pure function of (bmmc, rank_bits, elem_bytes), so one handed in is checked by planning
/// again: throws std::invalid_argument (prefixed with `who`, naming the first field that differs) unless `plan`
/// is make_dist_plan's plan for its own bmmc, rank_bits and elem_bytes. The simulations call it first.
void require_planned(const DistPlan& plan, const char* who);

/// Throws std::invalid_argument unless elem_bytes is 1, 2, 4, 8 or 16, n ≤ kMaxPermuteBits and rank_bits lies in
/// 0..min(n, kMaxRankBits): what every distributed planner checks first.
void check_dist_geometry(const Bmmc& bmmc, int rank_bits, int elem_bytes);

/// log2(ranks), checking that `ranks` is a power of two, at least 1, at most 2^n and at most 2^kMaxRankBits
/// (std::invalid_argument naming the count and what was expected).
int dist_rank_bits(std::uint64_t ranks, int n);

/// The post-pass of rank d: (Π, c_post ⊕ C·d).
Bmmc post_for_rank(const DistPlan& plan, BitVec rank);

/// Stable 64-bit FNV-1a hash of what defines the plan (kDistPlanVersion, N, g, elem_bytes, the rows of A, c):
/// equal on every process and machine for equal plans, so ranks can compare it to detect disagreement.
std::uint64_t dist_plan_hash(const DistPlan& plan);

/// Human-readable: geometry, k, groups, the decomposition, pre/post BMMCs, the schedule formulas.
std::string describe(const DistPlan& plan);

}  // namespace bmmc
