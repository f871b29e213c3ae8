// The 2-D sub-block transposes of the digit executor (digit_blocks.hpp).
#include "digit_blocks.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#include "avx2_transpose.hpp"
#define BMMC_DIGIT_X86 1
#endif

namespace bmmc::cpu_detail {

namespace {

// The element-by-element part: reads ascending (r inner) when the block is short in r, writes ascending (w
// inner) otherwise.
template <int EB>
inline void block_scalar(const std::byte* src, std::ptrdiff_t sstride, std::byte* dst, std::ptrdiff_t dstride,
                         Extent nw, Extent nr) {
  const std::ptrdiff_t sb = sstride * EB, db = dstride * EB;
  if (nr < nw) {
    for (Extent w = 0; w < nw; ++w)
      for (Extent r = 0; r < nr; ++r) std::memcpy(dst + r * db + w * EB, src + w * sb + r * EB, EB);
  } else {
    for (Extent r = 0; r < nr; ++r)
      for (Extent w = 0; w < nw; ++w) std::memcpy(dst + r * db + w * EB, src + w * sb + r * EB, EB);
  }
}

// The squares of B × B elements through `square` (src, sb, dst, db in bytes), then the edges element by element.
using SquareFn = void (*)(const std::byte*, std::ptrdiff_t, std::byte*, std::ptrdiff_t);
template <int EB, int B, SquareFn square>
__attribute__((always_inline)) inline void blocked(const std::byte* src, std::ptrdiff_t sstride, std::byte* dst,
                                                  std::ptrdiff_t dstride, Extent nw, Extent nr) {
  const std::ptrdiff_t sb = sstride * EB, db = dstride * EB;
  const Extent bw = nw / B * B, br = nr / B * B;
  for (Extent r = 0; r < br; r += B) {
    for (Extent w = 0; w < bw; w += B) square(src + w * sb + r * EB, sb, dst + r * db + w * EB, db);
    if (bw < nw) block_scalar<EB>(src + bw * sb + r * EB, sstride, dst + r * db + bw * EB, dstride, nw - bw, B);
  }
  if (br < nr) block_scalar<EB>(src + br * EB, sstride, dst + br * db, dstride, nw, nr - br);
}

template <int EB, int B>
void square_portable(const std::byte* s, std::ptrdiff_t sb, std::byte* d, std::ptrdiff_t db) {
  unsigned char t[B][B][EB];  // t[w][r]
  for (int w = 0; w < B; ++w) std::memcpy(t[w], s + w * sb, B * EB);
  for (int r = 0; r < B; ++r)
    for (int w = 0; w < B; ++w) std::memcpy(d + r * db + w * EB, t[w][r], EB);
}

template <int EB>
void digit_block_portable(const std::byte* src, std::ptrdiff_t sstride, std::byte* dst, std::ptrdiff_t dstride,
                          Extent nw, Extent nr) {
  constexpr int B = EB >= 8 ? 4 : 8;
  blocked<EB, B, square_portable<EB, B>>(src, sstride, dst, dstride, nw, nr);
}

// Blocks with 2, 3 or 4 elements on one side that are dense on the other: a de-interleave (nr ≤ 4 rows of the
// output from one input run, sstride = nr) or an interleave (nw ≤ 4 input rows into one output run, dstride = nw),
// loops the compiler vectorises with the count known.
template <int EB>
using Word = std::conditional_t<EB == 1, std::uint8_t,
                                std::conditional_t<EB == 2, std::uint16_t,
                                                   std::conditional_t<EB == 4, std::uint32_t, std::uint64_t>>>;

template <int EB, int NR>
__attribute__((optimize("tree-vectorize"))) void deinterleave(const std::byte* src, std::byte* dst,
                                                               std::ptrdiff_t db, Extent nw) {
  std::byte* d[NR];
  for (int r = 0; r < NR; ++r) d[r] = dst + r * db;
#pragma GCC ivdep
  for (Extent w = 0; w < nw; ++w)
    for (int r = 0; r < NR; ++r) {
      Word<EB> v;  // memcpy: the pointers need not be aligned
      std::memcpy(&v, src + (w * NR + r) * EB, EB);
      std::memcpy(d[r] + w * EB, &v, EB);
    }
}

template <int EB, int NW>
__attribute__((optimize("tree-vectorize"))) void interleave(const std::byte* src, std::ptrdiff_t sb, std::byte* dst,
                                                             Extent nr) {
  const std::byte* s[NW];
  for (int w = 0; w < NW; ++w) s[w] = src + w * sb;
#pragma GCC ivdep
  for (Extent r = 0; r < nr; ++r)
    for (int w = 0; w < NW; ++w) {
      Word<EB> v;
      std::memcpy(&v, s[w] + r * EB, EB);
      std::memcpy(dst + (r * NW + w) * EB, &v, EB);
    }
}

#ifdef BMMC_DIGIT_X86
// Three rows through byte shuffles, 48 bytes at a time (SSSE3): output row c's byte b of a vector is input byte
// (3·p + c)·EB + e of the 48 (element p = b / EB, byte e = b mod EB), gathered from the three input vectors with
// one shuffle each (bytes of the other vectors zeroed) and ORed. The interleave is the same table read backwards.
template <int EB>
struct Shuffles3 {
  alignas(16) std::int8_t m[3][3][16];  // [row c][input vector k][byte b]
  Shuffles3() {
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k)
        for (int b = 0; b < 16; ++b) {
          const int src = (3 * (b / EB) + c) * EB + b % EB;
          m[c][k][b] = static_cast<std::int8_t>(src / 16 == k ? src % 16 : -128);
        }
  }
};

template <int EB>
__attribute__((target("ssse3"))) void deinterleave3(const std::byte* src, std::byte* dst, std::ptrdiff_t db, Extent nw) {
  static const Shuffles3<EB> t;
  constexpr Extent V = 16 / EB;  // elements of a row per vector
  Extent w = 0;
  for (; w + V <= nw; w += V) {
    const std::byte* s = src + w * 3 * EB;
    const __m128i v[3] = {_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32))};
    for (int c = 0; c < 3; ++c) {
      __m128i o = _mm_setzero_si128();
      for (int k = 0; k < 3; ++k)
        o = _mm_or_si128(o, _mm_shuffle_epi8(v[k], _mm_load_si128(reinterpret_cast<const __m128i*>(t.m[c][k]))));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + c * db + w * EB), o);
    }
  }
  for (; w < nw; ++w)
    for (int c = 0; c < 3; ++c) std::memcpy(dst + c * db + w * EB, src + (w * 3 + c) * EB, EB);
}

