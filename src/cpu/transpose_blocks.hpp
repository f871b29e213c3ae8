// Internal to the CPU backend: the register-transpose block loop for 4-byte elements (AVX2).
//
// Why. The gather loops (executor.cpp) move one element per load: ~1.3 cycles per element on the CI's AMD
// EPYC, which made the CPU one-pass compute-bound at ~40% of memcpy. Here the element-level permutation is
// done 64 elements at a time in registers: 8 input vectors of 8 elements → lane permutation (vpermd) →
// 8×8 transpose (24 unpack/permute) → lane permutation → 8 tile vectors, ~0.6 shuffles per element; phase 2
// becomes a copy of whole vectors to the output.
//
// The algebra (natural tile index p of tile_tables.hpp, t = 5 + m bits). Let c_i = Nτ[2^i] (i < 5) and
// g_i = Nσ[2^i] (i < m): output element j of output row σ is the natural element Nσ[σ] ⊕ Nτ[δ] ⊕ Nτ[j],
// and {c_i, g_i} is a basis of the tile. Define the linear relabelling K0 by K0(c_i) = e_i, K0(g_i) =
// e_{5+i}: then output row σ, element j sits at K0-index σ·32 + (j ⊕ δ). Phase 1 writes every natural
// element p to tile[K0(p)]; phase 2 copies tile vectors σ·4 + (h ⊕ δ_hi) (lanes XOR δ_lo) to output run σ.
// Phase 1 in groups: the 64 natural elements a ⊕ X·k ⊕ ℓ (k, ℓ < 8) with X = (c_0, c_1, c_2) with their
// low 3 bits cleared, a a representative aligned to 8, map onto exactly 8 K0-vectors, because
// span(c_0, c_1, c_2) ⊆ span(X) ⊕ span(e_0, e_1, e_2). Writing K0(X·k ⊕ ℓ) = (P·k ⊕ Q·ℓ, R·k ⊕ S·ℓ)
// (vector, lane), with Q invertible: pre-permute input vector k by ℓ' = ℓ ⊕ B·k (B = Q⁻¹P), transpose
// (element (k, ℓ) → vector ℓ', lane k), store vector ℓ' at K0-vector of a ⊕ Q·ℓ', having permuted its
// lanes by j = D·k ⊕ S·ℓ' ⊕ λ(a) (D = R ⊕ S·B, the Schur complement, hence invertible; λ(a) = lane of
// K0(a)). When Q is singular (an output lane bit is also an input lane bit: e.g. gray codes) the tables are
// not built and the gather loop runs instead. make_transpose_tables checks every element of the tile.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "tile_tables.hpp"

namespace bmmc::cpu_detail {

struct TransposeTables {
  int swaps = 3;                            // r: lane bits exchanged with vector bits (0..3; 3 = 8×8 transpose)
  std::array<std::uint32_t, 8> kpos{};      // natural offsets X·k of a group's 8 input vectors
  std::vector<std::uint32_t> rep_nat;       // natural index of group g's representative a
  std::vector<std::uint32_t> rep_vec;       // its K0-vector (K0(a) >> 3)
  std::vector<std::uint32_t> rep_mu;        // D⁻¹·λ(a): XOR on the post-permutation indices
  std::array<std::array<std::int32_t, 8>, 8> pre{};   // input vector k, lane ℓ' ← lane pre[k][ℓ']
  std::array<std::array<std::int32_t, 8>, 8> post{};  // tile vector ℓ', lane j ← lane post[ℓ'][j] ⊕ μ
  std::array<std::uint32_t, 8> qvec{};      // K0-vector offset Q·ℓ' of transposed vector ℓ'
};

/// The group tables for a pass with 4-byte elements and 32-element runs, or nullopt when the pass does not
/// have that shape or Q is singular. Pure: no intrinsics.
std::optional<TransposeTables> make_transpose_tables(const TileTables& t, int elem_bytes);

/// True when this CPU can run run_blocks_transpose (AVX2, checked at run time).
bool transpose_blocks_supported();

/// Blocks [begin, end) of the pass; tile = 4·2^(5+m) bytes, 64-byte aligned. Stream: non-temporal output
/// stores (out 32-byte aligned).
void run_blocks_transpose(const TileTables& t, const TransposeTables& x, bool stream, const unsigned char* in,
                          unsigned char* out, std::uint64_t begin, std::uint64_t end, unsigned char* tile);

}  // namespace bmmc::cpu_detail
