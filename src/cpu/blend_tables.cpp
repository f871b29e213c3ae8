// The blend transposes' tables (see direct_blocks.hpp, DirectTables::blend, and docs/DESIGN.md §4.2): the
// decomposition M = U_a·T·U_b·(ℓ ⊕= E·k) of a group's map, the Gray-walk columns of the group
// representatives, and the element-by-element check that simulates the loop's register moves.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/subspace.hpp"
#include "direct_blocks.hpp"

namespace bmmc::cpu_detail {

namespace {

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
}  // namespace

bool make_blend_tables(const Bmmc& bmmc, int elem_bytes, DirectTables& d) {
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

}  // namespace bmmc::cpu_detail
