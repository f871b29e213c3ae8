// Internal to the CPU backend: the AVX-512 VBMI register network for 1- and 2-byte elements, shared by the
// tile loop (transpose_blocks.cpp) and the direct loop (direct_blocks.cpp). A group is 2^W vectors of 32
// bytes (W = 5 lane bits for 1-byte, 4 for 2-byte elements), or in the direct loop 32 vectors of 64 bytes
// for 2-byte elements (W = 5); the lane permutations before and after the
// network are vpermb (in the direct loop folded into the first and last exchange), and exchanging lane bit
// q with vector bit q is a pair of two-source byte permutes (vpermt2b) per vector pair, with the byte index
// vectors of TransposeTables::bytes (32-byte vectors) or ::wide_bytes (64-byte vectors).
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

// The byte network's operations for either width, chosen by the index row's size (ByteIndices rows are 32
// bytes, WideByteIndices rows 64) or the vector type.
BMMC_VBMI inline __m256i load_index(const std::uint8_t (&p)[32]) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
}
BMMC_VBMI inline __m512i load_index(const std::uint8_t (&p)[64]) { return _mm512_load_si512(p); }
BMMC_VBMI inline __m256i permute(__m256i idx, __m256i v) { return _mm256_permutexvar_epi8(idx, v); }
BMMC_VBMI inline __m512i permute(__m512i idx, __m512i v) { return _mm512_permutexvar_epi8(idx, v); }
BMMC_VBMI inline __m256i permute2(__m256i a, __m256i idx, __m256i b) { return _mm256_permutex2var_epi8(a, idx, b); }
BMMC_VBMI inline __m512i permute2(__m512i a, __m512i idx, __m512i b) { return _mm512_permutex2var_epi8(a, idx, b); }
BMMC_VBMI inline __m256i vxor(__m256i a, __m256i b) { return _mm256_xor_si256(a, b); }
BMMC_VBMI inline __m512i vxor(__m512i a, __m512i b) { return _mm512_xor_si512(a, b); }
BMMC_VBMI inline void splat(__m256i& v, char c) { v = _mm256_set1_epi8(c); }
BMMC_VBMI inline void splat(__m512i& v, char c) { v = _mm512_set1_epi8(c); }
BMMC_VBMI inline void loadu(__m256i& v, const void* p) { v = _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
BMMC_VBMI inline void loadu(__m512i& v, const void* p) { v = _mm512_loadu_si512(p); }
BMMC_VBMI inline void storeu(void* p, __m256i v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
BMMC_VBMI inline void storeu(void* p, __m512i v) { _mm512_storeu_si512(p, v); }

// The vector of VB bytes (a specialisation rather than std::conditional_t: GCC drops a vector type's
// attributes from template arguments, with a warning).
template <int VB>
struct ByteVector {
  using type = __m256i;
};
template <>
struct ByteVector<64> {
  using type = __m512i;
};

// T_r on a group of 2^W vectors (Vec: 32 or 64 bytes; Ix: ByteIndices or WideByteIndices): exchanges lane bit
// q with vector bit q for the Swaps highest q. FoldPre / FoldPost (the direct loop): the first exchange also
// applies the pre permutations, the last one the post permutations and the group's lane XOR (Ix::first /
// last, each last index XOR mlast; see WordIndices). With 64-byte vectors of 2-byte elements the 32 vectors
// fill the register file, so the compiler keeps a stage's index vectors by spilling a data vector or two.
template <int W, int Swaps, bool FoldPre = false, bool FoldPost = false, class Vec, class Ix>
BMMC_VBMI __attribute__((always_inline)) inline void exchange_lane_bits(Vec* r, const Ix& ix,
                                                                        [[maybe_unused]] Vec mlast = Vec{}) {
  static_assert(!FoldPre || Swaps >= 2, "the pre permutation folds into a first exchange that is not the last");
  constexpr int V = 1 << W;
#pragma GCC unroll 5
  for (int q = W - 1; q >= W - Swaps; --q) {
    const bool pre = FoldPre && q == W - 1, post = FoldPost && q == W - Swaps;
    const Vec il = load_index(ix.lo[q]), ih = load_index(ix.hi[q]);
#pragma GCC unroll 32
    for (int k = 0; k < V; ++k) {
      if ((k >> q) & 1) continue;
      const int k1 = k | (1 << q);
      const Vec va = r[k], vb = r[k1];
      const Vec jl = pre ? load_index(ix.first[k]) : post ? vxor(load_index(ix.last[k]), mlast) : il;
      const Vec jh = pre ? load_index(ix.first[k1]) : post ? vxor(load_index(ix.last[k1]), mlast) : ih;
      r[k] = permute2(va, jl, vb);
      r[k1] = permute2(va, jh, vb);
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
