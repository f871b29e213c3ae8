// The direct loops (see direct_blocks.hpp): blend and lane-permuting register-transpose groups straight from
// input to output, and the line-blocked walk; the loop choice between them (make_direct_tables). Kernels are
// templated on the element size and on which lane permutations are needed, so that a bit-reverse group is
// 16 half-vector loads, 16 unpacks and 8 stores with nothing else in the loop. The blend tables are built
// in blend_tables.cpp.
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

// The walk's block: the output lines' bits plus the images of the input lines' bits, so that a block reads
// and writes whole 64-byte lines (32-byte halves for 1- and 2-byte elements, which keeps the table at
// ≤ 2^10 entries, 8 KiB).
constexpr int walk_line_bits(int elem_bytes) { return elem_bytes == 16 ? 2 : elem_bytes == 8 ? 3 : elem_bytes == 4 ? 4 : 5; }

template <int B>
struct Elem {
  unsigned char b[B];
};

template <int B>
void walk(const DirectTables& t, const unsigned char* in_raw, unsigned char* out_raw, std::uint64_t begin,
          std::uint64_t end) {
  using E = Elem<B>;
  constexpr int kLine = walk_line_bits(B);
  const auto* in = reinterpret_cast<const E*>(in_raw);
  auto* out = reinterpret_cast<E*>(out_raw);
  const std::uint32_t* xlo = t.walk_in.data();   // A⁻¹·j for the 2^L output offsets j of a line
  const std::uint32_t* yhi = t.walk_out.data();  // the block's line offsets (output) ...
  const std::uint32_t* xhi = t.walk_in.data();   // ... and their sources (the same table, every 2^L-th entry)
  const std::size_t lines = t.walk_out.size() >> kLine;
  // Coset (y0, x0 = A⁻¹·(y0 ⊕ c)) of block index `begin` in Gray-code order, then one column per step.
  const std::uint64_t gray = begin ^ (begin >> 1);
  BitVec y0 = 0, x0 = t.walk_c;
  for (std::size_t i = 0; i < t.walk_ycols.size(); ++i)
    if ((gray >> i) & 1) y0 ^= t.walk_ycols[i], x0 ^= t.walk_xcols[i];
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) {
      const int i = __builtin_ctzll(g);
      y0 ^= t.walk_ycols[i], x0 ^= t.walk_xcols[i];
    }
    if (t.n < kLine) {  // fewer elements than a line: one block, element by element
      for (std::size_t j = 0; j < t.walk_out.size(); ++j) out[y0 ^ yhi[j]] = in[x0 ^ xhi[j]];
      continue;
    }
    for (std::size_t h = 0; h < lines; ++h) {
      E* dst = out + (y0 ^ yhi[h << kLine]);  // a whole line: the low output bits are the table's first L
      const BitVec src = x0 ^ xhi[h << kLine];
#pragma GCC unroll 32
      for (int j = 0; j < (1 << kLine); ++j) dst[j] = in[src ^ xlo[j]];
    }
  }
}

#if defined(__GNUC__) && defined(__x86_64__)
#define BMMC_CPU_DIRECT_AVX2 1

// The group representatives of the transposing loops in Gray-code order of the group index: group g's input
// offset a, output vector vec and lane XOR mu (nat_c is 0 for the lane-permuting groups), one column XOR per
// step. GrayGroups(d, begin) stands on group `begin`; step(g) moves to g from g - 1.
template <bool Mu>
struct GrayGroups {
  const DirectTables& d;
  std::uint32_t a, vec, mu;
  GrayGroups(const DirectTables& t, std::uint64_t begin) : d(t) {
    const std::uint64_t gray = begin ^ (begin >> 1);
    a = xor_of_columns(d.nat_cols, gray) ^ d.nat_c;
    vec = xor_of_columns(d.vec_cols, gray) ^ d.vec_c;
    mu = xor_of_columns(d.mu_cols, gray) ^ d.mu_c;
  }
  void step(std::uint64_t g) {
    const int i = __builtin_ctzll(g);
    a ^= d.nat_cols[i], vec ^= d.vec_cols[i];
    if constexpr (Mu) mu ^= d.mu_cols[i];
  }
};

