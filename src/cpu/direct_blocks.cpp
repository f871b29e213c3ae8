// The direct loops (see direct_blocks.hpp): blend and lane-permuting register-transpose groups straight from
// input to output, or in place on pairs of groups (the walk: direct_walk.cpp; the groups' probe for
// benchmarks: direct_probe.cpp). Kernels are templated on the
// element size and on which lane permutations are needed, so that a bit-reverse group is 16 half-vector
// loads, 16 unpacks and 8 stores with nothing else in the loop. The tables and the choice between the loops
// are built in direct_tables.cpp, the blend tables in blend_tables.cpp.
#include "direct_blocks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "avx2_transpose.hpp"
#include "avx512_network.hpp"
#include "vbmi_network.hpp"
#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/subspace.hpp"

namespace bmmc::cpu_detail {

namespace {

#if BMMC_CPU_DIRECT_AVX2

// Every group loop below runs the groups it owns (walk.owns(): always without Pairs) as: the group's loads and
// network into registers, then its stores; a group with a partner (walk.paired(); out == in) also loads the
// partner's input — this group's output, still unwritten — and runs its network before either is stored
// (pair_avx2 and its like).
template <int EB>
using Word = std::conditional_t<EB == 4, std::int32_t, std::int64_t>;

// One group of the lane-permuting AVX2 loop: loads, lane permutations, exchanges into r, ready to store.
template <int EB, int Swaps, bool Pre, bool Post>
__attribute__((target("avx2"), always_inline)) inline void group_avx2(const Word<EB>* in, std::uint32_t a,
                                                                      [[maybe_unused]] std::uint32_t mu,
                                                                      const std::uint32_t* kpos, const __m256i* pre,
                                                                      const __m256i* post, __m256i* r) {
  constexpr int W = EB == 4 ? 3 : 2, V = 1 << W;
  constexpr int Scale = EB / 4;  // 32-bit lanes per element
#pragma GCC unroll 8
  for (int k = 0; k < V; ++k) {
    r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + (a ^ kpos[k])));
    if constexpr (Pre) r[k] = _mm256_permutevar8x32_epi32(r[k], pre[k]);
  }
  if constexpr (EB == 4 && Swaps == 3) {
    transpose8(r);
  } else {
    if constexpr (Swaps >= 1) swap_halves<V>(r);
    if constexpr (Swaps >= 2) swap_quads<V>(r);
  }
  if constexpr (Post) {
    const __m256i m = _mm256_set1_epi32(static_cast<int>(mu * Scale));
#pragma GCC unroll 8
    for (int l = 0; l < V; ++l) r[l] = _mm256_permutevar8x32_epi32(r[l], _mm256_xor_si256(post[l], m));
  }
}

// The stores of an AVX2 group (lane-permuting or blend): register l to output vector vec ⊕ qvec[l].
template <int EB>
__attribute__((target("avx2"), always_inline)) inline void store_avx2(Word<EB>* out, std::uint32_t vec,
                                                                      const std::uint32_t* qvec, const __m256i* r) {
  constexpr int W = EB == 4 ? 3 : 2, V = 1 << W;
#pragma GCC unroll 8
  for (int l = 0; l < V; ++l)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (std::size_t{vec ^ qvec[l]} << W)), r[l]);
}

// A group and its partner (in place): both loaded and through the network before either is stored. Out of
// line, so that the registers of the loop's usual path (one group) are not allocated around two groups (a
// group that is its own partner ran 1.5x slower in place than out of place with the pair inline).
template <int EB, int Swaps, bool Pre, bool Post>
__attribute__((target("avx2"), noinline)) void pair_avx2(Word<EB>* data, const std::uint32_t* kpos,
                                                         const std::uint32_t* qvec, const __m256i* pre,
                                                         const __m256i* post, std::uint32_t a, std::uint32_t mu,
                                                         std::uint32_t vec, std::uint32_t pa, std::uint32_t pmu,
                                                         std::uint32_t pvec) {
  constexpr int V = EB == 4 ? 8 : 4;
  __m256i r[V], q[V];
  group_avx2<EB, Swaps, Pre, Post>(data, a, mu, kpos, pre, post, r);
  group_avx2<EB, Swaps, Pre, Post>(data, pa, pmu, kpos, pre, post, q);
  store_avx2<EB>(data, pvec, qvec, q);
  store_avx2<EB>(data, vec, qvec, r);
}

