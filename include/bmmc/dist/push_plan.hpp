// The push plan: a BMMC of an array split over G = 2^g ranks as ONE pass in which every rank reads its own
// input and writes whole runs straight into the destination ranks' memory (docs/DESIGN.md §9.5) — plain data
// from a pure function, checked on the CPU (simulate.hpp) before any GPU runs it.
//
// A one-pass tile (plan.hpp) reads a coset x0 ⊕ V of the input and writes A·(x0 ⊕ V) ⊕ c; V contains the
// low s input bits and A⁻¹ of the low s output bits, so both sides move whole runs of 2^s elements. A rank
// can run such tiles over its own input only if V lies in the local bits, i.e. if A⁻¹·span(e_0 … e_(s−1))
// is local: every output run then comes from one source rank. Swapping a rank bit with local bit 0 — the
// case cuStateVec finds hardest — breaks that. The plan factors the permutation instead as
//     A·x ⊕ c = diag(Q, I)·(F·x ⊕ c_F),   Q an m × m matrix applied by each destination to its own data,
// choosing Q's first L columns in U = local ∩ A(local) (dim U ≥ m − g). Then F⁻¹·e_j = A⁻¹·Q·e_j is local
// for j < L: the push pass F writes whole runs of 2^L elements and crosses the links once; Q is a local
// pass on each destination (scratch → out). When A already keeps the low L output bits on one rank, Q = I
// and the push pass alone is the permutation (no scratch).
// Worked example (m = 8, g = 1, A swaps rank bit 8 with local bit 0, L = 6): U = span(e_1 … e_7), Q takes
// e_1 … e_5 at their own columns, e_6 at column 0 and e_0 at column 6 — Q swaps local bits 0 and 6 — and
// F = Q⁻¹·A sends local bit 0 to the rank bit, the rank bit to local bit 6 and local bit 6 to local bit 0: output
// runs of 64 elements (bits 0 … 5, from local bits 6, 1 … 5) cross whole, then each rank swaps bits 0 and 6.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc {

struct PushPlan {
  Bmmc bmmc;           ///< the global permutation (A, c) on N = local_bits + rank_bits bits
  int rank_bits = 0;   ///< g: G = 2^g ranks, rank = the top g index bits
  int local_bits = 0;  ///< m
  int elem_bytes = 4;
  int line_bits = 0;   ///< L: F⁻¹·span(e_0 … e_(L−1)) is local, so runs of 2^L output elements have one source rank
  Bmmc push;           ///< F = diag(Q, I)⁻¹·A, c_F = diag(Q, I)⁻¹·c: element x of the global array goes to F·x ⊕ c_F
  Bmmc finish;         ///< Q on m bits, linear: each rank d moves its pushed element at q to Q·q

  int n() const { return bmmc.n(); }
  std::uint64_t ranks() const { return std::uint64_t{1} << rank_bits; }
  std::uint64_t local_elems() const { return std::uint64_t{1} << local_bits; }
  /// Q = I: the push pass writes the final positions; no scratch, no second pass.
  bool one_pass() const { return finish.is_identity(); }

  friend bool operator==(const PushPlan&, const PushPlan&) = default;
};

/// dim(local ∩ A(local)): the longest runs any push plan of `bmmc` over 2^rank_bits ranks can write.
int max_push_line_bits(const Bmmc& bmmc, int rank_bits);


/// The push plan of `bmmc` over 2^rank_bits ranks with runs of 2^line_bits elements. Q = I whenever A⁻¹ of the
/// low line_bits output bits is already local. Throws std::invalid_argument for rank_bits outside
/// 0..min(n, kMaxRankBits), a bad element size, or line_bits outside 0..max_push_line_bits (naming both).
PushPlan make_push_plan(const Bmmc& bmmc, int rank_bits, int elem_bytes, int line_bits);

/// The push plan the GPU push kernel runs: runs of one warp row, 2^(5 + vector bits) elements (vector_bits −1: the
/// planner's default for the element size), capped at max_push_line_bits.
PushPlan make_gpu_push_plan(const Bmmc& bmmc, int rank_bits, int elem_bytes, int vector_bits = -1);

/// The launch order (TilePass::block_order) of a push pass over ranks of 2^local_bits elements: the top g launch
/// bits stay the rank bits (rank r still runs launches [r·2^(b−g), (r+1)·2^(b−g))), and the lowest launch bits
/// are the block bits that change the destination rank, in a basis of those changes, then the others in order.
/// Why: blocks run in launch order, so with the coordinate order a map whose destination follows a high block
/// bit (a rank bit swapped with the top local bit) runs every local block first and every remote one after —
/// an HBM-bound phase, then a link-bound one, well above the peer-copy bound. With
/// the destinations cycling from one launch to the next, the links are busy all along and the local lines
/// move beside them. Worked example: swap of rank bit 32 with local bit 31, blocks over bits 12 … 32: block
/// bit 19 (position 31) becomes launch bit 0, then block bits 0 … 18, then the rank bit. Empty when that is the
/// identity. Pure function.
std::vector<std::uint64_t> push_launch_order(const TilePass& pass, int local_bits);

/// Human-readable: geometry, L, whether one pass suffices, F and Q.
std::string describe(const PushPlan& plan);

}  // namespace bmmc