// Groups [begin, end) in Gray-code order of the group index: one column XOR per step.
template <int EB, int Swaps, bool Pre, bool Post>
__attribute__((target("avx2"))) void groups_avx2(const DirectTables& d, const unsigned char* in_raw,
                                                 unsigned char* out_raw, std::uint64_t begin, std::uint64_t end) {
  constexpr int W = EB == 4 ? 3 : 2, V = 1 << W;
  constexpr int Scale = EB / 4;  // 32-bit lanes per element
  using E = std::conditional_t<EB == 4, std::int32_t, std::int64_t>;
  const auto* in = reinterpret_cast<const E*>(in_raw);
  auto* out = reinterpret_cast<E*>(out_raw);
  const TransposeTables& x = *d.groups;
  __m256i pre[V], post[V];
  std::uint32_t kpos[V], qvec[V];
  for (int v = 0; v < V; ++v) {
    pre[v] = lane_index<EB>(x.pre[v]), post[v] = lane_index<EB>(x.post[v]);
    kpos[v] = x.kpos[v], qvec[v] = x.qvec[v];
  }
  GrayGroups<Post> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    [[maybe_unused]] const std::uint32_t a = walk.a, vec = walk.vec, mu = walk.mu;
    __m256i r[V];
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
    [[maybe_unused]] const __m256i m = _mm256_set1_epi32(static_cast<int>(mu * Scale));
#pragma GCC unroll 8
    for (int l = 0; l < V; ++l) {
      __m256i v = r[l];
      if constexpr (Post) v = _mm256_permutevar8x32_epi32(v, _mm256_xor_si256(post[l], m));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (std::size_t{vec ^ qvec[l]} << W)), v);
    }
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

// Groups [begin, end) of the blend transposes (DirectTables::blend), Gray-code order.
template <int EB, bool LoadSwap, bool Pre, bool Mu>
__attribute__((target("avx2"))) void groups_blend(const DirectTables& d, const unsigned char* in_raw,
                                                  unsigned char* out_raw, std::uint64_t begin, std::uint64_t end) {
  constexpr int W = EB == 4 ? 3 : 2, V = 1 << W, H = V / 2;
  using E = std::conditional_t<EB == 4, std::int32_t, std::int64_t>;
  const auto* in = reinterpret_cast<const E*>(in_raw);
  auto* out = reinterpret_cast<E*>(out_raw);
  constexpr int Scale = EB / 4;  // 32-bit lanes per element
  std::uint32_t kpos[V], qvec[V], ub[W], ua[W];
  __m256i pre[V];
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int v = 0; v < V; ++v) {
    kpos[v] = d.kpos[v], qvec[v] = d.qvec[v];
    pre[v] = _mm256_xor_si256(iota, _mm256_set1_epi32(static_cast<int>(d.pre_xor[v] * Scale)));
  }
  for (int q = 0; q < W; ++q) ub[q] = d.ub[q], ua[q] = d.ua[q];
  GrayGroups<Mu> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    [[maybe_unused]] const std::uint32_t a = walk.a, vec = walk.vec, mu = walk.mu;
    __m256i r[V];
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
#pragma GCC unroll 8
    for (int s = 0; s < V; ++s)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (std::size_t{vec ^ qvec[s]} << W)), r[s]);
  }
}

using GroupLoop = void (*)(const DirectTables&, const unsigned char*, unsigned char*, std::uint64_t, std::uint64_t);

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

