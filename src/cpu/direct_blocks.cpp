// The direct loops (see direct_blocks.hpp): register-transpose groups straight from input to output, and the
// table walk. Kernels are templated on the element size and on which lane permutations are needed, so that
// a bit-reverse group is 8 loads, the 24-shuffle transpose and 8 stores, with nothing else in the loop.
#include "direct_blocks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "avx2_transpose.hpp"
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
  const std::uint64_t gray = begin ^ (begin >> 1);
  std::uint32_t a = xor_of_columns(d.nat_cols, gray);
  std::uint32_t vec = xor_of_columns(d.vec_cols, gray) ^ d.vec_c;
  std::uint32_t mu = xor_of_columns(d.mu_cols, gray) ^ d.mu_c;
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) {
      const int i = __builtin_ctzll(g);
      a ^= d.nat_cols[i], vec ^= d.vec_cols[i];
      if constexpr (Post) mu ^= d.mu_cols[i];
    }
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
  const std::uint64_t gray = begin ^ (begin >> 1);
  std::uint32_t a = xor_of_columns(d.nat_cols, gray) ^ d.nat_c;
  std::uint32_t vec = xor_of_columns(d.vec_cols, gray) ^ d.vec_c;
  std::uint32_t mu = xor_of_columns(d.mu_cols, gray) ^ d.mu_c;
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) {
      const int i = __builtin_ctzll(g);
      a ^= d.nat_cols[i], vec ^= d.vec_cols[i];
      if constexpr (Mu) mu ^= d.mu_cols[i];
    }
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

template <int EB, int Swaps>
GroupLoop pick_lanes(bool pre, bool post) {
  if (pre) return post ? &groups_avx2<EB, Swaps, true, true> : &groups_avx2<EB, Swaps, true, false>;
  return post ? &groups_avx2<EB, Swaps, false, true> : &groups_avx2<EB, Swaps, false, false>;
}

template <int EB, int... Swaps>
GroupLoop pick_swaps(int swaps, bool pre, bool post, std::integer_sequence<int, Swaps...>) {
  GroupLoop loop = nullptr;
  ((swaps == Swaps ? (loop = pick_lanes<EB, Swaps>(pre, post), 0) : 0), ...);
  return loop;
}

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

// Whether every vector's lane permutation is the identity.
bool identity_lanes(const std::array<std::array<std::int32_t, 32>, 32>& perm, int lanes) {
  for (int v = 0; v < lanes; ++v)
    for (int j = 0; j < lanes; ++j)
      if (perm[v][j] != j) return false;
  return true;
}

// W×W matrices over F2 as their columns (W ≤ 3).
using Small = std::array<std::uint32_t, 3>;
std::uint32_t mul(const Small& m, std::uint32_t x) { return xor_of_columns(m, x); }
Small mul(const Small& a, const Small& b, int w) {
  Small c{};
  for (int i = 0; i < w; ++i) c[i] = mul(a, b[i]);
  return c;
}
std::optional<Small> inverse(const Small& m, int w) {
  const BitMatrix bm = BitMatrix::from_cols(w, std::vector<BitVec>(m.begin(), m.begin() + w));
  if (!bm.invertible()) return std::nullopt;
  const BitMatrix inv = bm.inverse();
  Small r{};
  for (int i = 0; i < w; ++i) r[i] = static_cast<std::uint32_t>(inv.col(i));
  return r;
}

