// Internal to the CPU backend: the AVX-512 register network for 4- and 8-byte elements in 64-byte vectors,
// used by the direct loop (direct_blocks.cpp). A group is 2^W vectors of one whole 64-byte line each (W = 4
// lane bits for 4-byte elements, 3 for 8-byte ones); exchanging lane bit q with vector bit q is a pair of
// two-source permutes (vpermt2d) per vector pair, with the 32-bit index vectors of TransposeTables::words, and
// the lane permutations before and after the network ride on its first and last exchange (WordIndices).
//
// Why 64-byte vectors. The AVX2 groups move 32-byte halves of lines: where a group's vectors lie 4 KiB apart
// (a multiple of the L1's set stride) its loads or stores crowd one 8-way set, and the half left behind is
// evicted before the neighbouring group wants it. A 64-byte vector is a whole line, so every line is read and
// written once whatever the strides, and a group of 1 KiB costs 16 loads, 16 stores and 64 two-source
// permutes against the AVX2 loops' 32 + 32 + ~100 shuffles for the same bytes.
//
// Worked example (4-byte elements, W = 4, q = 3): lo[3] = 0..7, 16..23 and hi[3] = 8..15, 24..31, so for
// a = r[k], b = r[k | 8], permutex2var(a, lo, b) holds a's lanes 0..7 then b's lanes 0..7 and
// permutex2var(a, hi, b) a's lanes 8..15 then b's 8..15: lane bit 3 and vector bit 3 have traded.
#pragma once

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "transpose_blocks.hpp"

#define BMMC_AVX512 __attribute__((target("avx2,avx512f")))

namespace bmmc::cpu_detail {

BMMC_AVX512 inline __m512i load_words(const std::int32_t* p) {
  return _mm512_load_si512(reinterpret_cast<const void*>(p));
}

// T_r on the group of 2^W 64-byte vectors: exchanges lane bit q with vector bit q for the Swaps highest q.
// FoldPre: the first exchange also applies the pre permutations (WordIndices::first; Swaps ≥ 2, so that it
// is not also the last); FoldPost: the last one also applies the post permutations and the group's lane XOR
// (WordIndices::last, each index XOR mlast = last_mu_index(μ)).
template <int W, int Swaps, bool FoldPre, bool FoldPost>
BMMC_AVX512 __attribute__((always_inline)) inline void exchange_lane_bits_512(__m512i* r, const WordIndices& ix,
                                                                              [[maybe_unused]] __m512i mlast) {
  static_assert(!FoldPre || Swaps >= 2, "the pre permutation folds into a first exchange that is not the last");
  constexpr int V = 1 << W;
#pragma GCC unroll 4
  for (int q = W - 1; q >= W - Swaps; --q) {
    const bool pre = FoldPre && q == W - 1, post = FoldPost && q == W - Swaps;
    const __m512i il = load_words(ix.lo[q]), ih = load_words(ix.hi[q]);
#pragma GCC unroll 16
    for (int k = 0; k < V; ++k) {
      if ((k >> q) & 1) continue;
      const int k1 = k | (1 << q);
      const __m512i va = r[k], vb = r[k1];
      const __m512i jl = pre ? load_words(ix.first[k]) : post ? _mm512_xor_si512(load_words(ix.last[k]), mlast) : il;
      const __m512i jh = pre ? load_words(ix.first[k1]) : post ? _mm512_xor_si512(load_words(ix.last[k1]), mlast) : ih;
      r[k] = _mm512_permutex2var_epi32(va, jl, vb);
      r[k1] = _mm512_permutex2var_epi32(va, jh, vb);
    }
  }
}

// Whether this CPU runs the AVX-512 loops of 4- and 8-byte elements (AVX-512 F; the OS saves the registers
// when the CPU reports the feature through __builtin_cpu_supports).
inline bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}

}  // namespace bmmc::cpu_detail

#endif