// GCC 12's vpermb and vpermd (512-bit) intrinsics pass an undefined vector as its unused mask source and then warns about it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// 1- and 2-byte groups (AVX-512 VBMI, vbmi_network.hpp): groups_avx2 with 32 or 16 lanes per 32-byte vector
// (VB = 32), or 2-byte elements with 32 lanes per 64-byte vector (VB = 64: whole lines), byte permutes for the
// lane permutations and the exchanges. [begin, end) in Gray-code order of the group index.
template <int EB, int VB, int Swaps, bool Pre, bool Post>
BMMC_VBMI void groups_vbmi(const DirectTables& d, const unsigned char* in_raw, unsigned char* out_raw,
                           std::uint64_t begin, std::uint64_t end) {
  using Vec = typename ByteVector<VB>::type;
  using E = std::conditional_t<EB == 1, std::uint8_t, std::uint16_t>;
  constexpr int W = std::countr_zero(static_cast<unsigned>(VB / EB)), V = 1 << W;
  // The lane permutations ride on the first and last exchanges where there are two of them (one for post).
  constexpr bool FoldPre = Pre && Swaps >= 2, FoldPost = Post && Swaps >= 1;
  const auto* in = reinterpret_cast<const E*>(in_raw);
  auto* out = reinterpret_cast<E*>(out_raw);
  const TransposeTables& x = *d.groups;
  const auto& ix = [&x]() -> const auto& {
    if constexpr (VB == 64)
      return *x.wide_bytes;
    else
      return *x.bytes;
  }();
  GrayGroups<Post> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    [[maybe_unused]] const std::uint32_t a = walk.a, vec = walk.vec, mu = walk.mu;
    Vec r[V];
#pragma GCC unroll 32
    for (int k = 0; k < V; ++k) {
      loadu(r[k], in + (a ^ x.kpos[k]));
      if constexpr (Pre && !FoldPre) r[k] = permute(load_index(ix.pre[k]), r[k]);
    }
    Vec mlast, m;
    splat(mlast, static_cast<char>(FoldPost ? last_mu_index(W, Swaps, mu, VB, EB) : 0));
    splat(m, static_cast<char>(mu * EB));
    exchange_lane_bits<W, Swaps, FoldPre, FoldPost>(r, ix, mlast);
#pragma GCC unroll 32
    for (int l = 0; l < V; ++l) {
      Vec v = r[l];
      if constexpr (Post && !FoldPost) v = permute(vxor(load_index(ix.post[l]), m), v);
      storeu(out + (std::size_t{vec ^ x.qvec[l]} << W), v);
    }
  }
}

// 4- and 8-byte groups of whole 64-byte lines (AVX-512, avx512_network.hpp): groups_avx2 with 16 (8) lanes
// per vector and 2^W = 16 (8) vectors a group. [begin, end) in Gray-code order of the group index.
template <int EB, int Swaps, bool Pre, bool Post>
BMMC_AVX512 void groups_avx512(const DirectTables& d, const unsigned char* in_raw, unsigned char* out_raw,
                               std::uint64_t begin, std::uint64_t end) {
  constexpr int W = EB == 4 ? 4 : 3, V = 1 << W;
  constexpr int Scale = EB / 4;  // 32-bit words per element
  // The lane permutations ride on the first and last exchanges where there are two of them (one for post).
  constexpr bool FoldPre = Pre && Swaps >= 2, FoldPost = Post && Swaps >= 1;
  using E = std::conditional_t<EB == 4, std::int32_t, std::int64_t>;
  const auto* in = reinterpret_cast<const E*>(in_raw);
  auto* out = reinterpret_cast<E*>(out_raw);
  const TransposeTables& x = *d.groups;
  const WordIndices& ix = *x.words;
  GrayGroups<Post> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    [[maybe_unused]] const std::uint32_t a = walk.a, vec = walk.vec, mu = walk.mu;
    __m512i r[V];
#pragma GCC unroll 16
    for (int k = 0; k < V; ++k) {
      r[k] = _mm512_loadu_si512(in + (a ^ x.kpos[k]));
      if constexpr (Pre && !FoldPre) r[k] = _mm512_permutexvar_epi32(load_words(ix.pre[k]), r[k]);
    }
    [[maybe_unused]] const __m512i mlast =
        _mm512_set1_epi32(static_cast<int>(FoldPost ? last_mu_index(W, Swaps, mu, 16, Scale) : 0));
    exchange_lane_bits_512<W, Swaps, FoldPre, FoldPost>(r, ix, mlast);
    [[maybe_unused]] const __m512i m = _mm512_set1_epi32(static_cast<int>(mu * Scale));
#pragma GCC unroll 16
    for (int l = 0; l < V; ++l) {
      __m512i v = r[l];
      if constexpr (Post && !FoldPost) v = _mm512_permutexvar_epi32(_mm512_xor_si512(load_words(ix.post[l]), m), v);
      _mm512_storeu_si512(out + (std::size_t{vec ^ x.qvec[l]} << W), v);
    }
  }
}