// Simulates the blend loop's register moves for one group (the loop's a, vec and μ) and checks that every
// element lands at A·x ⊕ c. Mirrors groups_blend step by step.
bool blend_group_ok(const Bmmc& bmmc, const DirectTables& d, int W, std::uint32_t a, std::uint32_t vec,
                    std::uint32_t mu) {
  const int V = 1 << W, top = W - 1;
  std::uint32_t src[8][8], tmp[8][8];
  for (int s = 0; s < V; ++s)  // after the loads and the lane XOR
    for (int l = 0; l < V; ++l) src[s][l] = a ^ d.kpos[s] ^ (static_cast<std::uint32_t>(l) ^ d.pre_xor[s] ^ mu);
  auto copy = [&] { std::memcpy(src, tmp, sizeof src); };
  auto halves = [&] {  // lane bit W-1 ↔ register bit W-1
    for (int s = 0; s < V; ++s)
      for (int l = 0; l < V; ++l) {
        const int s2 = (s & ~(1 << top)) | (l & (1 << top)), l2 = (l & ~(1 << top)) | (s & (1 << top));
        tmp[s][l] = src[s2][l2];
      }
    copy();
  };
  auto u = [&](const std::array<std::uint32_t, 3>& cols) {
    for (int q = 0; q < W; ++q) {
      for (int s = 0; s < V; ++s)
        for (int l = 0; l < V; ++l) tmp[s][l] = (l >> q) & 1 ? src[s ^ cols[q]][l] : src[s][l];
      copy();
    }
  };
  if (d.load_swap) halves();
  u(d.ub);
  if (d.load_swap) halves();  // the rest of the network is the transpose after the half exchange
  for (int s = 0; s < V; ++s)
    for (int l = 0; l < V; ++l) tmp[s][l] = src[l][s];
  copy();
  u(d.ua);
  for (int s = 0; s < V; ++s)
    for (int l = 0; l < V; ++l)
      if (bmmc.apply(src[s][l]) != ((BitVec{vec ^ d.qvec[s]} << W) | static_cast<BitVec>(l))) return false;
  return true;
}