// Groups [begin, end) in Gray-code order of the group index: one column XOR per step.
template <int EB, int Swaps, bool Pre, bool Post, bool Pairs>
__attribute__((target("avx2"))) void groups_avx2(const DirectTables& d, const unsigned char* in_raw,
                                                 unsigned char* out_raw, std::uint64_t begin, std::uint64_t end) {
  constexpr int W = EB == 4 ? 3 : 2, V = 1 << W;
  const auto* in = reinterpret_cast<const Word<EB>*>(in_raw);
  auto* out = reinterpret_cast<Word<EB>*>(out_raw);
  const TransposeTables& x = *d.groups;
  __m256i pre[V], post[V];
  std::uint32_t kpos[V], qvec[V];
  for (int v = 0; v < V; ++v) {
    pre[v] = lane_index<EB>(x.pre[v]), post[v] = lane_index<EB>(x.post[v]);
    kpos[v] = x.kpos[v], qvec[v] = x.qvec[v];
  }
  GroupWalk<Post, Pairs> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    if (!walk.owns()) continue;
    if (walk.paired()) {
      pair_avx2<EB, Swaps, Pre, Post>(out, kpos, qvec, pre, post, walk.a, walk.mu, walk.vec, walk.pa, walk.pmu,
                                      walk.pvec);
      continue;
    }
    __m256i r[V];
    group_avx2<EB, Swaps, Pre, Post>(in, walk.a, walk.mu, kpos, pre, post, r);
    store_avx2<EB>(out, walk.vec, qvec, r);
  }
}

// Exchanges the lanes in Mask between registers s and s ⊕ Col (one vpblendd each way per pair).
template <int V, int Col, int Mask>
__attribute__((target("avx2"), always_inline)) inline void exchange(__m256i r[V]) {
  constexpr int top = 1 << (31 - __builtin_clz(static_cast<unsigned>(Col)));
#pragma GCC unroll 8
  for (int s = 0; s < V; ++s) {
    if (s & top) continue;
    const __m256i a = r[s], b = r[s ^ Col];
    r[s] = _mm256_blend_epi32(a, b, Mask);
    r[s ^ Col] = _mm256_blend_epi32(b, a, Mask);
  }
}

// One U stage (lane bit q, Mask = its lanes): the column is known only at run time, so a switch picks the
// unrolled exchange; the branch is the same for every group and predicted.
template <int V, int Mask>
__attribute__((target("avx2"), always_inline)) inline void stage(__m256i r[V], std::uint32_t col) {
  switch (col) {
    case 1: return exchange<V, 1, Mask>(r);
    case 2: return exchange<V, 2, Mask>(r);
    case 3: return exchange<V, 3, Mask>(r);
  }
  if constexpr (V == 8) {
    switch (col) {
      case 4: return exchange<V, 4, Mask>(r);
      case 5: return exchange<V, 5, Mask>(r);
      case 6: return exchange<V, 6, Mask>(r);
      case 7: return exchange<V, 7, Mask>(r);
    }
  }
}

// vector ⊕= B·lane for B's columns cols[0..W-1] (one stage per lane bit with a non-zero column).
template <int EB>
__attribute__((target("avx2"), always_inline)) inline void stages(__m256i* r, const std::uint32_t* cols) {
  if constexpr (EB == 4) {
    if (cols[0]) stage<8, 0xAA>(r, cols[0]);
    if (cols[1]) stage<8, 0xCC>(r, cols[1]);
    if (cols[2]) stage<8, 0xF0>(r, cols[2]);
  } else {
    if (cols[0]) stage<4, 0xCC>(r, cols[0]);
    if (cols[1]) stage<4, 0xF0>(r, cols[1]);
  }
}

