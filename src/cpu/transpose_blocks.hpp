// Internal to the CPU backend: the register-transpose block loops (AVX2 for 4- and 8-byte elements, AVX-512
// VBMI for 1- and 2-byte elements).
//
// Why. The gather loops (executor.cpp) move one element per load: ~1.3 cycles per element on the CI's AMD
// EPYC, which made the CPU one-pass compute-bound at ~40% of memcpy. Here the element-level permutation is
// done a group at a time in registers: for 4-byte elements 8 input vectors of 8 lanes → lane permutation
// (vpermd) → 8×8 transpose (24 unpack/permute) → lane permutation → 8 tile vectors, ~0.6 shuffles per
// element; for 8-byte elements 4 vectors of 4 lanes the same way, for 2- and 1-byte elements 16 of 16 and
// 32 of 32 with byte permutes (vpermb, vpermt2b). Phase 2 becomes a copy of whole vectors.
//
// The algebra (natural tile index p of tile_tables.hpp, t = s + m bits, runs of 2^s elements; W = lane
// bits of a 32-byte vector: 5, 4, 3, 2 for 1, 2, 4, 8-byte elements). Let c_i = Nτ[2^i] (i < s) and
// g_i = Nσ[2^i] (i < m): output element j of output row σ is the natural element Nσ[σ] ⊕ Nτ[δ] ⊕ Nτ[j], and
// {c_i, g_i} is a basis of the tile. Define the linear relabelling K0 by K0(c_i) = e_i, K0(g_i) = e_{s+i}:
// then output row σ, element j sits at K0-index σ·2^s + (j ⊕ δ). Phase 1 writes every natural element p to
// tile[K0(p)]; phase 2 copies tile vectors σ·2^(s−W) + (h ⊕ δ_hi) (lanes XOR δ_lo) to output run σ.
// Phase 1 in groups: the 2^(2W) natural elements a ⊕ X·k ⊕ ℓ (k, ℓ < 2^W), with X = the projections of
// c_0..c_{W−1} onto the aligned indices (completed by unit vectors) and a an aligned representative, map
// onto exactly 2^W K0-vectors, because span(c_0..c_{W−1}) ⊆ span(X) ⊕ span(e_0..e_{W−1}). In group
// coordinates the map is an invertible M: (k, ℓ) → (vector v, lane j). Lane permutations per vector (vpermd)
// and relabelling of vectors are free, so M is written M = L1·T_r·L2 (a Bruhat decomposition for the
// "lanes stay lanes" subgroup): L2, L1 block lower-triangular (vector ↦ vector, lane ↦ lane ⊕ f(vector)),
// T_r = exchange of the r highest lane bits with the same vector bits, r = rank of M's lane → vector block
// (r = W: a full transpose, e.g. random BMMCs, bit-reverse; r < W when low output bits come from low input
// bits: gray codes, rotations, many BPCs). The group's K0(a) adds a vector offset and a lane XOR λ(a),
// folded into the post permutation. make_transpose_tables checks, element by element, that the tables put
// every element where phase 2 expects it, and returns nullopt rather than a wrong loop.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "tile_tables.hpp"