#pragma GCC diagnostic pop

// The lane-permuting group loop for (element size, vector bytes, exchanged lane bits, pre, post): AVX2 or
// AVX-512 for 4/8 bytes, VBMI for 1/2 bytes.
template <int EB, int VB, int Swaps, bool Pre, bool Post>
GroupLoop group_loop() {
  if constexpr (EB >= 4 && VB == 64)
    return &groups_avx512<EB, Swaps, Pre, Post>;
  else if constexpr (EB >= 4)
    return &groups_avx2<EB, Swaps, Pre, Post>;
  else
    return &groups_vbmi<EB, VB, Swaps, Pre, Post>;
}

template <int EB, int VB, int Swaps>
GroupLoop pick_lanes(bool pre, bool post) {
  if (pre) return post ? group_loop<EB, VB, Swaps, true, true>() : group_loop<EB, VB, Swaps, true, false>();
  return post ? group_loop<EB, VB, Swaps, false, true>() : group_loop<EB, VB, Swaps, false, false>();
}

template <int EB, int VB, int... Swaps>
GroupLoop pick_swaps(int swaps, bool pre, bool post, std::integer_sequence<int, Swaps...>) {
  GroupLoop loop = nullptr;
  ((swaps == Swaps ? (loop = pick_lanes<EB, VB, Swaps>(pre, post), 0) : 0), ...);
  return loop;
}
#endif

// Whether every vector's lane permutation is the identity.
bool identity_lanes(const std::array<std::array<std::int32_t, 32>, 32>& perm, int lanes) {
  for (int v = 0; v < lanes; ++v)
    for (int j = 0; j < lanes; ++j)
      if (perm[v][j] != j) return false;
  return true;
}

// The most of these element offsets (vector starts) that fall into one 64-byte-line L1 set of 64 sets.
int set_pile(const std::uint32_t* offsets, int count, int elem_bytes) {
  int pile = 0;
  for (int i = 0; i < count; ++i) {
    int same = 0;
    for (int j = 0; j < count; ++j)
      same += ((std::uint64_t{offsets[i]} * elem_bytes >> 6) & 63) == ((std::uint64_t{offsets[j]} * elem_bytes >> 6) & 63);
    pile = std::max(pile, same);
  }
  return pile;
}

// Shuffle-unit work per group of the blend loop (see make_direct_tables).
int blend_cost(const DirectTables& d, int W) {
  const int V = 1 << W;
  int cost = W == 3 ? 24 : 8;  // the transpose's shuffles (unpacks and 128-bit permutes)
  if (d.pre) cost += 2 * V;
  for (int q = 0; q < W; ++q) cost += (d.ub[q] != 0) * 2 + (d.ua[q] != 0) * 2;
  return cost;
}

// d with set_pile filled in from its group's input and output vector offsets.
DirectTables with_pile(DirectTables d, int V) {
  const int W = __builtin_ctz(static_cast<unsigned>(V));
  std::array<std::uint32_t, 32> in{}, out{};
  for (int v = 0; v < V; ++v) {
    in[v] = d.groups ? d.groups->kpos[v] : d.kpos[v];
    out[v] = (d.groups ? d.groups->qvec[v] : d.qvec[v]) << W;
  }
  // Both sides: a group whose input and output vectors each crowd one set (bit-reverse) evicts its own lines
  // before its neighbours use their other halves; one crowded side (transposes) does not hurt measurably.
  d.set_pile = std::min(set_pile(in.data(), V, d.elem_bytes), set_pile(out.data(), V, d.elem_bytes));
  return d;
}

// 8-byte groups (4 vectors) that pile more than half their vectors into one L1 set lose to the walk, which
// reads and writes whole lines (bit-reverse at 128 KiB: 10.7 µs walk, 12.9 blends, 11.6 tiled); 4-byte
// groups still win (4.6 against 20 µs).
bool walk_instead(const DirectTables& d) { return d.elem_bytes == 8 && 2 * d.set_pile > 4; }