// The 8×8 transpose without its last stage (the 128-bit half exchange), for registers whose halves were
// exchanged by the loads: transpose8(r) = transpose8_after_halves(halves exchanged of r).
__attribute__((target("avx2"), always_inline)) inline void transpose8_after_halves(__m256i r[8]) {
  const __m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
  const __m256i t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
  const __m256i t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
  const __m256i t6 = _mm256_unpacklo_epi32(r[6], r[7]), t7 = _mm256_unpackhi_epi32(r[6], r[7]);
  r[0] = _mm256_unpacklo_epi64(t0, t2), r[1] = _mm256_unpackhi_epi64(t0, t2);
  r[2] = _mm256_unpacklo_epi64(t1, t3), r[3] = _mm256_unpackhi_epi64(t1, t3);
  r[4] = _mm256_unpacklo_epi64(t4, t6), r[5] = _mm256_unpackhi_epi64(t4, t6);
  r[6] = _mm256_unpacklo_epi64(t5, t7), r[7] = _mm256_unpackhi_epi64(t5, t7);
}

// One group of the blend transposes into r, ready to store: loads (lane XOR E·k ⊕ μ per register with Pre; the
// half exchange by the loads with LoadSwap), the U_b stages, the transpose, the U_a stages.
template <int EB, bool LoadSwap, bool Pre, bool Mu>
__attribute__((target("avx2"), always_inline)) inline void group_blend(const DirectTables& d, const Word<EB>* in,
                                                                       std::uint32_t a,
                                                                       [[maybe_unused]] std::uint32_t mu,
                                                                       const std::uint32_t* kpos, const __m256i* pre,
                                                                       const std::uint32_t* ub,
                                                                       const std::uint32_t* ua, __m256i* r) {
  constexpr int W = EB == 4 ? 3 : 2, V = 1 << W, H = V / 2;
  constexpr int Scale = EB / 4;  // 32-bit lanes per element
  if constexpr (LoadSwap && !Pre) {  // the half exchange by the loads
#pragma GCC unroll 4
    for (int k = 0; k < H; ++k) {
      const auto* lo = reinterpret_cast<const __m128i*>(in + (a ^ kpos[k]));
      const auto* hi = reinterpret_cast<const __m128i*>(in + (a ^ kpos[k + H]));
      r[k] = _mm256_loadu2_m128i(hi, lo);
      r[k + H] = _mm256_loadu2_m128i(hi + 1, lo + 1);
    }
    stages<EB>(r, ub);
    if constexpr (EB == 4)
      transpose8_after_halves(r);
    else
      swap_quads<V>(r);
  } else {  // with Pre: lane XOR E·k ⊕ μ per register (vpermd), and no load swap
    [[maybe_unused]] const __m256i m = _mm256_set1_epi32(static_cast<int>(mu * Scale));
#pragma GCC unroll 8
    for (int k = 0; k < V; ++k) {
      r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + (a ^ kpos[k])));
      // Without μ only the registers with E·k ≠ 0 move (a branch that is the same for every group).
      if constexpr (Pre)
        if (Mu || d.pre_xor[k] != 0) r[k] = _mm256_permutevar8x32_epi32(r[k], _mm256_xor_si256(pre[k], m));
    }
    stages<EB>(r, ub);
    if constexpr (EB == 4) {
      transpose8(r);
    } else {
      swap_halves<V>(r);
      swap_quads<V>(r);
    }
  }
  stages<EB>(r, ua);
}

// A blend group and its partner (in place), out of line as pair_avx2.
template <int EB, bool LoadSwap, bool Pre, bool Mu>
__attribute__((target("avx2"), noinline)) void pair_blend(const DirectTables& d, Word<EB>* data,
                                                          const std::uint32_t* kpos, const std::uint32_t* qvec,
                                                          const __m256i* pre, const std::uint32_t* ub,
                                                          const std::uint32_t* ua, std::uint32_t a, std::uint32_t mu,
                                                          std::uint32_t vec, std::uint32_t pa, std::uint32_t pmu,
                                                          std::uint32_t pvec) {
  constexpr int V = EB == 4 ? 8 : 4;
  __m256i r[V], q[V];
  group_blend<EB, LoadSwap, Pre, Mu>(d, data, a, mu, kpos, pre, ub, ua, r);
  group_blend<EB, LoadSwap, Pre, Mu>(d, data, pa, pmu, kpos, pre, ub, ua, q);
  store_avx2<EB>(data, pvec, qvec, q);
  store_avx2<EB>(data, vec, qvec, r);
}

