// The register-transpose block loops and their tables (see transpose_blocks.hpp for the algebra).
#include "transpose_blocks.hpp"

#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/subspace.hpp"
#include "avx2_transpose.hpp"
#include "vbmi_network.hpp"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define BMMC_CPU_TRANSPOSE_AVX2 1
#endif

namespace bmmc::cpu_detail {

namespace {

// Linear maps F2^(2W) → F2^(2W) (W = lane bits per vector, ≤ 5) are BitMatrix (2W × 2W) built from their
// column images. Input coordinates of a group element: bits 0..W-1 the vector slot k, bits W..2W-1 the lane
// ℓ; output coordinates: bits 0..W-1 the tile vector v, bits W..2W-1 the lane j. They are used only while
// the tables are built (once per plan), never in the block loops.
BitMatrix group_map(int dim, const std::array<std::uint32_t, 10>& cols) {
  return BitMatrix::from_cols(dim, std::vector<BitVec>(cols.begin(), cols.begin() + dim));
}

std::uint32_t apply(const BitMatrix& m, std::uint32_t x) { return static_cast<std::uint32_t>(m.apply(x)); }

// The inverse, or nothing when m is singular.
std::optional<BitMatrix> inverse(const BitMatrix& m) {
  if (!m.invertible()) return std::nullopt;
  return m.inverse();
}

// T_r: swaps vector bit q with lane bit q for the r highest q (q ≥ W − r); the register network does this.
std::uint32_t swap_bits(int W, int r, std::uint32_t x) {
  std::uint32_t y = x;
  for (int q = W - r; q < W; ++q) {
    const std::uint32_t kb = (x >> q) & 1, lb = (x >> (W + q)) & 1;
    y = (y & ~((1u << q) | (1u << (W + q)))) | (lb << q) | (kb << (W + q));
  }
  return y;
}

// Appends candidates to `basis` (a Subspace) while they are independent, until `want` were taken.
std::vector<std::uint32_t> complete(Subspace& basis, const std::vector<std::uint32_t>& candidates, int want) {
  std::vector<std::uint32_t> taken;
  for (std::uint32_t c : candidates)
    if (static_cast<int>(taken.size()) < want && basis.insert(c)) taken.push_back(c);
  return taken;
}

// The network's index vectors for the lane tables of x, g units a lane: a unit index i is unit e = i mod g of
// lane i / g (see NetworkIndices).
template <class Ix>
std::shared_ptr<const Ix> network_indices(const TransposeTables& x, std::uint32_t g) {
  using T = std::remove_all_extents_t<decltype(Ix::pre)>;
  constexpr std::uint32_t U = Ix::units;
  auto ix = std::make_shared<Ix>();
  auto& [pre, post, lo, hi, first, last] = *ix;
  const int W = x.lane_bits;
  const std::uint32_t V = 1u << W;
  auto unit = [&](std::uint32_t from_b, std::uint32_t lane, std::uint32_t e) {
    return static_cast<T>(from_b * U + lane * g + e);
  };
  for (std::uint32_t i = 0; i < U; ++i) {
    const std::uint32_t l = i / g, e = i % g;
    for (std::uint32_t v = 0; v < V; ++v) {
      pre[v][i] = unit(0, static_cast<std::uint32_t>(x.pre[v][l]), e);
      post[v][i] = unit(0, static_cast<std::uint32_t>(x.post[v][l]), e);
    }
    for (int q = 0; q < W; ++q) {
      const std::uint32_t bq = 1u << q, from_b = (l >> q) & 1;
      lo[q][i] = unit(from_b, l & ~bq, e);
      hi[q][i] = unit(from_b, l | bq, e);
    }
    if (x.swaps == 0) continue;
    // First exchange (q = W − 1): result v reads lane ℓ from register v's pair member with bit q = ℓ_q, at
    // that register's pre-permuted lane (ℓ with bit q cleared for the low member, set for the high one).
    const std::uint32_t bq = 1u << (W - 1), from_b = (l >> (W - 1)) & 1;
    for (std::uint32_t v = 0; v < V; ++v) {
      const std::uint32_t src = (v & ~bq) | (from_b ? bq : 0), lane = (v & bq) ? (l | bq) : (l & ~bq);
      first[v][i] = unit(from_b, static_cast<std::uint32_t>(x.pre[src][lane]), e);
    }
    // Last exchange (q = W − swaps): result v's lane j is the exchange's lane post[v][j].
    const std::uint32_t bl = 1u << (W - x.swaps);
    for (std::uint32_t v = 0; v < V; ++v) {
      const auto p = static_cast<std::uint32_t>(x.post[v][l]);
      last[v][i] = unit((p & bl) ? 1 : 0, (v & bl) ? (p | bl) : (p & ~bl), e);
    }
  }
  return ix;
}

}  // namespace

std::optional<TransposeTables> make_transpose_tables(const TileTables& t, int elem_bytes) {
  if (t.s > 7) return std::nullopt;  // the tile loops unroll runs of at most 2^7 elements
  // K0: natural index → coordinates in the basis (c_0..c_{s-1}, g_0..g_{m-1}).
  std::vector<BitVec> basis;
  for (int i = 0; i < t.s; ++i) basis.push_back(t.ntau[std::size_t{1} << i]);
  for (int i = 0; i < t.m; ++i) basis.push_back(t.nsig[std::size_t{1} << i]);
  return make_group_tables(basis, t.s, elem_bytes);
}

std::optional<TransposeTables> make_group_tables(const std::vector<BitVec>& basis, int s, int elem_bytes,
                                                 int vector_bytes, const std::vector<std::uint32_t>& rep_first,
                                                 const std::vector<std::uint32_t>& x_first) {
  const int bits = static_cast<int>(basis.size());
  // 2^W lanes of a 32-byte vector (1- and 2-byte elements need the byte permutes of AVX-512 VBMI), or of a
  // 64-byte one for 4- and 8-byte elements.
  const bool wide = vector_bytes == 64 && (elem_bytes == 2 || elem_bytes == 4 || elem_bytes == 8);
  if (vector_bytes != 32 && !wide) return std::nullopt;
  const int W = wide                ? (elem_bytes == 2 ? 5 : elem_bytes == 4 ? 4 : 3)
                : elem_bytes == 1 ? 5
                : elem_bytes == 2 ? 4
                : elem_bytes == 4 ? 3
                : elem_bytes == 8 ? 2
                                  : 0;
  const std::uint32_t V = 1u << W, lane_mask = V - 1;
  if (W == 0 || s < W || bits < 2 * W || bits > 24) return std::nullopt;
  std::vector<std::uint32_t> k0col(bits);
  try {
    for (int b = 0; b < bits; ++b) {
      const std::optional<BitVec> c = coordinates(basis, BitVec{1} << b);
      if (!c) return std::nullopt;
      k0col[b] = static_cast<std::uint32_t>(*c);
    }
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  auto k0 = [&](std::uint32_t p) { return xor_of_columns(k0col, p); };
  // X: the projections of c_0..c_{W-1} onto the aligned indices (low W bits cleared), completed to W
  // directions by aligned unit vectors; then the group representatives complete X to all aligned indices.
  Subspace aligned(bits);
  std::vector<std::uint32_t> xdirs;
  for (int i = 0; i < W; ++i) {
    const auto c = static_cast<std::uint32_t>(basis[i] & ~BitVec{lane_mask});
    if (c != 0 && aligned.insert(c)) xdirs.push_back(c);
  }
  std::vector<std::uint32_t> units;
  for (int b = W; b < bits; ++b) units.push_back(std::uint32_t{1} << b);
  std::vector<std::uint32_t> x_units;
  for (std::uint32_t e : x_first)
    if ((e & lane_mask) == 0 && e >> bits == 0) x_units.push_back(e);
  x_units.insert(x_units.end(), units.begin(), units.end());
  for (std::uint32_t u : complete(aligned, x_units, W - static_cast<int>(xdirs.size()))) xdirs.push_back(u);
  // The representatives' columns: rep_first's directions in order where they are independent, then units.
  std::vector<std::uint32_t> rep_units;
  for (std::uint32_t e : rep_first)
    if ((e & lane_mask) == 0 && e >> bits == 0) rep_units.push_back(e);
  rep_units.insert(rep_units.end(), units.begin(), units.end());
  const std::vector<std::uint32_t> rep_cols = complete(aligned, rep_units, bits);
  if (static_cast<int>(xdirs.size()) != W || static_cast<int>(rep_cols.size()) != bits - 2 * W) return std::nullopt;
  // M: group coordinates (k, ℓ) → (tile vector v in the basis w of the 2^W vectors the group fills, lane j).
  std::array<std::uint32_t, 10> hi{}, lo{};
  for (int i = 0; i < 2 * W; ++i) {
    const std::uint32_t nat = i < W ? xdirs[i] : std::uint32_t{1} << (i - W);
    hi[i] = k0(nat) >> W;
    lo[i] = k0(nat) & lane_mask;
  }
  Subspace vectors(bits - W);
  std::vector<BitVec> w;
  for (int i = 0; i < 2 * W; ++i)
    if (vectors.insert(hi[i])) w.push_back(hi[i]);
  if (static_cast<int>(w.size()) != W) return std::nullopt;
  std::array<std::uint32_t, 10> mcols{};
  for (int i = 0; i < 2 * W; ++i) mcols[i] = static_cast<std::uint32_t>(*coordinates(w, hi[i])) | (lo[i] << W);
  const BitMatrix M = group_map(2 * W, mcols);
  const std::optional<BitMatrix> Minv = inverse(M);
  if (!Minv) return std::nullopt;
  // Bruhat form M = L1·T_r·L2 with L2 = G⁻¹ keeping lanes in lanes and L1 keeping lanes in lanes, r = the
  // rank of the lane → vector block of M. G sends the unswapped lane coordinates onto Z ∩ L and the swapped
  // vector coordinates onto the rest of Z, where Z = M⁻¹(lanes) and L = the input lanes: then
  // L1 = M·G·T_r maps output lanes into output lanes (T_r is its own inverse).
  std::vector<std::uint32_t> lane_units, all_units;
  std::vector<BitVec> zcols;
  for (int q = 0; q < W; ++q) lane_units.push_back(1u << (W + q)), zcols.push_back(Minv->col(W + q));
  for (int q = 0; q < 2 * W; ++q) all_units.push_back(1u << q);
  const Subspace L = Subspace::span(2 * W, std::vector<BitVec>(lane_units.begin(), lane_units.end()));
  const Subspace Z = Subspace::span(2 * W, zcols);
  const Subspace ZL = intersect(Z, L);
  const int r = W - ZL.dim();
  std::array<std::uint32_t, 10> G{};  // G's columns, chosen one by one
  Subspace lanes(2 * W), all(2 * W);
  for (int q = 0; q < W - r; ++q) {
    G[W + q] = static_cast<std::uint32_t>(ZL.basis()[q]);
    lanes.insert(G[W + q]);
    all.insert(G[W + q]);
  }
  const std::vector<std::uint32_t> lane_fill = complete(lanes, lane_units, r);
  for (int q = W - r; q < W; ++q) all.insert(G[W + q] = lane_fill.at(q - (W - r)));
  Subspace zs = ZL;
  std::vector<std::uint32_t> zcand;
  for (BitVec v : Z.basis()) zcand.push_back(static_cast<std::uint32_t>(v));
  const std::vector<std::uint32_t> z_fill = complete(zs, zcand, r);
  for (int q = W - r; q < W; ++q) all.insert(G[q] = z_fill.at(q - (W - r)));
  const std::vector<std::uint32_t> rest = complete(all, all_units, W - r);
  for (int q = 0; q < W - r; ++q) G[q] = rest.at(q);
  const BitMatrix Gm = group_map(2 * W, G);
  const std::optional<BitMatrix> L2 = inverse(Gm);
  if (!L2) return std::nullopt;
  std::array<std::uint32_t, 10> l1cols{};
  for (int i = 0; i < 2 * W; ++i) l1cols[i] = apply(M, apply(Gm, swap_bits(W, r, 1u << i)));
  const BitMatrix L1 = group_map(2 * W, l1cols);
  // Read the blocks: L2 = [[F, 0], [B, A]], L1 = [[C, 0], [E, D]] on (vector, lane).
  std::array<std::uint32_t, 32> F{}, B{}, A{}, C{}, E{}, D{}, Finv{}, Ainv{}, Dinv{};
  for (std::uint32_t v = 0; v < V; ++v) {
    const std::uint32_t l2k = apply(*L2, v), l2l = apply(*L2, v << W);
    const std::uint32_t l1v = apply(L1, v), l1j = apply(L1, v << W);
    if ((l2l & lane_mask) != 0 || (l1j & lane_mask) != 0) return std::nullopt;  // lanes must stay lanes
    F[v] = l2k & lane_mask, B[v] = l2k >> W, A[v] = l2l >> W;
    C[v] = l1v & lane_mask, E[v] = l1v >> W, D[v] = l1j >> W;
  }
  std::uint64_t fseen = 0, aseen = 0, dseen = 0;
  for (std::uint32_t v = 0; v < V; ++v) {
    Finv[F[v]] = v, Ainv[A[v]] = v, Dinv[D[v]] = v;
    fseen |= std::uint64_t{1} << F[v], aseen |= std::uint64_t{1} << A[v], dseen |= std::uint64_t{1} << D[v];
  }
  const std::uint64_t full = (std::uint64_t{1} << V) - 1;
  if (fseen != full || aseen != full || dseen != full) return std::nullopt;
  TransposeTables x;
  x.lane_bits = W;
  x.vector_bytes = vector_bytes;
  x.swaps = r;
  for (std::uint32_t s2 = 0; s2 < V; ++s2) {
    const std::uint32_t k = Finv[s2];
    x.kpos[s2] = xor_of_columns(xdirs, k);
    // W·C·v: the tile-vector offset of transposed vector v = s2
    x.qvec[s2] = static_cast<std::uint32_t>(xor_of_columns(w, C[s2]));
    for (std::uint32_t j = 0; j < V; ++j) {
      x.pre[s2][j] = static_cast<std::int32_t>(Ainv[j ^ B[k]]);
      x.post[s2][j] = static_cast<std::int32_t>(Dinv[j ^ E[s2]]);
    }
  }
  if (wide && elem_bytes == 2)  // vpermb / vpermt2b on 64-byte vectors: 64 byte units, 2 a lane
    x.wide_bytes = network_indices<WideByteIndices>(x, 2);
  else if (wide)  // vpermd / vpermt2d: 16 word units, 1 or 2 a lane
    x.words = network_indices<WordIndices>(x, static_cast<std::uint32_t>(elem_bytes) / 4);
  else if (elem_bytes <= 2)  // vpermb / vpermt2b on 32-byte vectors: 32 byte units
    x.bytes = network_indices<ByteIndices>(x, static_cast<std::uint32_t>(elem_bytes));
  std::vector<std::uint32_t> vec_cols, mu_cols;
  for (std::uint32_t e : rep_cols) {
    vec_cols.push_back(k0(e) >> W);
    mu_cols.push_back(Dinv[k0(e) & lane_mask]);
  }
  x.rep_nat = xor_table(rep_cols);
  x.rep_vec = xor_table(vec_cols);
  x.rep_mu = xor_table(mu_cols);
  // Every tile element must land where phase 2 expects it: tile[K0(p)] = natural element p. Tile vector v,
  // lane j holds transposed element (v, post ⊕ μ), which T_r brings from slot k', lane ℓ'. The group
  // tables are XOR tables of their columns, so group 0 and the groups 2^i check every group.
  for (std::size_t g = 0; g < x.rep_nat.size(); g = g == 0 ? 1 : 2 * g)
    for (std::uint32_t v = 0; v < V; ++v)
      for (std::uint32_t j = 0; j < V; ++j) {
        const std::uint32_t src = swap_bits(W, r, v | ((static_cast<std::uint32_t>(x.post[v][j]) ^ x.rep_mu[g]) << W));
        const std::uint32_t slot = src & lane_mask, lane = src >> W;
        const std::uint32_t p = x.rep_nat[g] ^ x.kpos[slot] ^ static_cast<std::uint32_t>(x.pre[slot][lane]);
        if (k0(p) != (((x.rep_vec[g] ^ x.qvec[v]) << W) | j)) return std::nullopt;
      }
  return x;
}

#if BMMC_CPU_TRANSPOSE_AVX2

bool transpose_blocks_supported(int elem_bytes, bool avx512) {
  return elem_bytes == 4 || elem_bytes == 8 ? has_avx2() : elem_bytes == 1 || elem_bytes == 2 ? avx512 && has_vbmi() : false;
}

namespace {

// S > 0: runs of 2^S elements known at compile time (the CPU planner's runs, so the loops unroll);
// S = 0: read from the pass.
template <bool Stream, int Swaps, int EB, int S>
__attribute__((target("avx2"))) void blocks(const TileTables& t, const TransposeTables& x, const unsigned char* in_raw,
                                            unsigned char* out_raw, std::uint64_t begin, std::uint64_t end,
                                            unsigned char* tile_raw) {
  constexpr int W = EB == 4 ? 3 : 2, V = 1 << W;  // 2^W lanes per vector and vectors per group
  constexpr int Scale = EB / 4;                   // 32-bit lanes per element
  using Elem = std::conditional_t<EB == 4, std::int32_t, std::int64_t>;
  const auto* in = reinterpret_cast<const Elem*>(in_raw);
  auto* out = reinterpret_cast<Elem*>(out_raw);
  auto* tile = reinterpret_cast<Elem*>(tile_raw);
  const std::uint64_t rows = std::uint64_t{1} << t.m;
  const std::size_t groups = x.rep_nat.size();
  const BitVec* rtab = t.rtab.data();
  const BitVec* utab = t.utab.data();
  const int s = S > 0 ? S : t.s;  // an output run is 2^s elements, 2^(s - W) vectors
  const BitVec run_mask = (BitVec{1} << s) - 1;
  const std::uint32_t run_vectors = 1u << (s - W);
  const int run_bytes = EB << s;
  __m256i pre[V], post[V];
  for (int v = 0; v < V; ++v) pre[v] = lane_index<EB>(x.pre[v]), post[v] = lane_index<EB>(x.post[v]);
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  BitVec x0 = t.x0(begin);
  for (std::uint64_t b = begin; b < end; ++b) {
    const BitVec z = t.z(b);
    const BitVec y0 = z & ~run_mask;
    const std::uint32_t dhi = static_cast<std::uint32_t>(z & run_mask) >> W, dlo = z & (V - 1);
    const bool has_next = b + 1 < end || t.prefetch_after;
    const BitVec next_x0 = b + 1 < end ? t.x0(b + 1) : t.prefetch_after.value_or(0);
    // Phase 1: groups of V input vectors (already in L2: prefetched during the previous block's phase 2).
    for (std::size_t g = 0; g < groups; ++g) {
      const std::uint32_t a = x.rep_nat[g];
      __m256i r[V];
#pragma GCC unroll 8
      for (int k = 0; k < V; ++k) {
        const std::uint32_t p = a ^ x.kpos[k];
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + ((x0 ^ rtab[p >> s]) + (p & run_mask))));
        r[k] = _mm256_permutevar8x32_epi32(v, pre[k]);
      }
      if constexpr (EB == 4 && Swaps == 3) {
        transpose8(r);
      } else {
        if constexpr (Swaps >= 1) swap_halves<V>(r);
        if constexpr (Swaps >= 2) swap_quads<V>(r);
      }
      const __m256i mu = _mm256_set1_epi32(static_cast<int>(x.rep_mu[g] * Scale));
      const std::uint32_t vec = x.rep_vec[g];
#pragma GCC unroll 8
      for (int l = 0; l < V; ++l)
        _mm256_store_si256(reinterpret_cast<__m256i*>(tile + ((vec ^ x.qvec[l]) << W)),
                           _mm256_permutevar8x32_epi32(r[l], _mm256_xor_si256(post[l], mu)));
    }
    // Phase 2: output run σ is tile vectors σ·2^(s−W) + (h ⊕ δ_hi), lanes XOR δ_lo; prefetch the next block's
    // row σ into L2 meanwhile (prefetcht2: L1 prefetches of scattered rows stall on the L1 miss buffers).
    const __m256i perm = _mm256_xor_si256(iota, _mm256_set1_epi32(static_cast<int>(dlo * Scale)));
    for (std::uint64_t sigma = 0; sigma < rows; ++sigma) {
      if (has_next) {
        const auto* next = reinterpret_cast<const char*>(in + (next_x0 ^ rtab[sigma]));
        for (int l = 0; l < run_bytes; l += 64) _mm_prefetch(next + l, _MM_HINT_T2);
      }
      auto* dst = reinterpret_cast<__m256i*>(out + (y0 ^ utab[sigma]));
      const Elem* src = tile + (sigma << s);
#pragma GCC unroll 8
      for (std::uint32_t h = 0; h < run_vectors; ++h) {
        __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + ((h ^ dhi) << W)));
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

// 1- and 2-byte elements (AVX-512 VBMI on 32-byte vectors, vbmi_network.hpp): 32 or 16 lanes.
// GCC 12's vpermb intrinsic passes an undefined vector as its unused mask source and then warns about it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

template <bool Stream, int Swaps, int EB, int S>
BMMC_VBMI void blocks_vbmi(const TileTables& t, const TransposeTables& x, const unsigned char* in_raw,
                           unsigned char* out_raw, std::uint64_t begin, std::uint64_t end, unsigned char* tile_raw) {
  constexpr int W = EB == 1 ? 5 : 4, V = 1 << W;  // 2^W lanes per vector and vectors per group
  using Elem = std::conditional_t<EB == 1, std::uint8_t, std::uint16_t>;
  const auto* in = reinterpret_cast<const Elem*>(in_raw);
  auto* out = reinterpret_cast<Elem*>(out_raw);
  auto* tile = reinterpret_cast<Elem*>(tile_raw);
  const std::uint64_t rows = std::uint64_t{1} << t.m;
  const std::size_t groups = x.rep_nat.size();
  const BitVec* rtab = t.rtab.data();
  const BitVec* utab = t.utab.data();
  const int s = S > 0 ? S : t.s;
  const BitVec run_mask = (BitVec{1} << s) - 1;
  const std::uint32_t run_vectors = 1u << (s - W);
  const int run_bytes = EB << s;
  const ByteIndices& ix = *x.bytes;
  BitVec x0 = t.x0(begin);
  for (std::uint64_t b = begin; b < end; ++b) {
    const BitVec z = t.z(b);
    const BitVec y0 = z & ~run_mask;
    const std::uint32_t dhi = static_cast<std::uint32_t>(z & run_mask) >> W, dlo = z & (V - 1);
    const bool has_next = b + 1 < end || t.prefetch_after;
    const BitVec next_x0 = b + 1 < end ? t.x0(b + 1) : t.prefetch_after.value_or(0);
    for (std::size_t g = 0; g < groups; ++g) {
      const std::uint32_t a = x.rep_nat[g];
      __m256i r[V];
#pragma GCC unroll 32
      for (int k = 0; k < V; ++k) {
        const std::uint32_t p = a ^ x.kpos[k];
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + ((x0 ^ rtab[p >> s]) + (p & run_mask))));
        r[k] = _mm256_permutexvar_epi8(load_index(ix.pre[k]), v);
      }
      exchange_lane_bits<W, Swaps>(r, ix);
      const __m256i mu = _mm256_set1_epi8(static_cast<char>(x.rep_mu[g] * EB));
      const std::uint32_t vec = x.rep_vec[g];
#pragma GCC unroll 32
      for (int l = 0; l < V; ++l)
        _mm256_store_si256(reinterpret_cast<__m256i*>(tile + ((vec ^ x.qvec[l]) << W)),
                           _mm256_permutexvar_epi8(_mm256_xor_si256(load_index(ix.post[l]), mu), r[l]));
    }
    const __m256i perm = _mm256_xor_si256(_mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                                           18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31),
                                          _mm256_set1_epi8(static_cast<char>(dlo * EB)));
    for (std::uint64_t sigma = 0; sigma < rows; ++sigma) {
      if (has_next) {
        const auto* next = reinterpret_cast<const char*>(in + (next_x0 ^ rtab[sigma]));
        for (int l = 0; l < run_bytes; l += 64) _mm_prefetch(next + l, _MM_HINT_T2);
      }
      auto* dst = reinterpret_cast<__m256i*>(out + (y0 ^ utab[sigma]));
      const Elem* src = tile + (sigma << s);
#pragma GCC unroll 8
      for (std::uint32_t h = 0; h < run_vectors; ++h) {
        __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + ((h ^ dhi) << W)));
        if (dlo != 0) v = _mm256_permutexvar_epi8(perm, v);
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
#pragma GCC diagnostic pop

using Loop = void (*)(const TileTables&, const TransposeTables&, const unsigned char*, unsigned char*, std::uint64_t,
                      std::uint64_t, unsigned char*);

// The loop for (element size, exchanged lane bits, stream), with its run length fixed at compile time when it
// is the CPU planner's (2^5 elements for 4/8 bytes, 128 bytes for 1/2 bytes).
template <int EB, int Swaps>
Loop pick_run(bool stream, int s) {
  constexpr int kPlannerRun = EB == 1 ? 7 : EB == 2 ? 6 : 5;
  auto fixed = [&]<int S>() -> Loop {
    if constexpr (EB >= 4)
      return stream ? &blocks<true, Swaps, EB, S> : &blocks<false, Swaps, EB, S>;
    else
      return stream ? &blocks_vbmi<true, Swaps, EB, S> : &blocks_vbmi<false, Swaps, EB, S>;
  };
  return s == kPlannerRun ? fixed.template operator()<kPlannerRun>() : fixed.template operator()<0>();
}

template <int EB, int... Swaps>
Loop pick_swaps(int swaps, bool stream, int s, std::integer_sequence<int, Swaps...>) {
  Loop loop = nullptr;
  ((swaps == Swaps ? (loop = pick_run<EB, Swaps>(stream, s), 0) : 0), ...);
  return loop;
}

Loop pick_loop(int lane_bits, int swaps, bool stream, int s) {
  switch (lane_bits) {
    case 2: return pick_swaps<8>(swaps, stream, s, std::make_integer_sequence<int, 3>{});
    case 3: return pick_swaps<4>(swaps, stream, s, std::make_integer_sequence<int, 4>{});
    case 4: return pick_swaps<2>(swaps, stream, s, std::make_integer_sequence<int, 5>{});
    default: return pick_swaps<1>(swaps, stream, s, std::make_integer_sequence<int, 6>{});
  }
}

}  // namespace

void run_blocks_transpose(const TileTables& t, const TransposeTables& x, bool stream, const unsigned char* in,
                          unsigned char* out, std::uint64_t begin, std::uint64_t end, unsigned char* tile) {
  using Loop = void (*)(const TileTables&, const TransposeTables&, const unsigned char*, unsigned char*,
                        std::uint64_t, std::uint64_t, unsigned char*);
  if (x.lane_bits < 2 || x.lane_bits > 5 || x.swaps < 0 || x.swaps > x.lane_bits)
    throw std::invalid_argument("run_blocks_transpose: lane_bits must be 2..5 and swaps 0..lane_bits");
  if (x.vector_bytes != 32)  // the tile loops run 32-byte vectors; 64-byte tables are the direct loop's
    throw std::invalid_argument("run_blocks_transpose: tables of 64-byte vectors are for the direct loop only");
  const Loop loop = pick_loop(x.lane_bits, x.swaps, stream, t.s);
  loop(t, x, in, out, begin, end, tile);
}

#else

bool transpose_blocks_supported(int, bool) { return false; }

void run_blocks_transpose(const TileTables&, const TransposeTables&, bool, const unsigned char*, unsigned char*,
                          std::uint64_t, std::uint64_t, unsigned char*) {
  throw std::logic_error("run_blocks_transpose: this build has no AVX2 code path");
}

#endif

}  // namespace bmmc::cpu_detail