// The blend tables (DirectTables::blend). Group: input G = lanes ⊕ span(X), X = the aligned parts of
// A⁻¹·e_q (q < W), so that A·G = output lanes ⊕ span(Y). In group coordinates (input vector k, lane ℓ) →
// (output vector v in basis Y, lane j) the map is M = [[Mvk, Mvl], [Mjk, Mjl]]. First a lane XOR E·k on
// the input registers (E = 0, no lane permute, when Mjk is invertible; else the E of least rank that makes
// F = Mjk ⊕ Mjl·E invertible: vpermd on the registers with E·k ≠ 0): M' = M·(ℓ ⊕= E·k). Then loading
// input vector k(t) = F⁻¹·t into register t, U_b with B = Mjl, the transpose, and U_a with B = P⁻¹·G
// (G = M'vk·F⁻¹, P = Mvl ⊕ G·Mjl, the Schur complement, invertible) leaves register s holding output
// vector P·s with its lanes in order. A group's lane offset L = lane(A·a ⊕ c) shifts its input vectors
// by X·F⁻¹·L, its lane XOR by E·F⁻¹·L (μ) and its output vectors by G·L: all linear in a, so the Gray walk
// carries them as columns. blend_group_ok checks group 0 and every column, hence every group.
bool blend_tables(const Bmmc& bmmc, int elem_bytes, DirectTables& d) {
  const int n = bmmc.n();
  const int W = elem_bytes == 4 ? 3 : 2, V = 1 << W;
  if (n < 2 * W || n > 32) return false;
  const std::uint32_t lane_mask = V - 1;
  const BitMatrix& A = bmmc.matrix();
  const BitMatrix ainv = A.inverse();
  const BitVec c = bmmc.complement();
  Small X{}, Mjk{}, Mjl{}, Mvk{}, Mvl{};
  Subspace xs(n);
  int nx = 0;  // X: the aligned parts of A⁻¹·e_q that are independent, completed by unit directions
  for (int q = 0; q < W; ++q)
    if (const auto x = static_cast<std::uint32_t>(ainv.col(q) & ~BitVec{lane_mask}); xs.insert(x)) X[nx++] = x;
  for (int b = W; b < n && nx < W; ++b)
    if (xs.insert(BitVec{1} << b)) X[nx++] = 1u << b;
  if (nx != W) return false;
  std::vector<BitVec> hi_in, ybasis;  // hi parts of A·X_q, then of A·e_q
  Subspace ys(n);
  for (int q = 0; q < 2 * W; ++q) {
    const BitVec img = A.apply(q < W ? BitVec{X[q]} : BitVec{1} << (q - W));
    hi_in.push_back(img & ~BitVec{lane_mask});
    (q < W ? Mjk[q] : Mjl[q - W]) = static_cast<std::uint32_t>(img & lane_mask);
    if (ys.insert(img & ~BitVec{lane_mask})) ybasis.push_back(img & ~BitVec{lane_mask});
  }
  if (static_cast<int>(ybasis.size()) != W) return false;
  for (int q = 0; q < 2 * W; ++q) {
    const std::optional<BitVec> co = coordinates(ybasis, hi_in[q]);
    if (!co) return false;
    (q < W ? Mvk[q] : Mvl[q - W]) = static_cast<std::uint32_t>(*co);
  }
  // E of least rank (fewest registers to lane-permute) with Mjk ⊕ Mjl·E invertible.
  Small E{};
  int best = 99;
  for (std::uint32_t code = 0; code < (1u << (W * W)) && best > 0; ++code) {
    Small e{};
    for (int q = 0; q < W; ++q) e[q] = (code >> (q * W)) & lane_mask;
    Small f = mul(Mjl, e, W);
    for (int q = 0; q < W; ++q) f[q] ^= Mjk[q];
    if (!inverse(f, W)) continue;
    int moved = 0;  // registers whose lane XOR E·k is not zero
    for (std::uint32_t k = 0; k < static_cast<std::uint32_t>(V); ++k) moved += mul(e, k) != 0;
    if (moved < best) best = moved, E = e;
  }
  if (best == 99) return false;
  Small F = mul(Mjl, E, W), Mvk2 = mul(Mvl, E, W);
  for (int q = 0; q < W; ++q) F[q] ^= Mjk[q], Mvk2[q] ^= Mvk[q];
  const std::optional<Small> Finv = inverse(F, W);
  if (!Finv) return false;
  const Small G = mul(Mvk2, *Finv, W);
  Small P = mul(G, Mjl, W);
  for (int q = 0; q < W; ++q) P[q] ^= Mvl[q];
  const std::optional<Small> Pinv = inverse(P, W);
  if (!Pinv) return false;
  const Small Ba = mul(*Pinv, G, W);
  std::vector<std::uint32_t> ycols;
  for (BitVec y : ybasis) ycols.push_back(static_cast<std::uint32_t>(y >> W));
  d.pre_xor = {};
  for (std::uint32_t t = 0; t < static_cast<std::uint32_t>(V); ++t) {
    d.kpos[t] = mul(X, mul(*Finv, t));
    d.qvec[t] = xor_of_columns(ycols, mul(P, t));
    d.pre_xor[t] = mul(E, mul(*Finv, t));
  }
  for (int q = 0; q < W; ++q) d.ub[q] = Mjl[q], d.ua[q] = Ba[q];
  // A group rep's (or c's) contributions: input shift, output vector, lane XOR.
  struct Shift {
    std::uint32_t nat, vec, mu;
  };
  auto shift_of = [&](BitVec x, BitVec y) {  // x = the input part, y = A·x (⊕ c)
    const auto L = static_cast<std::uint32_t>(y & lane_mask);
    const std::uint32_t k = mul(*Finv, L);
    return Shift{static_cast<std::uint32_t>(x) ^ mul(X, k),
                 static_cast<std::uint32_t>(y >> W) ^ xor_of_columns(ycols, mul(G, L)), mul(E, k)};
  };
  // The representative may move by any X·k (same group set): take one whose μ is zero where there is one,
  // so that groups need no lane XOR beyond the per-register E·k.
  auto shift = [&](BitVec x, BitVec y) {
    Shift best = shift_of(x, y);
    for (std::uint32_t k = 1; k < static_cast<std::uint32_t>(V) && best.mu != 0; ++k)
      if (const Shift sh = shift_of(x ^ mul(X, k), y ^ A.apply(mul(X, k))); sh.mu == 0) best = sh;
    return best;
  };
  Subspace gin = xs;
  for (int q = 0; q < W; ++q) gin.insert(BitVec{1} << q);
  d.nat_cols.clear(), d.vec_cols.clear(), d.mu_cols.clear();
  for (int b = W; b < n; ++b) {
    if (!gin.insert(BitVec{1} << b)) continue;
    const Shift sh = shift(BitVec{1} << b, A.col(b));
    d.nat_cols.push_back(sh.nat), d.vec_cols.push_back(sh.vec), d.mu_cols.push_back(sh.mu);
  }
  if (static_cast<int>(d.nat_cols.size()) != n - 2 * W) return false;
  const Shift sc = shift(0, c);
  d.nat_c = sc.nat, d.vec_c = sc.vec, d.mu_c = sc.mu;
  d.mu = d.mu_c != 0 || std::any_of(d.mu_cols.begin(), d.mu_cols.end(), [](std::uint32_t m) { return m != 0; });
  d.pre = best > 0 || d.mu;
  // The loads may do the half exchange when there is no lane XOR and no U_b stage touches lane bit W-1
  // or register bit W-1 (then the stages commute with the exchange).
  d.load_swap = !d.pre && d.ub[W - 1] == 0 && std::all_of(d.ub.begin(), d.ub.begin() + W, [&](std::uint32_t col) {
                  return (col >> (W - 1) & 1) == 0;
                });
  d.blend = true;
  for (int i = -1; i < static_cast<int>(d.nat_cols.size()); ++i) {
    const bool g0 = i < 0;
    if (!blend_group_ok(bmmc, d, W, (g0 ? 0 : d.nat_cols[i]) ^ d.nat_c, (g0 ? 0 : d.vec_cols[i]) ^ d.vec_c,
                        (g0 ? 0 : d.mu_cols[i]) ^ d.mu_c)) {
      d.blend = false;
      return false;
    }
  }
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
  std::array<std::uint32_t, 8> in{}, out{};
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

}  // namespace

