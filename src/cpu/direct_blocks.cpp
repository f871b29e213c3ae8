// The direct loops (see direct_blocks.hpp): blend and lane-permuting register-transpose groups straight from
// input to output, and the line-blocked walk; their probe for benchmarks. Kernels are templated on the
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

template <int B>
struct Elem {
  unsigned char b[B];
};

// One block of the walk: output line h of the block at output coset y0 (source x0) gets the sources
// x0 ⊕ xhi[h·2^L] ⊕ xlo[j], stored at y0 ⊕ yhi[h·2^L] in `out`, or at h·2^L of a buffer (ToBuffer).
template <int B, bool ToBuffer>
__attribute__((always_inline)) inline void walk_block(const DirectTables& t, const Elem<B>* in, Elem<B>* out,
                                                      BitVec y0, BitVec x0) {
  constexpr int kLine = walk_line_bits(B);
  const std::uint32_t* xlo = t.walk_in.data();   // A⁻¹·j for the 2^L output offsets j of a line
  const std::uint32_t* yhi = t.walk_out.data();  // the block's line offsets (output) ...
  const std::uint32_t* xhi = t.walk_in.data();   // ... and their sources (the same table, every 2^L-th entry)
  if (t.n < kLine) {  // fewer elements than a line: one block, element by element
    for (std::size_t j = 0; j < t.walk_out.size(); ++j) out[ToBuffer ? j : y0 ^ yhi[j]] = in[x0 ^ xhi[j]];
    return;
  }
  const std::size_t lines = t.walk_out.size() >> kLine;
  for (std::size_t h = 0; h < lines; ++h) {
    // a whole line: the low output bits are the table's first L
    Elem<B>* dst = out + (ToBuffer ? h << kLine : y0 ^ yhi[h << kLine]);
    const BitVec src = x0 ^ xhi[h << kLine];
#pragma GCC unroll 32
    for (int j = 0; j < (1 << kLine); ++j) dst[j] = in[src ^ xlo[j]];
  }
}

// A block gathered by walk_block<B, true> into `buf`, stored to its output coset y0 a line at a time.
template <int B>
__attribute__((always_inline)) inline void walk_unbuffer(const DirectTables& t, const Elem<B>* buf, Elem<B>* out,
                                                         BitVec y0) {
  constexpr int kLine = walk_line_bits(B);
  const std::uint32_t* yhi = t.walk_out.data();
  if (t.n < kLine) {
    for (std::size_t j = 0; j < t.walk_out.size(); ++j) out[y0 ^ yhi[j]] = buf[j];
    return;
  }
  for (std::size_t h = 0; h < t.walk_out.size() >> kLine; ++h)
    std::memcpy(out + (y0 ^ yhi[h << kLine]), buf + (h << kLine), std::size_t{B} << kLine);
}

// Blocks [begin, end) of the walk in Gray-code order of the block index. Pairs (in place, out == in): a block
// whose partner has the smaller Gray index is the partner's to run; else the partner's sources are gathered
// into a buffer first, then the block runs (it reads the partner's output coset and writes the partner's
// sources, now buffered), then the buffer goes to the partner's output coset — the block's own sources.
template <int B, bool Pairs>
void walk(const DirectTables& t, const unsigned char* in_raw, unsigned char* out_raw, std::uint64_t begin,
          std::uint64_t end) {
  using E = Elem<B>;
  constexpr int kLine = walk_line_bits(B);
  const auto* in = reinterpret_cast<const E*>(in_raw);
  auto* out = reinterpret_cast<E*>(out_raw);
  // Coset (y0, x0 = A⁻¹·(y0 ⊕ c)) of block index `begin` in Gray-code order, then one column per step; with
  // Pairs the partner's Gray index and coset likewise.
  BitVec h = begin ^ (begin >> 1);
  BitVec y0 = xor_of_columns(t.walk_ycols, h), x0 = xor_of_columns(t.walk_xcols, h) ^ t.walk_c;
  BitVec ph = 0, py0 = 0, px0 = 0;
  if constexpr (Pairs) {
    const DirectPairs& p = *t.pairs;
    ph = xor_of_columns(p.h_cols, h) ^ p.h_c;
    py0 = xor_of_columns(p.ycols, h) ^ p.y_c;
    px0 = xor_of_columns(p.xcols, h) ^ p.x_c;
  }
  alignas(64) E buf[Pairs ? 1 << (2 * kLine) : 1];  // a block: at most 2^(2L) elements, 2 KiB
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) {
      const int i = __builtin_ctzll(g);
      y0 ^= t.walk_ycols[i], x0 ^= t.walk_xcols[i];
      if constexpr (Pairs) {
        const DirectPairs& p = *t.pairs;
        h ^= BitVec{1} << i, ph ^= p.h_cols[i], py0 ^= p.ycols[i], px0 ^= p.xcols[i];
      }
    }
    if constexpr (Pairs) {
      if (ph < h) continue;
      walk_block<B, true>(t, in, buf, 0, px0);
      if (ph != h) walk_block<B, false>(t, in, out, y0, x0);
      walk_unbuffer<B>(t, buf, out, py0);
    } else {
      walk_block<B, false>(t, in, out, y0, x0);
    }
  }
}