// The lane-permuting groups of K0 = A (groups of 2^W vectors of 2^W lanes) into d: the group tables with
// their representative tables replaced by Gray-walk columns, the complement's parts, and which lane
// permutations are needed. False when make_group_tables finds none (d unchanged).
bool fill_groups(const Bmmc& bmmc, const BitMatrix& ainv, int vector_bytes, DirectTables& d) {
  const int n = bmmc.n();
  const int W = std::countr_zero(static_cast<unsigned>(vector_bytes / d.elem_bytes)), V = 1 << W;
  // K0 = A: the group basis is A⁻¹'s columns (K0⁻¹(e_i) = A⁻¹·e_i).
  std::vector<BitVec> basis(n);
  for (int i = 0; i < n; ++i) basis[i] = ainv.col(i);
  std::optional<TransposeTables> x = make_group_tables(basis, W, d.elem_bytes, vector_bytes);
  if (!x) return false;
  for (std::size_t g = 1; g < x->rep_nat.size(); g *= 2) {
    d.nat_cols.push_back(x->rep_nat[g]);
    d.vec_cols.push_back(x->rep_vec[g]);
    d.mu_cols.push_back(x->rep_mu[g]);
  }
  x->rep_nat = {}, x->rep_vec = {}, x->rep_mu = {};
  // post[l][j] = D⁻¹(j ⊕ E_l) is affine in j, so reading output lane j ⊕ c_lo is a lane XOR by D⁻¹·c_lo.
  const BitVec c = bmmc.complement();
  const auto c_lo = static_cast<std::uint32_t>(c & static_cast<BitVec>(V - 1));
  d.vec_c = static_cast<std::uint32_t>(c >> W);
  d.mu_c = static_cast<std::uint32_t>(x->post[0][c_lo] ^ x->post[0][0]);
  d.pre = !identity_lanes(x->pre, V);
  d.post = !identity_lanes(x->post, V) || d.mu_c != 0 ||
           std::any_of(d.mu_cols.begin(), d.mu_cols.end(), [](std::uint32_t m) { return m != 0; });
  d.groups = std::move(x);
  return true;
}

}  // namespace