DirectTables make_direct_tables(const Bmmc& bmmc, int elem_bytes, bool transposes) {
  const int n = bmmc.n();
  if (n > 32) throw std::invalid_argument(fmt::format("direct CPU loop: n = {} is above 32", n));
  DirectTables d;
  d.n = n;
  d.elem_bytes = elem_bytes;
  const BitMatrix ainv = bmmc.matrix().inverse();
  const BitVec c = bmmc.complement();
#if BMMC_CPU_DIRECT_AVX2
  if (transposes && (elem_bytes == 4 || elem_bytes == 8) && has_avx2()) {
    DirectTables blended = d;
    const bool blend = blend_tables(bmmc, elem_bytes, blended);
    // K0 = A: the group basis is A⁻¹'s columns (K0⁻¹(e_i) = A⁻¹·e_i).
    std::vector<BitVec> basis(n);
    for (int i = 0; i < n; ++i) basis[i] = ainv.col(i);
    const int W = elem_bytes == 4 ? 3 : 2;
    if (std::optional<TransposeTables> x = make_group_tables(basis, W, elem_bytes)) {
      const int V = 1 << W;
      for (std::size_t g = 1; g < x->rep_nat.size(); g *= 2) {
        d.nat_cols.push_back(x->rep_nat[g]);
        d.vec_cols.push_back(x->rep_vec[g]);
        d.mu_cols.push_back(x->rep_mu[g]);
      }
      x->rep_nat = {}, x->rep_vec = {}, x->rep_mu = {};
      // post[l][j] = D⁻¹(j ⊕ E_l) is affine in j, so reading output lane j ⊕ c_lo is a lane XOR by D⁻¹·c_lo.
      const auto c_lo = static_cast<std::uint32_t>(c & static_cast<BitVec>(V - 1));
      d.vec_c = static_cast<std::uint32_t>(c >> W);
      d.mu_c = static_cast<std::uint32_t>(x->post[0][c_lo] ^ x->post[0][0]);
      d.pre = !identity_lanes(x->pre, V);
      d.post = !identity_lanes(x->post, V) || d.mu_c != 0 ||
               std::any_of(d.mu_cols.begin(), d.mu_cols.end(), [](std::uint32_t m) { return m != 0; });
      // The cheaper of the two loops by shuffle-unit work per group (vpermd counted as 2, a blend stage
      // of 2^W vpblendd as 2): the blends win for general maps (no post permute, at most one lane permute
      // per register), the lane-permuting loop for maps that keep low bits in place (identity-like, T_r
      // with r < W and no permutes at all).
      const int permute_cost = x->swaps * V + (d.pre ? 2 * V : 0) + (d.post ? 2 * V : 0);
      if (blend && blend_cost(blended, W) <= permute_cost) {
        if (DirectTables b = with_pile(std::move(blended), V); !walk_instead(b)) return b;
      } else {
        d.groups = std::move(x);
        if (DirectTables g = with_pile(std::move(d), V); !walk_instead(g)) return g;
      }
    } else if (blend) {
      if (DirectTables b = with_pile(std::move(blended), 1 << W); !walk_instead(b)) return b;
    }
  }
#else
  (void)transposes;
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
    const GroupLoop loop =
        t.elem_bytes == 4
            ? pick_swaps<4>(t.groups->swaps, t.pre, t.post, std::make_integer_sequence<int, 4>{})
            : pick_swaps<8>(t.groups->swaps, t.pre, t.post, std::make_integer_sequence<int, 3>{});
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

std::string direct_kernel_name(const DirectTables& t) {
  return t.blend ? "direct-blend-avx2" : t.groups ? "direct-transpose-avx2" : "direct-walk";
}

}  // namespace bmmc::cpu_detail