// Groups [begin, end) of the blend transposes (DirectTables::blend), Gray-code order.
template <int EB, bool LoadSwap, bool Pre, bool Mu, bool Pairs>
__attribute__((target("avx2"))) void groups_blend(const DirectTables& d, const unsigned char* in_raw,
                                                  unsigned char* out_raw, std::uint64_t begin, std::uint64_t end) {
  constexpr int W = EB == 4 ? 3 : 2, V = 1 << W;
  const auto* in = reinterpret_cast<const Word<EB>*>(in_raw);
  auto* out = reinterpret_cast<Word<EB>*>(out_raw);
  constexpr int Scale = EB / 4;  // 32-bit lanes per element
  std::uint32_t kpos[V], qvec[V], ub[W], ua[W];
  __m256i pre[V];
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int v = 0; v < V; ++v) {
    kpos[v] = d.kpos[v], qvec[v] = d.qvec[v];
    pre[v] = _mm256_xor_si256(iota, _mm256_set1_epi32(static_cast<int>(d.pre_xor[v] * Scale)));
  }
  for (int q = 0; q < W; ++q) ub[q] = d.ub[q], ua[q] = d.ua[q];
  GroupWalk<Mu, Pairs> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    if (!walk.owns()) continue;
    if (walk.paired()) {
      pair_blend<EB, LoadSwap, Pre, Mu>(d, out, kpos, qvec, pre, ub, ua, walk.a, walk.mu, walk.vec, walk.pa,
                                        walk.pmu, walk.pvec);
      continue;
    }
    __m256i r[V];
    group_blend<EB, LoadSwap, Pre, Mu>(d, in, walk.a, walk.mu, kpos, pre, ub, ua, r);
    store_avx2<EB>(out, walk.vec, qvec, r);
  }
}

using GroupLoop = void (*)(const DirectTables&, const unsigned char*, unsigned char*, std::uint64_t, std::uint64_t);

// GCC 12's vpermb and vpermd (512-bit) intrinsics pass an undefined vector as its unused mask source and then warns about it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

template <int EB>
using Byte = std::conditional_t<EB == 1, std::uint8_t, std::uint16_t>;

// One group of the 1- and 2-byte loops (vbmi_network.hpp) into r, ready to store.
template <int EB, int VB, int Swaps, bool Pre, bool Post, class Vec, class Ix>
BMMC_VBMI __attribute__((always_inline)) inline void group_vbmi(const TransposeTables& x, const Ix& ix,
                                                                const Byte<EB>* in, std::uint32_t a,
                                                                [[maybe_unused]] std::uint32_t mu, Vec* r) {
  constexpr int W = std::countr_zero(static_cast<unsigned>(VB / EB)), V = 1 << W;
  // The lane permutations ride on the first and last exchanges where there are two of them (one for post).
  constexpr bool FoldPre = Pre && Swaps >= 2, FoldPost = Post && Swaps >= 1;
#pragma GCC unroll 32
  for (int k = 0; k < V; ++k) {
    loadu(r[k], in + (a ^ x.kpos[k]));
    if constexpr (Pre && !FoldPre) r[k] = permute(load_index(ix.pre[k]), r[k]);
  }
  Vec mlast, m;
  splat(mlast, static_cast<char>(FoldPost ? last_mu_index(W, Swaps, mu, VB, EB) : 0));
  splat(m, static_cast<char>(mu * EB));
  exchange_lane_bits<W, Swaps, FoldPre, FoldPost>(r, ix, mlast);
  if constexpr (Post && !FoldPost) {
#pragma GCC unroll 32
    for (int l = 0; l < V; ++l) r[l] = permute(vxor(load_index(ix.post[l]), m), r[l]);
  }
}

template <int EB, int VB, class Vec>
BMMC_VBMI __attribute__((always_inline)) inline void store_vbmi(const TransposeTables& x, Byte<EB>* out,
                                                                std::uint32_t vec, const Vec* r) {
  constexpr int W = std::countr_zero(static_cast<unsigned>(VB / EB)), V = 1 << W;
#pragma GCC unroll 32
  for (int l = 0; l < V; ++l) storeu(out + (std::size_t{vec ^ x.qvec[l]} << W), r[l]);
}