template <int EB>
__attribute__((target("ssse3"))) void interleave3(const std::byte* src, std::ptrdiff_t sb, std::byte* dst, Extent nr) {
  // Output vector k's byte b is byte (3·p + c)·EB + e of the 48 = input row c's byte p·EB + e: the inverse table.
  struct Inverse {
    alignas(16) std::int8_t m[3][3][16];  // [output vector k][input row c][byte b]
    Inverse() {
      for (int k = 0; k < 3; ++k)
        for (int c = 0; c < 3; ++c)
          for (int b = 0; b < 16; ++b) {
            const int g = 16 * k + b, e = g % EB, el = g / EB;
            m[k][c][b] = static_cast<std::int8_t>(el % 3 == c ? (el / 3) * EB + e : -128);
          }
    }
  };
  static const Inverse t;
  constexpr Extent V = 16 / EB;
  Extent r = 0;
  for (; r + V <= nr; r += V) {
    const __m128i v[3] = {_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + r * EB)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + sb + r * EB)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * sb + r * EB))};
    for (int k = 0; k < 3; ++k) {
      __m128i o = _mm_setzero_si128();
      for (int c = 0; c < 3; ++c)
        o = _mm_or_si128(o, _mm_shuffle_epi8(v[c], _mm_load_si128(reinterpret_cast<const __m128i*>(t.m[k][c]))));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + r * 3 * EB + 16 * k), o);
    }
  }
  for (; r < nr; ++r)
    for (int c = 0; c < 3; ++c) std::memcpy(dst + (r * 3 + c) * EB, src + c * sb + r * EB, EB);
}
#endif

// The dense short cases above, or false.
template <int EB>
inline bool short_side(const std::byte* src, std::ptrdiff_t sstride, std::byte* dst, std::ptrdiff_t dstride,
                       Extent nw, Extent nr) {
  if constexpr (EB <= 8) {
    if (sstride == nr && nr <= 4 && nw > nr) {
      switch (nr) {
        case 2: deinterleave<EB, 2>(src, dst, dstride * EB, nw); return true;
        case 3:
#ifdef BMMC_DIGIT_X86
          if (EB <= 4 && has_avx2()) return deinterleave3<EB>(src, dst, dstride * EB, nw), true;
#endif
          deinterleave<EB, 3>(src, dst, dstride * EB, nw);
          return true;
        case 4: deinterleave<EB, 4>(src, dst, dstride * EB, nw); return true;
        default: return false;
      }
    }
    if (dstride == nw && nw <= 4 && nr > nw) {
      switch (nw) {
        case 2: interleave<EB, 2>(src, sstride * EB, dst, nr); return true;
        case 3:
#ifdef BMMC_DIGIT_X86
          if (EB <= 4 && has_avx2()) return interleave3<EB>(src, sstride * EB, dst, nr), true;
#endif
          interleave<EB, 3>(src, sstride * EB, dst, nr);
          return true;
        case 4: interleave<EB, 4>(src, sstride * EB, dst, nr); return true;
        default: return false;
      }
    }
  }
  return false;
}

