// The compare-swaps of one pair leaf, a 32-byte vector of keys at a time (see pair_simd.hpp).
#include "pair_simd.hpp"

#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include <bit>

#include "bmmc/core/bit_matrix.hpp"

namespace bmmc {

namespace {

// Lane-wise "b < a" as the scalar compare_swap asks it (false for unordered floats), all-ones where true, for
// keys of each DType in 32-byte vectors. 32-bit integers have min/max instructions, used directly below.
template <DType T>
__attribute__((target("avx2"), always_inline)) inline __m256i less(__m256i b, __m256i a) {
  if constexpr (T == DType::Int32) return _mm256_cmpgt_epi32(a, b);
  if constexpr (T == DType::UInt32) {
    const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
    return _mm256_cmpgt_epi32(_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign));
  }
  if constexpr (T == DType::Float32)
    return _mm256_castps_si256(_mm256_cmp_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), _CMP_LT_OQ));
  if constexpr (T == DType::Int64) return _mm256_cmpgt_epi64(a, b);
  if constexpr (T == DType::UInt64) {
    const __m256i sign = _mm256_set1_epi64x(static_cast<long long>(0x8000000000000000ull));
    return _mm256_cmpgt_epi64(_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign));
  }
  if constexpr (T == DType::Float64)
    return _mm256_castpd_si256(_mm256_cmp_pd(_mm256_castsi256_pd(b), _mm256_castsi256_pd(a), _CMP_LT_OQ));
}

// mn = b < a ? b : a, mx = b < a ? a : b, lane-wise: exactly the scalar compare_swap's two values.
template <DType T>
__attribute__((target("avx2"), always_inline)) inline void min_max(__m256i a, __m256i b, __m256i& mn, __m256i& mx) {
  if constexpr (T == DType::Int32) {
    mn = _mm256_min_epi32(a, b);
    mx = _mm256_max_epi32(a, b);
  } else if constexpr (T == DType::UInt32) {
    mn = _mm256_min_epu32(a, b);
    mx = _mm256_max_epu32(a, b);
  } else {
    const __m256i lt = less<T>(b, a);
    mn = _mm256_blendv_epi8(a, b, lt);
    mx = _mm256_blendv_epi8(b, a, lt);
  }
}

// A vpermd index vector moving key lane j ^ x into lane j, for keys of `words` 32-bit words.
__attribute__((target("avx2"))) __m256i xor_lanes(unsigned x, int words) {
  alignas(32) std::int32_t idx[8];
  for (int m = 0; m < 8; ++m) idx[m] = static_cast<std::int32_t>((((m / words) ^ x) * words) + m % words);
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(idx));
}

// All-ones over key lane j where want(j) holds.
template <class F>
__attribute__((target("avx2"))) __m256i lane_mask(int lanes, F want) {
  alignas(32) std::int32_t m[8];
  for (int w = 0; w < 8; ++w) m[w] = want(w / (8 / lanes)) ? -1 : 0;
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(m));
}