// A byte group and its partner (in place), out of line as pair_avx2.
template <int EB, int VB, int Swaps, bool Pre, bool Post, class Ix>
BMMC_VBMI __attribute__((noinline)) void pair_vbmi(const TransposeTables& x, const Ix& ix, Byte<EB>* data,
                                                   std::uint32_t a, std::uint32_t mu, std::uint32_t vec,
                                                   std::uint32_t pa, std::uint32_t pmu, std::uint32_t pvec) {
  using Vec = typename ByteVector<VB>::type;
  constexpr int V = 1 << std::countr_zero(static_cast<unsigned>(VB / EB));
  Vec r[V], q[V];
  group_vbmi<EB, VB, Swaps, Pre, Post>(x, ix, data, a, mu, r);
  group_vbmi<EB, VB, Swaps, Pre, Post>(x, ix, data, pa, pmu, q);
  store_vbmi<EB, VB>(x, data, pvec, q);
  store_vbmi<EB, VB>(x, data, vec, r);
}

// 1- and 2-byte groups (AVX-512 VBMI, vbmi_network.hpp): groups_avx2 with 32 or 16 lanes per 32-byte vector
// (VB = 32), or 2-byte elements with 32 lanes per 64-byte vector (VB = 64: whole lines), byte permutes for the
// lane permutations and the exchanges. [begin, end) in Gray-code order of the group index.
template <int EB, int VB, int Swaps, bool Pre, bool Post, bool Pairs>
BMMC_VBMI void groups_vbmi(const DirectTables& d, const unsigned char* in_raw, unsigned char* out_raw,
                           std::uint64_t begin, std::uint64_t end) {
  using Vec = typename ByteVector<VB>::type;
  constexpr int W = std::countr_zero(static_cast<unsigned>(VB / EB)), V = 1 << W;
  const auto* in = reinterpret_cast<const Byte<EB>*>(in_raw);
  auto* out = reinterpret_cast<Byte<EB>*>(out_raw);
  const TransposeTables& x = *d.groups;
  const auto& ix = [&x]() -> const auto& {
    if constexpr (VB == 64)
      return *x.wide_bytes;
    else
      return *x.bytes;
  }();
  GroupWalk<Post, Pairs> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    if (!walk.owns()) continue;
    if (walk.paired()) {
      pair_vbmi<EB, VB, Swaps, Pre, Post>(x, ix, out, walk.a, walk.mu, walk.vec, walk.pa, walk.pmu, walk.pvec);
      continue;
    }
    Vec r[V];
    group_vbmi<EB, VB, Swaps, Pre, Post>(x, ix, in, walk.a, walk.mu, r);
    store_vbmi<EB, VB>(x, out, walk.vec, r);
  }
}

// One group of the 4- and 8-byte groups of whole lines (avx512_network.hpp) into r, ready to store.
template <int EB, int Swaps, bool Pre, bool Post>
BMMC_AVX512 __attribute__((always_inline)) inline void group_avx512(const TransposeTables& x, const WordIndices& ix,
                                                                    const Word<EB>* in, std::uint32_t a,
                                                                    [[maybe_unused]] std::uint32_t mu, __m512i* r) {
  constexpr int W = EB == 4 ? 4 : 3, V = 1 << W;
  constexpr int Scale = EB / 4;  // 32-bit words per element
  // The lane permutations ride on the first and last exchanges where there are two of them (one for post).
  constexpr bool FoldPre = Pre && Swaps >= 2, FoldPost = Post && Swaps >= 1;
#pragma GCC unroll 16
  for (int k = 0; k < V; ++k) {
    r[k] = _mm512_loadu_si512(in + (a ^ x.kpos[k]));
    if constexpr (Pre && !FoldPre) r[k] = _mm512_permutexvar_epi32(load_words(ix.pre[k]), r[k]);
  }
  [[maybe_unused]] const __m512i mlast =
      _mm512_set1_epi32(static_cast<int>(FoldPost ? last_mu_index(W, Swaps, mu, 16, Scale) : 0));
  exchange_lane_bits_512<W, Swaps, FoldPre, FoldPost>(r, ix, mlast);
  if constexpr (Post && !FoldPost) {
    const __m512i m = _mm512_set1_epi32(static_cast<int>(mu * Scale));
#pragma GCC unroll 16
    for (int l = 0; l < V; ++l) r[l] = _mm512_permutexvar_epi32(_mm512_xor_si512(load_words(ix.post[l]), m), r[l]);
  }
}