#if BMMC_CPU_DIRECT_AVX2

// The group representatives of the transposing loops in Gray-code order of the group index: group g's input
// offset a, output vector vec and lane XOR mu (nat_c is 0 for the lane-permuting groups), one column XOR per
// step; with Pairs (in place) also the partner's Gray index ph and state (pa, pvec, pmu). GroupWalk(d, begin)
// stands on group `begin`; step(g) moves to g from g - 1.
template <bool Mu, bool Pairs>
struct GroupWalk {
  const DirectTables& d;
  std::uint32_t a, vec, mu;
  BitVec h = 0, ph = 0;
  std::uint32_t pa = 0, pvec = 0, pmu = 0;
  GroupWalk(const DirectTables& t, std::uint64_t begin) : d(t) {
    h = begin ^ (begin >> 1);
    a = xor_of_columns(d.nat_cols, h) ^ d.nat_c;
    vec = xor_of_columns(d.vec_cols, h) ^ d.vec_c;
    mu = xor_of_columns(d.mu_cols, h) ^ d.mu_c;
    if constexpr (Pairs) {
      const DirectPairs& p = *d.pairs;
      ph = xor_of_columns(p.h_cols, h) ^ p.h_c;
      pa = xor_of_columns(p.nat_cols, h) ^ p.nat_c;
      pvec = xor_of_columns(p.vec_cols, h) ^ p.vec_c;
      pmu = xor_of_columns(p.mu_cols, h) ^ p.mu_c;
    }
  }
  void step(std::uint64_t g) {
    const int i = __builtin_ctzll(g);
    a ^= d.nat_cols[i], vec ^= d.vec_cols[i];
    if constexpr (Mu) mu ^= d.mu_cols[i];
    if constexpr (Pairs) {
      const DirectPairs& p = *d.pairs;
      h ^= BitVec{1} << i, ph ^= p.h_cols[i], pa ^= p.nat_cols[i], pvec ^= p.vec_cols[i];
      if constexpr (Mu) pmu ^= p.mu_cols[i];
    }
  }
  // Whether this group runs (it owns its pair), and whether with a partner.
  bool owns() const { return !Pairs || h <= ph; }
  bool paired() const { return Pairs && h != ph; }
};

// Every group loop below runs its groups as: walk.owns() (always true without Pairs), the group's loads and
// network into registers, then — paired — the partner's loads and network (its input is this group's output,
// still unwritten), then the stores of both; out == in with Pairs.
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
    __m256i r[V];
    group_avx2<EB, Swaps, Pre, Post>(in, walk.a, walk.mu, kpos, pre, post, r);
    if (walk.paired()) {
      __m256i q[V];
      group_avx2<EB, Swaps, Pre, Post>(in, walk.pa, walk.pmu, kpos, pre, post, q);
      store_avx2<EB>(out, walk.pvec, qvec, q);
    }
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
  if constexpr (Pre) {  // lane XOR E·k ⊕ μ per register (vpermd), then as below without the load swap
    const __m256i m = _mm256_set1_epi32(static_cast<int>(mu * Scale));
#pragma GCC unroll 8
    for (int k = 0; k < V; ++k) {
      r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + (a ^ kpos[k])));
      // Without μ only the registers with E·k ≠ 0 move (a branch that is the same for every group).
      if (Mu || d.pre_xor[k] != 0) r[k] = _mm256_permutevar8x32_epi32(r[k], _mm256_xor_si256(pre[k], m));
    }
    stages<EB>(r, ub);
    if constexpr (EB == 4) {
      transpose8(r);
    } else {
      swap_halves<V>(r);
      swap_quads<V>(r);
    }
  } else if constexpr (LoadSwap) {
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
  } else {
#pragma GCC unroll 8
    for (int k = 0; k < V; ++k) r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + (a ^ kpos[k])));
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
    __m256i r[V];
    group_blend<EB, LoadSwap, Pre, Mu>(d, in, walk.a, walk.mu, kpos, pre, ub, ua, r);
    if (walk.paired()) {
      __m256i q[V];
      group_blend<EB, LoadSwap, Pre, Mu>(d, in, walk.pa, walk.pmu, kpos, pre, ub, ua, q);
      store_avx2<EB>(out, walk.pvec, qvec, q);
    }
    store_avx2<EB>(out, walk.vec, qvec, r);
  }
}

using GroupLoop = void (*)(const DirectTables&, const unsigned char*, unsigned char*, std::uint64_t, std::uint64_t);