template <int EB>
void reverse_portable(const std::byte* src, std::byte* dst, Extent count) {
  for (Extent t = 0; t < count; ++t) std::memcpy(dst + t * EB, src - t * EB, EB);
}

#ifdef BMMC_DIGIT_X86

// Reverses the EB-byte elements of a 32-byte vector.
template <int EB>
__attribute__((target("avx2"), always_inline)) inline __m256i reverse_lanes(__m256i v) {
  if constexpr (EB == 1 || EB == 2) {
    const __m256i m = EB == 1 ? _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12,
                                                  11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
                              : _mm256_setr_epi8(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1, 14, 15, 12, 13,
                                                  10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1);
    return _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, m), 0x4E);
  } else if constexpr (EB == 4) {
    return _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0));
  } else if constexpr (EB == 8) {
    return _mm256_permute4x64_epi64(v, 0x1B);
  } else {
    return _mm256_permute4x64_epi64(v, 0x4E);
  }
}

template <int EB>
__attribute__((target("avx2"))) void reverse_avx2(const std::byte* src, std::byte* dst, Extent count) {
  constexpr Extent V = 32 / EB;
  Extent t = 0;
  for (; t + V <= count; t += V) {  // elements t .. t+V−1 are read from src − (t+V−1) upwards
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src - (t + V - 1) * EB));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + t * EB), reverse_lanes<EB>(v));
  }
  for (; t < count; ++t) std::memcpy(dst + t * EB, src - t * EB, EB);
}

// 8 × 8 bytes: rows of 8 bytes in the low halves, interleaved by bytes, 16-bit pairs, 32-bit quads.
__attribute__((always_inline)) inline void square_u8(const std::byte* s, std::ptrdiff_t sb, std::byte* d, std::ptrdiff_t db) {
  __m128i r[8];
  for (int w = 0; w < 8; ++w) r[w] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + w * sb));
  const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpacklo_epi8(r[2], r[3]);
  const __m128i a2 = _mm_unpacklo_epi8(r[4], r[5]), a3 = _mm_unpacklo_epi8(r[6], r[7]);
  const __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
  const __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
  const __m128i c[4] = {_mm_unpacklo_epi32(b0, b2), _mm_unpackhi_epi32(b0, b2), _mm_unpacklo_epi32(b1, b3),
                        _mm_unpackhi_epi32(b1, b3)};
  for (int k = 0; k < 4; ++k) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (2 * k) * db), c[k]);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (2 * k + 1) * db), _mm_unpackhi_epi64(c[k], c[k]));
  }
}

// 8 × 8 of 2 bytes: 16-bit pairs, 32-bit quads, 64-bit halves.
__attribute__((always_inline)) inline void square_u16(const std::byte* s, std::ptrdiff_t sb, std::byte* d, std::ptrdiff_t db) {
  __m128i r[8];
  for (int w = 0; w < 8; ++w) r[w] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + w * sb));
  __m128i a[8], b[8];
  for (int k = 0; k < 4; ++k) {
    a[2 * k] = _mm_unpacklo_epi16(r[2 * k], r[2 * k + 1]);      // columns 0-3 of rows 2k, 2k+1
    a[2 * k + 1] = _mm_unpackhi_epi16(r[2 * k], r[2 * k + 1]);  // columns 4-7
  }
  for (int h = 0; h < 2; ++h)      // rows 0-3 (h = 0) and 4-7 (h = 1)
    for (int q = 0; q < 2; ++q) {  // columns 0-3 (q = 0) and 4-7
      const __m128i x = a[4 * h + q], y = a[4 * h + 2 + q];
      b[4 * h + 2 * q] = _mm_unpacklo_epi32(x, y);      // columns 4q, 4q+1 of rows 4h..4h+3
      b[4 * h + 2 * q + 1] = _mm_unpackhi_epi32(x, y);  // columns 4q+2, 4q+3
    }
  for (int k = 0; k < 4; ++k) {  // b[k]: columns 2k, 2k+1 of rows 0-3; b[4 + k]: of rows 4-7
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * k) * db), _mm_unpacklo_epi64(b[k], b[4 + k]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * k + 1) * db), _mm_unpackhi_epi64(b[k], b[4 + k]));
  }
}