template <int EB>
BMMC_AVX512 __attribute__((always_inline)) inline void store_avx512(const TransposeTables& x, Word<EB>* out,
                                                                    std::uint32_t vec, const __m512i* r) {
  constexpr int W = EB == 4 ? 4 : 3, V = 1 << W;
#pragma GCC unroll 16
  for (int l = 0; l < V; ++l) _mm512_storeu_si512(out + (std::size_t{vec ^ x.qvec[l]} << W), r[l]);
}

// A group of whole lines and its partner (in place), out of line as pair_avx2.
template <int EB, int Swaps, bool Pre, bool Post>
BMMC_AVX512 __attribute__((noinline)) void pair_avx512(const TransposeTables& x, const WordIndices& ix,
                                                       Word<EB>* data, std::uint32_t a, std::uint32_t mu,
                                                       std::uint32_t vec, std::uint32_t pa, std::uint32_t pmu,
                                                       std::uint32_t pvec) {
  constexpr int V = EB == 4 ? 16 : 8;
  __m512i r[V], q[V];
  group_avx512<EB, Swaps, Pre, Post>(x, ix, data, a, mu, r);
  group_avx512<EB, Swaps, Pre, Post>(x, ix, data, pa, pmu, q);
  store_avx512<EB>(x, data, pvec, q);
  store_avx512<EB>(x, data, vec, r);
}

// 4- and 8-byte groups of whole 64-byte lines (AVX-512, avx512_network.hpp): groups_avx2 with 16 (8) lanes
// per vector and 2^W = 16 (8) vectors a group. [begin, end) in Gray-code order of the group index.
template <int EB, int Swaps, bool Pre, bool Post, bool Pairs>
BMMC_AVX512 void groups_avx512(const DirectTables& d, const unsigned char* in_raw, unsigned char* out_raw,
                               std::uint64_t begin, std::uint64_t end) {
  constexpr int V = EB == 4 ? 16 : 8;
  const auto* in = reinterpret_cast<const Word<EB>*>(in_raw);
  auto* out = reinterpret_cast<Word<EB>*>(out_raw);
  const TransposeTables& x = *d.groups;
  const WordIndices& ix = *x.words;
  GroupWalk<Post, Pairs> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    if (!walk.owns()) continue;
    if (walk.paired()) {
      pair_avx512<EB, Swaps, Pre, Post>(x, ix, out, walk.a, walk.mu, walk.vec, walk.pa, walk.pmu, walk.pvec);
      continue;
    }
    __m512i r[V];
    group_avx512<EB, Swaps, Pre, Post>(x, ix, in, walk.a, walk.mu, r);
    store_avx512<EB>(x, out, walk.vec, r);
  }
}

#pragma GCC diagnostic pop

// The lane-permuting group loop for (element size, vector bytes, exchanged lane bits, pre, post, in place): AVX2
// or AVX-512 for 4/8 bytes, VBMI for 1/2 bytes.
template <int EB, int VB, int Swaps, bool Pre, bool Post, bool Pairs>
GroupLoop group_loop() {
  if constexpr (EB >= 4 && VB == 64)
    return &groups_avx512<EB, Swaps, Pre, Post, Pairs>;
  else if constexpr (EB >= 4)
    return &groups_avx2<EB, Swaps, Pre, Post, Pairs>;
  else
    return &groups_vbmi<EB, VB, Swaps, Pre, Post, Pairs>;
}

template <int EB, int VB, int Swaps, bool Pairs>
GroupLoop pick_lanes(bool pre, bool post) {
  if (pre)
    return post ? group_loop<EB, VB, Swaps, true, true, Pairs>() : group_loop<EB, VB, Swaps, true, false, Pairs>();
  return post ? group_loop<EB, VB, Swaps, false, true, Pairs>() : group_loop<EB, VB, Swaps, false, false, Pairs>();
}