template <DType T>
__attribute__((target("avx2"))) void pairs(unsigned char* keys, std::uint64_t size, std::uint64_t delta,
                                           std::uint64_t orient, int s) {
  constexpr int bytes = T == DType::Int64 || T == DType::UInt64 || T == DType::Float64 ? 8 : 4;
  constexpr int lanes = 32 / bytes, lane_bits = bytes == 4 ? 3 : 2;
  const int high = 63 - std::countl_zero(delta);
  const unsigned low = static_cast<unsigned>(delta & (lanes - 1));
  const __m256i perm = xor_lanes(low, bytes / 4);
  auto at = [&](std::uint64_t i) { return reinterpret_cast<__m256i*>(keys + i * bytes); };
  if (high >= lane_bits) {
    // Block i (a multiple of `lanes`, bit `high` clear) against block i ^ (δ with its lane bits cleared); lane j
    // of the first takes the min where parity(orient & j) = s ^ parity(orient & i).
    const __m256i take_min[2] = {lane_mask(lanes, [&](int j) { return parity(orient & j) == s; }),
                                 lane_mask(lanes, [&](int j) { return parity(orient & j) == (s ^ 1); })};
    const std::uint64_t below = (std::uint64_t{1} << high) - 1, far = delta & ~std::uint64_t(lanes - 1);
    for (std::uint64_t h = 0; h < size / 2; h += lanes) {
      const std::uint64_t i = (h & below) | ((h & ~below) << 1);
      const __m256i a = _mm256_loadu_si256(at(i));
      __m256i b = _mm256_loadu_si256(at(i ^ far));
      if (low) b = _mm256_permutevar8x32_epi32(b, perm);  // lane j: the partner of key i + j
      __m256i mn, mx;
      min_max<T>(a, b, mn, mx);
      const __m256i m = take_min[parity(orient & i)];
      __m256i nb = _mm256_blendv_epi8(mn, mx, m);
      if (low) nb = _mm256_permutevar8x32_epi32(nb, perm);
      _mm256_storeu_si256(at(i), _mm256_blendv_epi8(mx, mn, m));
      _mm256_storeu_si256(at(i ^ far), nb);
    }
    return;
  }
  // δ inside one vector: lane j is the pair's first member a when its bit `high` is clear, else its second b
  // (partner j ^ δ). The compare needs (a, b) in that order lane by lane (unordered floats keep a), so the
  // vector and its permutation are sorted into A and B first; lane j keeps the min where `first` takes the min
  // and is j, or takes the max and is j's partner.
  const __m256i second = lane_mask(lanes, [&](int j) { return (j >> high) & 1; });
  auto keeps_min = [&](int b, int j) {
    const int first = (j >> high) & 1 ? j ^ static_cast<int>(delta) : j;
    const bool first_min = parity(orient & static_cast<std::uint64_t>(first)) == (s ^ b);
    return (j >> high) & 1 ? !first_min : first_min;
  };
  const __m256i pick_min[2] = {lane_mask(lanes, [&](int j) { return keeps_min(0, j); }),
                               lane_mask(lanes, [&](int j) { return keeps_min(1, j); })};
  for (std::uint64_t i = 0; i < size; i += lanes) {
    const __m256i v = _mm256_loadu_si256(at(i)), w = _mm256_permutevar8x32_epi32(v, perm);
    __m256i mn, mx;
    if constexpr (T == DType::Int32 || T == DType::UInt32)
      min_max<T>(v, w, mn, mx);  // min and max do not care which member is which
    else
      min_max<T>(_mm256_blendv_epi8(v, w, second), _mm256_blendv_epi8(w, v, second), mn, mx);
    _mm256_storeu_si256(at(i), _mm256_blendv_epi8(mx, mn, pick_min[parity(orient & i)]));
  }
}

}  // namespace

bool compare_swap_pairs_avx2(void* keys, DType t, std::uint64_t size, std::uint64_t delta, std::uint64_t orient, int s) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (!avx2 || size * static_cast<std::uint64_t>(dtype_bytes(t)) < 32) return false;
  auto* k = static_cast<unsigned char*>(keys);
  switch (t) {
    case DType::Int32: pairs<DType::Int32>(k, size, delta, orient, s); break;
    case DType::UInt32: pairs<DType::UInt32>(k, size, delta, orient, s); break;
    case DType::Float32: pairs<DType::Float32>(k, size, delta, orient, s); break;
    case DType::Int64: pairs<DType::Int64>(k, size, delta, orient, s); break;
    case DType::UInt64: pairs<DType::UInt64>(k, size, delta, orient, s); break;
    case DType::Float64: pairs<DType::Float64>(k, size, delta, orient, s); break;
  }
  return true;
}

}  // namespace bmmc

#else  // not x86: no AVX2, the scalar loop runs

namespace bmmc {
bool compare_swap_pairs_avx2(void*, DType, std::uint64_t, std::uint64_t, std::uint64_t, int) { return false; }
}  // namespace bmmc

#endif