DirectTables make_direct_tables(const Bmmc& bmmc, int elem_bytes, bool transposes, bool avx512) {
  const int n = bmmc.n();
  if (n > 32) throw std::invalid_argument(fmt::format("direct CPU loop: n = {} is above 32", n));
  DirectTables d;
  d.n = n;
  d.elem_bytes = elem_bytes;
  const BitMatrix ainv = bmmc.matrix().inverse();
  const BitVec c = bmmc.complement();
#if BMMC_CPU_DIRECT_AVX2
  // 4- and 8-byte elements where the CPU has AVX-512: groups of whole 64-byte lines, for every map that has
  // them (n ≥ 2W); they beat both AVX2 loops on every map measured (BENCHMARKS.md, docs/DESIGN.md §4.2).
  if (transposes && avx512 && (elem_bytes == 4 || elem_bytes == 8) && has_avx512() &&
      fill_groups(bmmc, ainv, 64, d)) {
    const int V = 1 << d.groups->lane_bits;
    return with_pile(std::move(d), V);
  }
  if (transposes && (elem_bytes == 4 || elem_bytes == 8) && has_avx2()) {
    DirectTables blended = d;
    const bool blend = make_blend_tables(bmmc, elem_bytes, blended);
    const int W = elem_bytes == 4 ? 3 : 2;
    if (fill_groups(bmmc, ainv, 32, d)) {
      const int V = 1 << W;
      const TransposeTables& x = *d.groups;
      // The cheaper of the two loops by shuffle-unit work per group (vpermd counted as 2, a blend stage
      // of 2^W vpblendd as 2): the blends win for general maps (no post permute, at most one lane permute
      // per register), the lane-permuting loop for maps that keep low bits in place (identity-like, T_r
      // with r < W and no permutes at all).
      const int permute_cost = x.swaps * V + (d.pre ? 2 * V : 0) + (d.post ? 2 * V : 0);
      if (blend && blend_cost(blended, W) <= permute_cost) {
        if (DirectTables b = with_pile(std::move(blended), V); !walk_instead(b)) return b;
      } else {
        if (DirectTables g = with_pile(std::move(d), V); !walk_instead(g)) return g;
      }
    } else if (blend) {
      if (DirectTables b = with_pile(std::move(blended), 1 << W); !walk_instead(b)) return b;
    }
  }
  // 1- and 2-byte elements: the byte-permuting groups where the CPU has AVX-512 VBMI.
  if (transposes && avx512 && (elem_bytes == 1 || elem_bytes == 2) && has_vbmi()) {
    // 2-byte elements: groups of whole 64-byte lines (32 × 32) where n allows them, else 32-byte vectors.
    for (const int vector_bytes : {64, 32}) {
      if (vector_bytes == 64 && elem_bytes == 1) continue;
      if (fill_groups(bmmc, ainv, vector_bytes, d)) {
        const int V = 1 << d.groups->lane_bits;
        return with_pile(std::move(d), V);
      }
    }
  }
#else
  (void)transposes, (void)avx512;
#endif
  d = DirectTables{};  // the walk (from scratch: the transposing attempts above may have filled d)
  d.n = n, d.elem_bytes = elem_bytes;
  // Block S = output bits 0..L-1 ⊕ A·(input bits 0..L-1); blocks = cosets y0 ⊕ S, y0 over unit directions
  // outside S; within a block the output offsets ascend in the low bits, so stores fill lines in order.
  const int L = std::min(n, walk_line_bits(elem_bytes));
  Subspace block(n);
  std::vector<BitVec> sbasis;
  for (int i = 0; i < L; ++i)
    if (block.insert(BitVec{1} << i)) sbasis.push_back(BitVec{1} << i);
  for (int i = 0; i < L; ++i)  // A·e_i with the low L bits cleared (same span): line offsets stay aligned
    if (const BitVec v = bmmc.matrix().col(i) & ~low_mask(L); block.insert(v)) sbasis.push_back(v);
  d.walk_out = xor_table(std::vector<std::uint32_t>(sbasis.begin(), sbasis.end()));
  for (std::uint32_t y : d.walk_out) d.walk_in.push_back(static_cast<std::uint32_t>(ainv.apply(y)));
  for (int b = 0; b < n; ++b)
    if (block.insert(BitVec{1} << b)) d.walk_ycols.push_back(BitVec{1} << b), d.walk_xcols.push_back(ainv.col(b));
  // The sources of one output line: how many share an L1 set (all 2^L of them for bit-reverse).
  d.set_pile = set_pile(d.walk_in.data(), 1 << L, elem_bytes);
  d.walk_c = ainv.apply(c);
  return d;
}

std::uint64_t direct_units(const DirectTables& t) {
  if (t.blend) return std::uint64_t{1} << (t.n - 2 * (t.elem_bytes == 4 ? 3 : 2));
  if (t.groups) return std::uint64_t{1} << (t.n - 2 * t.groups->lane_bits);
  return std::uint64_t{1} << t.walk_ycols.size();
}