template <int EB, int VB, bool Pairs, int... Swaps>
GroupLoop pick_swaps(int swaps, bool pre, bool post, std::integer_sequence<int, Swaps...>) {
  GroupLoop loop = nullptr;
  ((swaps == Swaps ? (loop = pick_lanes<EB, VB, Swaps, Pairs>(pre, post), 0) : 0), ...);
  return loop;
}

// The loop of group tables t, in place with Pairs.
template <bool Pairs>
GroupLoop pick_group_loop(const DirectTables& t) {
  if (t.blend) {
    auto loop = [&]<int EB>() -> GroupLoop {
      if (t.mu) return &groups_blend<EB, false, true, true, Pairs>;
      if (t.pre) return &groups_blend<EB, false, true, false, Pairs>;
      if (t.load_swap) return &groups_blend<EB, true, false, false, Pairs>;
      return &groups_blend<EB, false, false, false, Pairs>;
    };
    return t.elem_bytes == 4 ? loop.template operator()<4>() : loop.template operator()<8>();
  }
  const int r = t.groups->swaps;
  const bool wide = t.groups->vector_bytes == 64;
  const GroupLoop loop =
      t.elem_bytes == 2 && wide ? pick_swaps<2, 64, Pairs>(r, t.pre, t.post, std::make_integer_sequence<int, 6>{})
      : t.elem_bytes == 4 && wide ? pick_swaps<4, 64, Pairs>(r, t.pre, t.post, std::make_integer_sequence<int, 5>{})
      : t.elem_bytes == 8 && wide ? pick_swaps<8, 64, Pairs>(r, t.pre, t.post, std::make_integer_sequence<int, 4>{})
      : t.elem_bytes == 4 ? pick_swaps<4, 32, Pairs>(r, t.pre, t.post, std::make_integer_sequence<int, 4>{})
      : t.elem_bytes == 8 ? pick_swaps<8, 32, Pairs>(r, t.pre, t.post, std::make_integer_sequence<int, 3>{})
      : t.elem_bytes == 2 ? pick_swaps<2, 32, Pairs>(r, t.pre, t.post, std::make_integer_sequence<int, 5>{})
                          : pick_swaps<1, 32, Pairs>(r, t.pre, t.post, std::make_integer_sequence<int, 6>{});
  if (loop == nullptr) throw std::logic_error("run_direct: no loop for these group tables");
  return loop;
}
#endif

}  // namespace

std::uint64_t direct_units(const DirectTables& t) {
  if (t.blend) return std::uint64_t{1} << (t.n - 2 * (t.elem_bytes == 4 ? 3 : 2));
  if (t.groups) return std::uint64_t{1} << (t.n - 2 * t.groups->lane_bits);
  return std::uint64_t{1} << t.walk_ycols.size();
}

void run_direct(const DirectTables& t, const unsigned char* in, unsigned char* out, std::uint64_t begin,
                std::uint64_t end) {
#if BMMC_CPU_DIRECT_AVX2
  if (t.blend || t.groups) return pick_group_loop<false>(t)(t, in, out, begin, end);
#endif
  return run_walk(t, in, out, begin, end, false);
}

void run_direct_pairs(const DirectTables& t, unsigned char* data, std::uint64_t begin, std::uint64_t end) {
  if (!t.pairs) throw std::logic_error("run_direct_pairs: the tables have no pairs (make_direct_pairs)");
#if BMMC_CPU_DIRECT_AVX2
  if (t.blend || t.groups) return pick_group_loop<true>(t)(t, data, data, begin, end);
#endif
  return run_walk(t, data, data, begin, end, true);
}

std::string direct_kernel_name(const DirectTables& t) {
  if (t.blend) return "direct-blend-avx2";
  if (t.groups)
    return t.elem_bytes <= 2                ? (t.groups->vector_bytes == 64 ? "direct-transpose-avx512vbmi-64"
                                                                          : "direct-transpose-avx512vbmi")
           : t.groups->vector_bytes == 64 ? "direct-transpose-avx512"
                                          : "direct-transpose-avx2";
  return "direct-walk";
}

}  // namespace bmmc::cpu_detail
