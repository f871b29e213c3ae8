// The register-transpose block loop (see transpose_blocks.hpp for the algebra).
#include "transpose_blocks.hpp"

#include <stdexcept>

#include "bmmc/core/subspace.hpp"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define BMMC_CPU_TRANSPOSE_AVX2 1
#endif

namespace bmmc::cpu_detail {

namespace {

// True when the vectors are linearly independent (coordinates() refuses dependent bases).
bool independent(const std::vector<BitVec>& v) {
  try {
    (void)coordinates(v, 0);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace

std::optional<TransposeTables> make_transpose_tables(const TileTables& t, int elem_bytes) {
  const int bits = t.s + t.m;
  if (elem_bytes != 4 || t.s != 5 || bits < 6 || bits > 24) return std::nullopt;
  // K0: natural index → coordinates in the basis (c_0..c_4, g_0..g_{m-1}).
  std::vector<BitVec> basis;
  for (int i = 0; i < 5; ++i) basis.push_back(t.ntau[std::size_t{1} << i]);
  for (int i = 0; i < t.m; ++i) basis.push_back(t.nsig[std::size_t{1} << i]);
  if (!independent(basis)) return std::nullopt;
  std::vector<std::uint32_t> k0col(bits);
  for (int b = 0; b < bits; ++b) {
    const std::optional<BitVec> c = coordinates(basis, BitVec{1} << b);
    if (!c) return std::nullopt;
    k0col[b] = static_cast<std::uint32_t>(*c);
  }
  auto k0 = [&](std::uint32_t p) {
    std::uint32_t r = 0;
    for (; p != 0; p &= p - 1) r ^= k0col[__builtin_ctz(p)];
    return r;
  };
  // X = (c_0, c_1, c_2) without their lane-within-vector bits; independent iff Q is invertible.
  std::vector<BitVec> span;
  for (int i = 0; i < 3; ++i) span.push_back(basis[i] & ~BitVec{7});
  if (!independent(span)) return std::nullopt;
  TransposeTables x;
  for (std::uint32_t k = 0; k < 8; ++k)
    for (int i = 0; i < 3; ++i)
      if ((k >> i) & 1) x.kpos[k] ^= static_cast<std::uint32_t>(span[i]);
  // Group representatives: unit vectors e_3.. completing X to the aligned indices.
  std::vector<std::uint32_t> rep_cols;
  for (int b = 3; b < bits; ++b) {
    span.push_back(BitVec{1} << b);
    if (independent(span))
      rep_cols.push_back(std::uint32_t{1} << b);
    else
      span.pop_back();
  }
  if (static_cast<int>(rep_cols.size()) != bits - 6) return std::nullopt;
  std::array<std::uint32_t, 8> P{}, R{}, Q{}, S{}, B{}, D{}, Dinv{};
  for (std::uint32_t v = 0; v < 8; ++v) {
    P[v] = k0(x.kpos[v]) >> 3;
    R[v] = k0(x.kpos[v]) & 7;
    Q[v] = k0(v) >> 3;
    S[v] = k0(v) & 7;
  }
  for (std::uint32_t k = 0; k < 8; ++k) {  // B·k = Q⁻¹·P·k
    std::uint32_t hits = 0;
    for (std::uint32_t l = 0; l < 8; ++l)
      if (Q[l] == P[k]) B[k] = l, ++hits;
    if (hits != 1) return std::nullopt;
  }
  std::uint32_t seen = 0;
  for (std::uint32_t k = 0; k < 8; ++k) {
    D[k] = R[k] ^ S[B[k]];
    Dinv[D[k]] = k;
    seen |= 1u << D[k];
  }
  if (seen != 0xff) return std::nullopt;
  for (std::uint32_t v = 0; v < 8; ++v) {
    x.qvec[v] = Q[v];
    for (std::uint32_t j = 0; j < 8; ++j) {
      x.pre[v][j] = static_cast<std::int32_t>(j ^ B[v]);
      x.post[v][j] = static_cast<std::int32_t>(Dinv[j ^ S[v]]);
    }
  }
  std::vector<std::uint32_t> vec_cols, mu_cols;
  for (std::uint32_t e : rep_cols) {
    vec_cols.push_back(k0(e) >> 3);
    mu_cols.push_back(Dinv[k0(e) & 7]);
  }
  x.rep_nat = xor_table(rep_cols);
  x.rep_vec = xor_table(vec_cols);
  x.rep_mu = xor_table(mu_cols);
  // Every tile element must land where phase 2 expects it: tile[K0(p)] = natural element p.
  for (std::size_t g = 0; g < x.rep_nat.size(); ++g)
    for (std::uint32_t l2 = 0; l2 < 8; ++l2)
      for (std::uint32_t j = 0; j < 8; ++j) {
        const std::uint32_t k = static_cast<std::uint32_t>(x.post[l2][j]) ^ x.rep_mu[g];
        const std::uint32_t l = static_cast<std::uint32_t>(x.pre[k][l2]);
        const std::uint32_t p = x.rep_nat[g] ^ x.kpos[k] ^ l;
        if (k0(p) != (((x.rep_vec[g] ^ x.qvec[l2]) << 3) | j)) return std::nullopt;
      }
  return x;
}

#if BMMC_CPU_TRANSPOSE_AVX2

bool transpose_blocks_supported() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

namespace {

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

template <bool Stream>
__attribute__((target("avx2"))) void blocks(const TileTables& t, const TransposeTables& x, const unsigned char* in_raw,
                                            unsigned char* out_raw, std::uint64_t begin, std::uint64_t end,
                                            unsigned char* tile_raw) {
  const auto* in = reinterpret_cast<const std::int32_t*>(in_raw);
  auto* out = reinterpret_cast<std::int32_t*>(out_raw);
  auto* tile = reinterpret_cast<std::int32_t*>(tile_raw);
  const std::uint64_t rows = std::uint64_t{1} << t.m;
  const std::size_t groups = x.rep_nat.size();
  const BitVec* rtab = t.rtab.data();
  const BitVec* utab = t.utab.data();
  __m256i pre[8], post[8];
  for (int v = 0; v < 8; ++v) {
    pre[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.pre[v].data()));
    post[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.post[v].data()));
  }
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  BitVec x0 = t.x0(begin);
  for (std::uint64_t b = begin; b < end; ++b) {
    const BitVec z = t.z(b);
    const BitVec y0 = z & ~BitVec{31};
    const std::uint32_t dhi = (z >> 3) & 3, dlo = z & 7;
    const bool has_next = b + 1 < end;
    const BitVec next_x0 = has_next ? t.x0(b + 1) : 0;
    // Phase 1: groups of 8 input vectors (already in L2: prefetched during the previous block's phase 2).
    for (std::size_t g = 0; g < groups; ++g) {
      const std::uint32_t a = x.rep_nat[g];
      __m256i r[8];
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const std::uint32_t p = a ^ x.kpos[k];
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + ((x0 ^ rtab[p >> 5]) + (p & 31))));
        r[k] = k == 0 ? v : _mm256_permutevar8x32_epi32(v, pre[k]);
      }
      transpose8(r);
      const __m256i mu = _mm256_set1_epi32(static_cast<int>(x.rep_mu[g]));
      const std::uint32_t vec = x.rep_vec[g];
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l)
        _mm256_store_si256(reinterpret_cast<__m256i*>(tile + ((vec ^ x.qvec[l]) << 3)),
                           _mm256_permutevar8x32_epi32(r[l], _mm256_xor_si256(post[l], mu)));
    }
    // Phase 2: output run σ is tile vectors 4σ + (h ⊕ δ_hi), lanes XOR δ_lo; prefetch the next block's row σ
    // into L2 meanwhile (prefetcht2: L1 prefetches of scattered rows stall on the L1 miss buffers).
    const __m256i perm = _mm256_xor_si256(iota, _mm256_set1_epi32(static_cast<int>(dlo)));
    for (std::uint64_t sigma = 0; sigma < rows; ++sigma) {
      if (has_next) {
        const auto* next = reinterpret_cast<const char*>(in + (next_x0 ^ rtab[sigma]));
        _mm_prefetch(next, _MM_HINT_T2);
        _mm_prefetch(next + 64, _MM_HINT_T2);
      }
      auto* dst = reinterpret_cast<__m256i*>(out + (y0 ^ utab[sigma]));
      const std::int32_t* src = tile + (sigma << 5);
#pragma GCC unroll 4
      for (std::uint32_t h = 0; h < 4; ++h) {
        __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + ((h ^ dhi) << 3)));
        if (dlo != 0) v = _mm256_permutevar8x32_epi32(v, perm);
        if constexpr (Stream)
          _mm256_stream_si256(dst + h, v);
        else
          _mm256_storeu_si256(dst + h, v);
      }
    }
    x0 = next_x0;
  }
  if constexpr (Stream) _mm_sfence();
}

}  // namespace

void run_blocks_transpose(const TileTables& t, const TransposeTables& x, bool stream, const unsigned char* in,
                          unsigned char* out, std::uint64_t begin, std::uint64_t end, unsigned char* tile) {
  if (stream)
    blocks<true>(t, x, in, out, begin, end, tile);
  else
    blocks<false>(t, x, in, out, begin, end, tile);
}

#else

bool transpose_blocks_supported() { return false; }

void run_blocks_transpose(const TileTables&, const TransposeTables&, bool, const unsigned char*, unsigned char*,
                          std::uint64_t, std::uint64_t, unsigned char*) {
  throw std::logic_error("run_blocks_transpose: this build has no AVX2 code path");
}

#endif

}  // namespace bmmc::cpu_detail