namespace bmmc::cpu_detail {

// The lane tables of a TransposeTables as the index vectors of a register network: Units index units of T a
// vector (bytes or 32-bit words; index unit Units + i is unit i of the second source of a two-source
// permute), up to Vectors registers a group and Exchanges exchanged lane bits. pre/post[v]: the one-source
// lane permutations; lo/hi[q]: the two-source pair that exchanges lane bit q with vector bit q. first[v]:
// the first exchange (q = W − 1) with the pre permutation folded in, one index per result register v;
// last[v]: the last exchange (q = W − swaps) with the post permutation folded in — a group's lane XOR μ then
// XORs the index with a constant (last_mu_index), because the exchange's index is linear in the lane it
// reads. So a network with exchanges needs no one-source permute at all (the direct loop folds; the tile loop
// uses pre and post). Filled once with the tables, so a loop call starts without building them.
template <class T, int Units, int Vectors, int Exchanges>
struct NetworkIndices {
  static constexpr int units = Units;
  alignas(Units * sizeof(T)) T pre[Vectors][Units]{}, post[Vectors][Units]{}, lo[Exchanges][Units]{},
      hi[Exchanges][Units]{}, first[Vectors][Units]{}, last[Vectors][Units]{};
};
// 1- and 2-byte elements in 32-byte vectors, vpermb / vpermt2b (vbmi_network.hpp).
using ByteIndices = NetworkIndices<std::uint8_t, 32, 32, 5>;
// 4-byte elements (W = 4) and 8-byte ones (W = 3; lane ℓ is words 2ℓ, 2ℓ + 1) in 64-byte vectors, vpermd /
// vpermt2d (avx512_network.hpp).
using WordIndices = NetworkIndices<std::int32_t, 16, 16, 4>;
// 2-byte elements in 64-byte vectors (W = 5), vpermb / vpermt2b on 64 bytes.
using WideByteIndices = NetworkIndices<std::uint8_t, 64, 32, 5>;

struct TransposeTables {
  int lane_bits = 3;                        // W: 2^W lanes per vector (32 bytes: 5, 4, 3, 2 for 1, 2, 4, 8 B)
  int vector_bytes = 32;                    // 32, or 64 for the AVX-512 direct loop (2 / 4 / 8-byte elements)
  int swaps = 3;                            // r: lane bits exchanged with vector bits (0..W; W = full transpose)
  std::array<std::uint32_t, 32> kpos{};     // natural offsets X·k of a group's 2^W input vectors
  std::vector<std::uint32_t> rep_nat;       // natural index of group g's representative a
  std::vector<std::uint32_t> rep_vec;       // its K0-vector (K0(a) >> W)
  std::vector<std::uint32_t> rep_mu;        // D⁻¹·λ(a): XOR on the post-permutation indices
  std::array<std::array<std::int32_t, 32>, 32> pre{};   // input vector k, lane ℓ' ← lane pre[k][ℓ']
  std::array<std::array<std::int32_t, 32>, 32> post{};  // tile vector ℓ', lane j ← lane post[ℓ'][j] ⊕ μ
  std::array<std::uint32_t, 32> qvec{};     // K0-vector offset Q·ℓ' of transposed vector ℓ'
  // pre, post and the exchanges as the index vectors of the loop that runs these tables, one of the three
  // (on the heap: together they are ~17 KB, and a permuter's set-up keeps several tables on the stack):
  std::shared_ptr<const ByteIndices> bytes;          // 1/2-byte elements in 32-byte vectors (VBMI)
  std::shared_ptr<const WordIndices> words;          // 4/8-byte elements in 64-byte vectors (AVX-512)
  std::shared_ptr<const WideByteIndices> wide_bytes; // 2-byte elements in 64-byte vectors (VBMI)
};

/// The XOR that a group's lane XOR μ (lanes) makes on the `last` index vectors (ByteIndices, WordIndices,
/// WideByteIndices) of tables with these lane bits and swaps (≥ 1): `units` index units a vector (32 or 64
/// bytes, 16 words), `per_lane` units a lane. The last exchange's index of lane p is units·p_q + (p with bit q set or
/// cleared)·per_lane, linear in p but for bit q, whose part moves to the source bit; so index(p ⊕ μ) =
/// index(p) ⊕ last_mu_index(μ). Example: W = 4, swaps = 4 (q = 0), words, 1 a lane: μ = 3 → 16 ⊕ 2 = 18.
constexpr std::uint32_t last_mu_index(int lane_bits, int swaps, std::uint32_t mu, std::uint32_t units,
                                      std::uint32_t per_lane) {
  const std::uint32_t bl = 1u << (lane_bits - swaps);
  return ((mu & bl) ? units : 0) ^ ((mu & ~bl) * per_lane);
}

/// The group tables for a pass (any element size but 16 bytes), or nullopt when the tile is smaller than
/// one group of 2^W vectors, the runs are shorter than a vector or longer than 2^7 elements, or the
/// decomposition or its element-by-element check fails (never seen; the gather loop then runs). Pure.
std::optional<TransposeTables> make_transpose_tables(const TileTables& t, int elem_bytes);

/// The same tables for any linear relabelling K0 of 2^bits elements given by its inverse's columns
/// (basis[i] = K0⁻¹(e_i), bits = basis.size() ≤ 24, of which the low s ≥ W are "lane-side"): groups of 2^W
/// vectors of consecutive elements at rep_nat ⊕ kpos[k] land on 2^W vectors of consecutive K0-indices,
/// W = log2(vector_bytes / elem_bytes) (vector_bytes 32, or 64 for 2-, 4- and 8-byte elements).
/// make_transpose_tables takes the tile's basis; the direct loop (direct_blocks.hpp) takes K0 = A.
/// The group index's columns (rep_nat[2^i], in the order a Gray walk flips them most often first) are
/// rep_first's aligned directions where independent, then the unit vectors of the aligned bits in order.
/// X (the projections of basis[0..W-1] onto the aligned indices) is completed to W directions from x_first's
/// aligned directions first, then the unit vectors in order (make_direct_tables' pairs: A-invariant groups).
std::optional<TransposeTables> make_group_tables(const std::vector<BitVec>& basis, int s, int elem_bytes,
                                                 int vector_bytes = 32,
                                                 const std::vector<std::uint32_t>& rep_first = {},
                                                 const std::vector<std::uint32_t>& x_first = {});

/// True when this CPU can run run_blocks_transpose for this element size (checked at run time): AVX2 for
/// 4- and 8-byte elements, AVX-512 VBMI (+BW, VL) for 1- and 2-byte elements (not when `avx512` is false).
bool transpose_blocks_supported(int elem_bytes, bool avx512 = true);

/// Blocks [begin, end) of the pass; tile = elem_bytes·2^(s+m) bytes, 64-byte aligned. Stream: non-temporal output
/// stores (out 32-byte aligned).
void run_blocks_transpose(const TileTables& t, const TransposeTables& x, bool stream, const unsigned char* in,
                          unsigned char* out, std::uint64_t begin, std::uint64_t end, unsigned char* tile);

}  // namespace bmmc::cpu_detail