// GCC 12's vpermb and vpermd (512-bit) intrinsics pass an undefined vector as its unused mask source and then warns about it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

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
    Vec r[V];
    group_vbmi<EB, VB, Swaps, Pre, Post>(x, ix, in, walk.a, walk.mu, r);
    if (walk.paired()) {
      Vec q[V];
      group_vbmi<EB, VB, Swaps, Pre, Post>(x, ix, in, walk.pa, walk.pmu, q);
      store_vbmi<EB, VB>(x, out, walk.pvec, q);
    }
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
    __m512i r[V];
    group_avx512<EB, Swaps, Pre, Post>(x, ix, in, walk.a, walk.mu, r);
    if (walk.paired()) {
      __m512i q[V];
      group_avx512<EB, Swaps, Pre, Post>(x, ix, in, walk.pa, walk.pmu, q);
      store_avx512<EB>(x, out, walk.pvec, q);
    }
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

// The walk for the element size, in place with Pairs.
template <bool Pairs>
GroupLoop pick_walk(int elem_bytes) {
  switch (elem_bytes) {
    case 1: return &walk<1, Pairs>;
    case 2: return &walk<2, Pairs>;
    case 4: return &walk<4, Pairs>;
    case 8: return &walk<8, Pairs>;
    case 16: return &walk<16, Pairs>;
  }
  throw std::invalid_argument(fmt::format("run_direct: unsupported element size {}", elem_bytes));
}

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
  return pick_walk<false>(t.elem_bytes)(t, in, out, begin, end);
}

void run_direct_pairs(const DirectTables& t, unsigned char* data, std::uint64_t begin, std::uint64_t end) {
  if (!t.pairs) throw std::logic_error("run_direct_pairs: the tables have no pairs (make_direct_pairs)");
#if BMMC_CPU_DIRECT_AVX2
  if (t.blend || t.groups) return pick_group_loop<true>(t)(t, data, data, begin, end);
#endif
  return pick_walk<true>(t.elem_bytes)(t, data, data, begin, end);
}

#if BMMC_CPU_DIRECT_AVX2
namespace {

// The probe of a group loop: the group's 2^W input vectors loaded and stored to its 2^W output vectors in
// the loop's order, with no permute (V vectors of 32 bytes a group; probe_groups_512 below for 64-byte ones,
// which need AVX-512: as 32-byte halves the probe cost more than the loop it stands for).
template <int V>
__attribute__((target("avx2"))) void probe_groups_256(const DirectTables& d, const unsigned char* in,
                                                      unsigned char* out, std::uint64_t begin, std::uint64_t end) {
  const TransposeTables& x = *d.groups;
  const int eb = d.elem_bytes, W = x.lane_bits;
  GroupWalk<false, false> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    __m256i r[V];
#pragma GCC unroll 32
    for (int k = 0; k < V; ++k)
      r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + std::size_t{walk.a ^ x.kpos[k]} * eb));
#pragma GCC unroll 32
    for (int l = 0; l < V; ++l)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (std::size_t{walk.vec ^ x.qvec[l]} << W) * eb), r[l]);
  }
}

template <int V>
BMMC_AVX512 void probe_groups_512(const DirectTables& d, const unsigned char* in, unsigned char* out,
                                  std::uint64_t begin, std::uint64_t end) {
  const TransposeTables& x = *d.groups;
  const int eb = d.elem_bytes, W = x.lane_bits;
  GroupWalk<false, false> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    __m512i r[V];
#pragma GCC unroll 32
    for (int k = 0; k < V; ++k) r[k] = _mm512_loadu_si512(in + std::size_t{walk.a ^ x.kpos[k]} * eb);
#pragma GCC unroll 32
    for (int l = 0; l < V; ++l) _mm512_storeu_si512(out + (std::size_t{walk.vec ^ x.qvec[l]} << W) * eb, r[l]);
  }
}

}  // namespace
#endif

bool run_direct_probe(const DirectTables& t, const unsigned char* in, unsigned char* out) {
#if BMMC_CPU_DIRECT_AVX2
  if (!t.groups) return false;
  const std::uint64_t units = direct_units(t);
  if (t.groups->vector_bytes == 64) {
    if (!has_avx512()) return false;
    switch (t.groups->lane_bits) {
      case 5: return probe_groups_512<32>(t, in, out, 0, units), true;
      case 4: return probe_groups_512<16>(t, in, out, 0, units), true;
      case 3: return probe_groups_512<8>(t, in, out, 0, units), true;
    }
    return false;
  }
  if (!has_avx2()) return false;
  switch (t.groups->lane_bits) {
    case 5: return probe_groups_256<32>(t, in, out, 0, units), true;
    case 4: return probe_groups_256<16>(t, in, out, 0, units), true;
    case 3: return probe_groups_256<8>(t, in, out, 0, units), true;
    case 2: return probe_groups_256<4>(t, in, out, 0, units), true;
  }
#else
  (void)t, (void)in, (void)out;
#endif
  return false;
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