// 8 × 8 of 4 bytes: transpose8 (avx2_transpose.hpp).
__attribute__((target("avx2"))) inline void square_u32(const std::byte* s, std::ptrdiff_t sb,
                                                                      std::byte* d, std::ptrdiff_t db) {
  __m256i r[8];
  for (int w = 0; w < 8; ++w) r[w] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + w * sb));
  transpose8(r);
  for (int k = 0; k < 8; ++k) _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + k * db), r[k]);
}

// 4 × 4 of 8 bytes: 64-bit pairs, then 128-bit halves.
__attribute__((target("avx2"))) inline void square_u64(const std::byte* s, std::ptrdiff_t sb,
                                                                      std::byte* d, std::ptrdiff_t db) {
  __m256i r[4];
  for (int w = 0; w < 4; ++w) r[w] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + w * sb));
  const __m256i t0 = _mm256_unpacklo_epi64(r[0], r[1]), t1 = _mm256_unpackhi_epi64(r[0], r[1]);
  const __m256i t2 = _mm256_unpacklo_epi64(r[2], r[3]), t3 = _mm256_unpackhi_epi64(r[2], r[3]);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_permute2x128_si256(t0, t2, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + db), _mm256_permute2x128_si256(t1, t3, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 2 * db), _mm256_permute2x128_si256(t0, t2, 0x31));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 3 * db), _mm256_permute2x128_si256(t1, t3, 0x31));
}

void block_u8(const std::byte* src, std::ptrdiff_t ss, std::byte* dst, std::ptrdiff_t ds, Extent nw, Extent nr) {
  if (!short_side<1>(src, ss, dst, ds, nw, nr)) blocked<1, 8, square_u8>(src, ss, dst, ds, nw, nr);
}
void block_u16(const std::byte* src, std::ptrdiff_t ss, std::byte* dst, std::ptrdiff_t ds, Extent nw, Extent nr) {
  if (!short_side<2>(src, ss, dst, ds, nw, nr)) blocked<2, 8, square_u16>(src, ss, dst, ds, nw, nr);
}
__attribute__((target("avx2"))) void block_u32(const std::byte* src, std::ptrdiff_t ss, std::byte* dst,
                                               std::ptrdiff_t ds, Extent nw, Extent nr) {
  if (!short_side<4>(src, ss, dst, ds, nw, nr)) blocked<4, 8, square_u32>(src, ss, dst, ds, nw, nr);
}
__attribute__((target("avx2"))) void block_u64(const std::byte* src, std::ptrdiff_t ss, std::byte* dst,
                                               std::ptrdiff_t ds, Extent nw, Extent nr) {
  if (!short_side<8>(src, ss, dst, ds, nw, nr)) blocked<8, 4, square_u64>(src, ss, dst, ds, nw, nr);
}

#endif

}  // namespace

void digit_stream_copy(const std::byte* src, std::byte* dst, std::size_t bytes) {
#ifdef BMMC_DIGIT_X86
  const std::size_t head = std::min(bytes, (16 - reinterpret_cast<std::uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  std::size_t i = head;
  for (; i + 16 <= bytes; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
  std::memcpy(dst + i, src + i, bytes - i);
#else
  std::memcpy(dst, src, bytes);
#endif
}

void digit_stream_fence() {
#ifdef BMMC_DIGIT_X86
  _mm_sfence();
#endif
}

DigitReverseFn digit_reverse_fn(int elem_bytes, bool portable) {
#ifdef BMMC_DIGIT_X86
  if (!portable && has_avx2()) {
    switch (elem_bytes) {
      case 1: return reverse_avx2<1>;
      case 2: return reverse_avx2<2>;
      case 4: return reverse_avx2<4>;
      case 8: return reverse_avx2<8>;
      default: return reverse_avx2<16>;
    }
  }
#endif
  switch (elem_bytes) {
    case 1: return reverse_portable<1>;
    case 2: return reverse_portable<2>;
    case 4: return reverse_portable<4>;
    case 8: return reverse_portable<8>;
    default: return reverse_portable<16>;
  }
}

DigitBlockFn digit_block_fn(int elem_bytes, bool portable) {
#ifdef BMMC_DIGIT_X86
  if (!portable) {
    switch (elem_bytes) {
      case 1: return block_u8;
      case 2: return block_u16;
      case 4: if (has_avx2()) return block_u32; break;
      case 8: if (has_avx2()) return block_u64; break;
      default: break;
    }
  }
#endif
  switch (elem_bytes) {
    case 1: return digit_block_portable<1>;
    case 2: return digit_block_portable<2>;
    case 4: return digit_block_portable<4>;
    case 8: return digit_block_portable<8>;
    default: return digit_block_portable<16>;
  }
}

}  // namespace bmmc::cpu_detail