void run_direct(const DirectTables& t, const unsigned char* in, unsigned char* out, std::uint64_t begin,
                std::uint64_t end) {
#if BMMC_CPU_DIRECT_AVX2
  if (t.blend) {
    auto loop = [&]<int EB>() {
      if (t.mu) return groups_blend<EB, false, true, true>(t, in, out, begin, end);
      if (t.pre) return groups_blend<EB, false, true, false>(t, in, out, begin, end);
      if (t.load_swap) return groups_blend<EB, true, false, false>(t, in, out, begin, end);
      return groups_blend<EB, false, false, false>(t, in, out, begin, end);
    };
    return t.elem_bytes == 4 ? loop.template operator()<4>() : loop.template operator()<8>();
  }
  if (t.groups) {
    const int r = t.groups->swaps;
    const bool wide = t.groups->vector_bytes == 64;
    const GroupLoop loop =
        t.elem_bytes == 2 && wide ? pick_swaps<2, 64>(r, t.pre, t.post, std::make_integer_sequence<int, 6>{})
        : t.elem_bytes == 4 && wide ? pick_swaps<4, 64>(r, t.pre, t.post, std::make_integer_sequence<int, 5>{})
        : t.elem_bytes == 8 && wide ? pick_swaps<8, 64>(r, t.pre, t.post, std::make_integer_sequence<int, 4>{})
        : t.elem_bytes == 4 ? pick_swaps<4, 32>(r, t.pre, t.post, std::make_integer_sequence<int, 4>{})
        : t.elem_bytes == 8 ? pick_swaps<8, 32>(r, t.pre, t.post, std::make_integer_sequence<int, 3>{})
        : t.elem_bytes == 2 ? pick_swaps<2, 32>(r, t.pre, t.post, std::make_integer_sequence<int, 5>{})
                            : pick_swaps<1, 32>(r, t.pre, t.post, std::make_integer_sequence<int, 6>{});
    if (loop == nullptr) throw std::logic_error("run_direct: no loop for these group tables");
    return loop(t, in, out, begin, end);
  }
#endif
  switch (t.elem_bytes) {
    case 1: return walk<1>(t, in, out, begin, end);
    case 2: return walk<2>(t, in, out, begin, end);
    case 4: return walk<4>(t, in, out, begin, end);
    case 8: return walk<8>(t, in, out, begin, end);
    case 16: return walk<16>(t, in, out, begin, end);
  }
  throw std::invalid_argument(fmt::format("run_direct: unsupported element size {}", t.elem_bytes));
}

#if BMMC_CPU_DIRECT_AVX2
namespace {

// The probe of a group loop: the group's 2^W input vectors loaded and stored to its 2^W output vectors in
// the loop's order, with no permute (V vectors of VB bytes a group). A 64-byte vector moves as two 32-byte
// halves of the same line, so the probe needs AVX2 only and touches the same lines in the same order.
template <int VB, int V>
__attribute__((target("avx2"))) void probe_groups(const DirectTables& d, const unsigned char* in, unsigned char* out,
                                                  std::uint64_t begin, std::uint64_t end) {
  constexpr int Parts = VB / 32;
  const TransposeTables& x = *d.groups;
  const int eb = d.elem_bytes, W = x.lane_bits;
  GrayGroups<false> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    __m256i r[V][Parts];
#pragma GCC unroll 32
    for (int k = 0; k < V; ++k)
      for (int h = 0; h < Parts; ++h)
        r[k][h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + std::size_t{walk.a ^ x.kpos[k]} * eb) + h);
#pragma GCC unroll 32
    for (int l = 0; l < V; ++l)
      for (int h = 0; h < Parts; ++h)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (std::size_t{walk.vec ^ x.qvec[l]} << W) * eb) + h,
                            r[l][h]);
  }
}

}  // namespace
#endif

bool run_direct_probe(const DirectTables& t, const unsigned char* in, unsigned char* out) {
#if BMMC_CPU_DIRECT_AVX2
  if (!t.groups || !has_avx2()) return false;
  const std::uint64_t units = direct_units(t);
  switch ((t.groups->vector_bytes == 64 ? 100 : 0) + (1 << t.groups->lane_bits)) {
    case 132: return probe_groups<64, 32>(t, in, out, 0, units), true;
    case 116: return probe_groups<64, 16>(t, in, out, 0, units), true;
    case 108: return probe_groups<64, 8>(t, in, out, 0, units), true;
    case 32: return probe_groups<32, 32>(t, in, out, 0, units), true;
    case 16: return probe_groups<32, 16>(t, in, out, 0, units), true;
    case 8: return probe_groups<32, 8>(t, in, out, 0, units), true;
    case 4: return probe_groups<32, 4>(t, in, out, 0, units), true;
  }
#else
  (void)t, (void)in, (void)out;
#endif
  return false;
}

bool wide_groups_supported(int elem_bytes, bool avx512) {
#if BMMC_CPU_DIRECT_AVX2
  if (!avx512) return false;
  if (elem_bytes == 4 || elem_bytes == 8) return has_avx512();
  if (elem_bytes == 2) return has_vbmi();
#else
  (void)elem_bytes, (void)avx512;
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
