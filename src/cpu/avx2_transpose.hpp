// Internal to the CPU backend: the AVX2 register networks shared by the tile loop (transpose_blocks.cpp)
// and the direct loop (direct_blocks.cpp) — an 8×8 transpose of 32-bit lanes, the partial exchanges of the
// highest lane bits with vector bits, and vpermd index vectors for 4- and 8-byte lanes. Header-only and
// always inlined, so each loop keeps its 2^W vectors in registers across the network.
#pragma once

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#include <array>
#include <cstdint>

namespace bmmc::cpu_detail {

// Whether this CPU runs the AVX2 loops (checked once).
inline bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

// r[k][ℓ] → r[ℓ][k] for an 8×8 block of 32-bit lanes.
__attribute__((target("avx2"), always_inline)) inline void transpose8(__m256i r[8]) {
  const __m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
  const __m256i t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
  const __m256i t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
  const __m256i t6 = _mm256_unpacklo_epi32(r[6], r[7]), t7 = _mm256_unpackhi_epi32(r[6], r[7]);
  const __m256i s0 = _mm256_unpacklo_epi64(t0, t2), s1 = _mm256_unpackhi_epi64(t0, t2);
  const __m256i s2 = _mm256_unpacklo_epi64(t1, t3), s3 = _mm256_unpackhi_epi64(t1, t3);
  const __m256i s4 = _mm256_unpacklo_epi64(t4, t6), s5 = _mm256_unpackhi_epi64(t4, t6);
  const __m256i s6 = _mm256_unpacklo_epi64(t5, t7), s7 = _mm256_unpackhi_epi64(t5, t7);
  r[0] = _mm256_permute2x128_si256(s0, s4, 0x20);
  r[1] = _mm256_permute2x128_si256(s1, s5, 0x20);
  r[2] = _mm256_permute2x128_si256(s2, s6, 0x20);
  r[3] = _mm256_permute2x128_si256(s3, s7, 0x20);
  r[4] = _mm256_permute2x128_si256(s0, s4, 0x31);
  r[5] = _mm256_permute2x128_si256(s1, s5, 0x31);
  r[6] = _mm256_permute2x128_si256(s2, s6, 0x31);
  r[7] = _mm256_permute2x128_si256(s3, s7, 0x31);
}

// Partial transposes on V vectors of 32 bytes. swap_halves exchanges the 128-bit half of a vector (its
// highest lane bit) with vector bit V/2; swap_quads exchanges the 64-bit position within a half with vector
// bit V/4. For 4-byte lanes (V = 8) they are T_1 and, together, T_2; for 8-byte lanes (V = 4), together T_2.
template <int V>
__attribute__((target("avx2"), always_inline)) inline void swap_halves(__m256i r[V]) {
  for (int k = 0; k < V / 2; ++k) {
    const __m256i a = r[k], b = r[k + V / 2];
    r[k] = _mm256_permute2x128_si256(a, b, 0x20);
    r[k + V / 2] = _mm256_permute2x128_si256(a, b, 0x31);
  }
}
template <int V>
__attribute__((target("avx2"), always_inline)) inline void swap_quads(__m256i r[V]) {
  for (int k = 0; k < V; ++k) {
    if (k & (V / 4)) continue;
    const __m256i a = r[k], b = r[k + V / 4];
    r[k] = _mm256_unpacklo_epi64(a, b);
    r[k + V / 4] = _mm256_unpackhi_epi64(a, b);
  }
}

// 32-bit vpermd indices moving whole EB-byte lanes: lane ℓ ← lane idx[ℓ].
template <int EB>
__attribute__((target("avx2"), always_inline)) inline __m256i lane_index(const std::array<std::int32_t, 32>& idx) {
  alignas(32) std::int32_t v[8];
  for (int i = 0; i < 8; ++i) v[i] = EB == 4 ? idx[i] : 2 * idx[i / 2] + (i & 1);
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(v));
}

}  // namespace bmmc::cpu_detail

#endif
