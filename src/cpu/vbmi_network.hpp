// Internal to the CPU backend: the AVX-512 VBMI register network for 1- and 2-byte elements, shared by the
// tile loop (transpose_blocks.cpp) and the direct loop (direct_blocks.cpp). A group is 2^W vectors of 32
// bytes (W = 5 lane bits for 1-byte, 4 for 2-byte elements), or in the direct loop 32 vectors of 64 bytes
// for 2-byte elements (W = 5); the lane permutations before and after the
// network are vpermb, and exchanging lane bit q with vector bit q is a pair of two-source byte permutes
// (vpermt2b) per vector pair, with the byte index vectors of TransposeTables::bytes.
//
// Worked example (2-byte elements, W = 4, q = 3): lo[3] picks, for result lane l, the lane l with bit 3
// cleared from the first source (l < 8) or from the second (l ≥ 8); hi[3] the lane with bit 3 set. So for
// registers a = r[k], b = r[k | 8], permutex2var(a, lo, b) holds a's lanes 0..7 then b's lanes 0..7, and
// permutex2var(a, hi, b) a's lanes 8..15 then b's lanes 8..15: lane bit 3 and vector bit 3 have traded.
#pragma once

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "transpose_blocks.hpp"

#define BMMC_VBMI __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vbmi")))

namespace bmmc::cpu_detail {

BMMC_VBMI inline __m256i load_index(const std::uint8_t* p) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
}

// T_r on the group: exchanges lane bit q with vector bit q for the Swaps highest q. FoldPre / FoldPost (the
// direct loop): the first exchange also applies the pre permutations, the last one the post permutations
// and the group's lane XOR (ByteIndices::first / last, each last index XOR mlast; see WordIndices).
template <int EB, int Swaps, bool FoldPre = false, bool FoldPost = false>
BMMC_VBMI __attribute__((always_inline)) inline void exchange_lane_bits(__m256i* r, const ByteIndices& ix,
                                                                        [[maybe_unused]] __m256i mlast = _mm256_setzero_si256()) {
  static_assert(!FoldPre || Swaps >= 2, "the pre permutation folds into a first exchange that is not the last");
  constexpr int W = EB == 1 ? 5 : 4, V = 1 << W;
#pragma GCC unroll 5
  for (int q = W - 1; q >= W - Swaps; --q) {
    const bool pre = FoldPre && q == W - 1, post = FoldPost && q == W - Swaps;
    const __m256i il = load_index(ix.lo[q]), ih = load_index(ix.hi[q]);
#pragma GCC unroll 32
    for (int k = 0; k < V; ++k) {
      if ((k >> q) & 1) continue;
      const int k1 = k | (1 << q);
      const __m256i va = r[k], vb = r[k1];
      const __m256i jl = pre ? load_index(ix.first[k]) : post ? _mm256_xor_si256(load_index(ix.last[k]), mlast) : il;
      const __m256i jh = pre ? load_index(ix.first[k1]) : post ? _mm256_xor_si256(load_index(ix.last[k1]), mlast) : ih;
      r[k] = _mm256_permutex2var_epi8(va, jl, vb);
      r[k1] = _mm256_permutex2var_epi8(va, jh, vb);
    }
  }
}

// The same for 2-byte elements in 64-byte vectors (the direct loop's wide byte groups: W = 5, 32 vectors of
// 32 lanes, every vector a whole cache line). The 32 vectors fill the register file, so the compiler keeps
// the two index vectors of a stage by spilling a data vector or two.
BMMC_VBMI inline __m512i load_index64(const std::uint8_t* p) {
  return _mm512_load_si512(reinterpret_cast<const void*>(p));
}

// FoldPre / FoldPost as in avx512_network.hpp's exchange_lane_bits_512 (WideByteIndices::first / last).
template <int Swaps, bool FoldPre, bool FoldPost>
BMMC_VBMI __attribute__((always_inline)) inline void exchange_lane_bits(__m512i* r, const WideByteIndices& ix,
                                                                        [[maybe_unused]] __m512i mlast) {
  static_assert(!FoldPre || Swaps >= 2, "the pre permutation folds into a first exchange that is not the last");
  constexpr int W = 5, V = 1 << W;
#pragma GCC unroll 5
  for (int q = W - 1; q >= W - Swaps; --q) {
    const bool pre = FoldPre && q == W - 1, post = FoldPost && q == W - Swaps;
    const __m512i il = load_index64(ix.lo[q]), ih = load_index64(ix.hi[q]);
#pragma GCC unroll 32
    for (int k = 0; k < V; ++k) {
      if ((k >> q) & 1) continue;
      const int k1 = k | (1 << q);
      const __m512i va = r[k], vb = r[k1];
      const __m512i jl = pre ? load_index64(ix.first[k]) : post ? _mm512_xor_si512(load_index64(ix.last[k]), mlast) : il;
      const __m512i jh = pre ? load_index64(ix.first[k1]) : post ? _mm512_xor_si512(load_index64(ix.last[k1]), mlast) : ih;
      r[k] = _mm512_permutex2var_epi8(va, jl, vb);
      r[k1] = _mm512_permutex2var_epi8(va, jh, vb);
    }
  }
}

// Whether this CPU runs the VBMI loops (AVX-512 VBMI with BW and VL for 32-byte vectors).
inline bool has_vbmi() {
  static const bool yes = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return yes;
}

}  // namespace bmmc::cpu_detail

#endif
