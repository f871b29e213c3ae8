#include "bmmc/core/involution.hpp"

#include <fmt/format.h>

#include <optional>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "bmmc/core/factorize.hpp"
#include "bmmc/core/subspace.hpp"

// Notation below: S_1..S_k are linear involutions with S_1 applied first, so A = S_k·…·S_1, and the affine
// factors g_i = (S_i, c_i) compose as f = g_k ∘ … ∘ g_1 (compose(f, g) = f ∘ g applies g first, and
// (A, a) ∘ (B, b) = (A·B, A·b ⊕ a), bmmc.hpp). Every route ends in factor_involutions_explained(), which
// multiplies the factors back and checks each one, so a slip in the algebra is a logic_error, never a
// wrong answer.

namespace bmmc {

namespace {

using Linear = std::vector<BitMatrix>;  // linear involutions, the first one applied first

BitMatrix eye(int n) { return BitMatrix::identity(n); }

bool is_linear_involution(const BitMatrix& s) { return s * s == eye(s.rows()); }

// ker M, as a basis: {x : <row_i, x> = 0 for every i} is the annihilator of the row space.
std::vector<BitVec> kernel(const BitMatrix& m) {
  return Subspace::span(m.cols(), m.row_list()).annihilator().basis();
}

Linear without_identities(const Linear& s) {
  Linear out;
  for (const BitMatrix& m : s)
    if (m != eye(m.rows())) out.push_back(m);
  return out;
}

// ---- BPC (step 2) -----------------------------------------------------------------------------------------
//
// P·e_j = e_{p(j)}. A cycle a_0 → a_1 → … → a_{k-1} → a_0 (p(a_i) = a_{i+1}) is, in the cycle's own index,
// i ↦ i+1 (mod k). The reflections S1: i ↦ −i and S2: i ↦ 1−i are involutions and S2·S1: i ↦ 1−(−i) = i+1,
// so P = S2·S1 with S1 applied first; S1 fixes a_0, S2 maps a_0 to a_1. Doing this on every cycle at once
// (fixed bits are fixed by both) gives P = S2·S1 on all n bits.
//
// The complement. With t_d(x) = x ⊕ d (an involution), t_d ∘ (P, c) ∘ t_d = (P, c ⊕ (P⊕I)·d). On one cycle
// ((P⊕I)d)_{a_i} = d_{a_{i-1}} ⊕ d_{a_i}, whose image is exactly the even-parity vectors of the cycle; so d can
// turn the cycle's part of c into 0 (even parity) or into e_{a_1} (odd parity): with w = c|cycle ⊕ target
// (even), d_{a_0} = 0 and d_{a_i} = d_{a_{i-1}} ⊕ w_{a_i} solve (P⊕I)d = w on the cycle (the equation at a_0
// holds because w has even parity). Then f' = (P, c') with c' = Σ_{odd cycles} e_{a_1} ⊕ (c on fixed bits)
// is g2 ∘ g1 with g1 = (S1, u), u = Σ_{odd cycles} e_{a_0} ⊕ (c on fixed bits), and g2 = (S2, 0): indeed
// g2 ∘ g1 = (S2·S1, S2·u) and S2·e_{a_0} = e_{a_1}, S2 fixes the fixed bits; S1·u = u, so g1 is an
// involution. Conjugating back, f = t_d ∘ f' ∘ t_d = (t_d g2 t_d) ∘ (t_d g1 t_d), and t_d ∘ (S, v) ∘ t_d =
// (S, v ⊕ (S⊕I)·d):  g1' = (S1, u ⊕ (S1⊕I)d),  g2' = (S2, (S2⊕I)d), both involutions (conjugates of ones).

struct BpcSplit {
  BitMatrix s1, s2;  // P = s2·s1
  BitVec u = 0, d = 0;
};

BpcSplit split_bpc(const BitMatrix& p_matrix, BitVec c) {
  const int n = p_matrix.rows();
  std::vector<int> p(n);
  for (int j = 0; j < n; ++j) p[j] = __builtin_ctzll(p_matrix.col(j));
  BpcSplit r{BitMatrix(n, n), BitMatrix(n, n)};
  BitVec seen = 0;
  for (int start = 0; start < n; ++start) {
    if ((seen >> start) & 1) continue;
    std::vector<int> a;
    for (int x = start; !((seen >> x) & 1); x = p[x]) {
      seen |= BitVec{1} << x;
      a.push_back(x);
    }
    const int k = static_cast<int>(a.size());
    for (int i = 0; i < k; ++i) {
      r.s1.set(a[(k - i) % k], a[i], true);      // S1·e_{a_i} = e_{a_{-i}}
      r.s2.set(a[(k + 1 - i) % k], a[i], true);  // S2·e_{a_i} = e_{a_{1-i}}
    }
    if (k == 1) {
      r.u |= c & (BitVec{1} << a[0]);  // a fixed bit: its complement rides in g1 (S1 and S2 both fix it)
      continue;
    }
    int odd = 0;
    for (int x : a) odd ^= static_cast<int>((c >> x) & 1);
    BitVec w = 0;
    for (int x : a) w |= c & (BitVec{1} << x);
    if (odd) {
      w ^= BitVec{1} << a[1];
      r.u |= BitVec{1} << a[0];
    }
    int prev = 0;  // d_{a_0} = 0
    for (int i = 1; i < k; ++i) {
      prev ^= static_cast<int>((w >> a[i]) & 1);
      r.d |= BitVec(prev) << a[i];
    }
  }
  return r;
}

std::vector<Bmmc> bpc_factors(const Bmmc& f) {
  const int n = f.n();
  const BpcSplit s = split_bpc(f.matrix(), f.complement());
  const BitVec e1 = (s.s1 + eye(n)).apply(s.d), e2 = (s.s2 + eye(n)).apply(s.d);
  std::vector<Bmmc> out;
  for (const Bmmc& g : {Bmmc(s.s1, s.u ^ e1), Bmmc(s.s2, e2)})
    if (!g.is_identity()) out.push_back(g);
  return out;
}

// The linear half of split_bpc, identities dropped: 1 involution for a permutation of order 2, else 2.
Linear bpc_linear(const BitMatrix& p) {
  const BpcSplit s = split_bpc(p, 0);
  return without_identities({s.s1, s.s2});
}

// ---- Unipotent (step 3) -----------------------------------------------------------------------------------
//
// N = A ⊕ I is nilpotent. A Jordan basis of N is a set of chain heads v, each with a length ℓ, such that the
// vectors N^i·v (0 ≤ i < ℓ) form a basis and N^ℓ·v = 0. Standard construction with K_j = ker N^j: for
// j = m, m-1, …, 1 (N^m = 0), the chain vectors already at level j (N^{ℓ-j}·v for chains with ℓ > j) are
// independent modulo K_{j-1}; extend them by vectors of a basis of K_j to a basis of K_j modulo K_{j-1}, each
// new vector being the head of a chain of length j.
//
// On the chain of v, identify N^i·v with t^i in F2[t]/(t^ℓ); N acts as t and A = I ⊕ N as 1+t. The algebra
// map σ: t ↦ t/(1+t) is well defined (t/(1+t) is t times a unit, so its ℓ-th power vanishes) and is an
// involution: σ(σ(t)) = (t/(1+t)) / (1 + t/(1+t)) = (t/(1+t)) / (1/(1+t)) = t, since 1+t+t = 1 over F2.
// S(N^i·v) = (N·A⁻¹)^i·v is σ on every chain, so S² = I, and S·A = σ(1+t)·S = (1/(1+t))·S = A⁻¹·S, i.e.
// S·A·S = A⁻¹. Hence (S·A)² = S·A·S·A = I and A = S·(S·A): S·A is applied first, S second.
// S fixes every head (σ(1) = 1), and the heads span F2^n modulo Im N; this is what makes every complement fit
// (attach_complement below). S = I exactly when every chain has length ≤ 2 (σ(t) = t − t² + …), i.e. A² = I.

struct Chain {
  BitVec head;
  int length;
};

std::vector<Chain> jordan_chains(const BitMatrix& nil) {
  const int n = nil.rows();
  std::vector<Subspace> ker{Subspace(n)};  // ker[j] = ker N^j
  BitMatrix power = eye(n);
  while (ker.back().dim() < n) {
    if (static_cast<int>(ker.size()) > n) throw std::logic_error("internal error: jordan_chains: N is not nilpotent");
    power = power * nil;
    ker.push_back(Subspace::span(n, power.row_list()).annihilator());
  }
  std::vector<Chain> chains;
  for (int j = static_cast<int>(ker.size()) - 1; j >= 1; --j) {
    Subspace level = ker[j - 1];
    for (const Chain& ch : chains) {
      BitVec v = ch.head;
      for (int i = 0; i < ch.length - j; ++i) v = nil.apply(v);
      level.insert(v);
    }
    for (BitVec b : ker[j].basis())
      if (level.insert(b)) chains.push_back({b, j});
  }
  return chains;
}

bool is_unipotent(const BitMatrix& a) {
  const int n = a.rows();
  const BitMatrix nil = a + eye(n);
  BitMatrix power = nil;
  // N^n = 0 for a nilpotent N; squaring reaches an exponent ≥ n in ⌈log2 n⌉ steps.
  for (int e = 1; e < n; e *= 2) power = power * power;
  return power == BitMatrix(n, n);
}

// S with S² = I and S·A·S = A⁻¹ for a unipotent A (the map above).
BitMatrix unipotent_reflection(const BitMatrix& a) {
  const int n = a.rows();
  const BitMatrix nil = a + eye(n);
  const BitMatrix m = nil * a.inverse();  // N·A⁻¹: t/(1+t)
  std::vector<BitVec> basis, image;
  for (const Chain& ch : jordan_chains(nil)) {
    BitVec v = ch.head, w = ch.head;
    for (int i = 0; i < ch.length; ++i, v = nil.apply(v), w = m.apply(w)) {
      basis.push_back(v);
      image.push_back(w);
    }
  }
  return BitMatrix::from_cols(n, image) * BitMatrix::from_cols(n, basis).inverse();
}

// A = S·(S·A): [S·A, S], identities dropped (one involution when A² = I).
Linear unipotent_linear(const BitMatrix& a) {
  const BitMatrix s = unipotent_reflection(a);
  return without_identities({s * a, s});
}

// ---- The complement (step 5) ------------------------------------------------------------------------------
//
// For f = g_k ∘ … ∘ g_1 with g_i = (S_i, c_i): by induction g_i ∘ … ∘ g_1 = (S_i⋯S_1, c_i ⊕ S_i·(previous)),
// so the complement is
//     c = c_k ⊕ S_k·c_{k-1} ⊕ S_k·S_{k-1}·c_{k-2} ⊕ … ⊕ S_k⋯S_2·c_1,   c_i ∈ Fix(S_i) = ker(S_i ⊕ I)
// (S_i·c_i = c_i is what makes g_i an involution: g_i ∘ g_i = (S_i², S_i·c_i ⊕ c_i)). Writing each c_i in a
// basis of Fix(S_i) makes this a linear system over F2; Gaussian elimination keeps, with each row, the c_i it
// stands for. If c is outside the reachable space V, the residue r of c modulo V is split off as one more
// factor, the translation (I, r), applied last: then the g_i must produce c ⊕ r, which lies in V.
//
// When the last two factors are [S·A', S] from unipotent_linear, V is everything: V ⊇ Fix(S) + S·Fix(S·A'),
// which contains Im(A' ⊕ I) (for any x, (S_2·S_1 ⊕ I)x = S_2·(S_1x ⊕ x) ⊕ (S_2x ⊕ x), with S_1x ⊕ x ∈ Fix(S_1)
// and S_2x ⊕ x ∈ Fix(S_2)) and the chain heads (fixed by S), which together span F2^n. So the translation is
// only ever needed when the last linear factor is an involution of order ≤ 2 standing alone.

std::vector<Bmmc> attach_complement(const Linear& s, BitVec c, int n) {
  const int k = static_cast<int>(s.size());
  struct Row {
    BitVec val;
    std::vector<BitVec> parts;  // val = Σ_i S_k⋯S_{i+1}·parts[i]
  };
  std::vector<Row> rows;
  BitMatrix after = eye(n);  // S_k⋯S_{i+1}
  for (int i = k - 1; i >= 0; --i) {
    for (BitVec b : kernel(s[i] + eye(n))) {
      Row r{after.apply(b), std::vector<BitVec>(k, 0)};
      r.parts[i] = b;
      for (const Row& q : rows)
        if (r.val & (q.val & -q.val)) {
          r.val ^= q.val;
          for (int t = 0; t < k; ++t) r.parts[t] ^= q.parts[t];
        }
      if (r.val) rows.push_back(std::move(r));
    }
    after = after * s[i];
  }
  BitVec residue = c;
  std::vector<BitVec> parts(k, 0);
  for (const Row& q : rows)
    if (residue & (q.val & -q.val)) {
      residue ^= q.val;
      for (int t = 0; t < k; ++t) parts[t] ^= q.parts[t];
    }
  std::vector<Bmmc> out;
  for (int i = 0; i < k; ++i) out.emplace_back(s[i], parts[i]);
  if (residue) out.emplace_back(eye(n), residue);
  return out;
}

// ---- General A (step 4) -----------------------------------------------------------------------------------
//
// If Q⁻¹·A·Q = L·U (no pivoting), A = (Q·L·Q⁻¹)·(Q·U·Q⁻¹), two unipotents: Q·U·Q⁻¹ applied first. Q = I works
// when every leading principal minor of A is 1. Otherwise Q is built column by column (Sourour's argument,
// which over F2 needs no hypothesis at all): suppose the leading k×k block of M = Q⁻¹AQ already has an LU
// and let s be the first column of its Schur complement (column k of M after eliminating columns 0..k-1).
// If s_k = 0, pick j > k with s_j = 1 (it exists: M is invertible) and conjugate by the transvection
// T = I ⊕ E_kj = T⁻¹. T fixes e_0..e_{k-1} and the first k rows' functionals, so the leading block is
// unchanged and the Schur complement is conjugated by T's lower-right block; its new corner is
// (e_k ⊕ e_j)ᵀ·S·e_k = s_k ⊕ s_j = 1. So every pivot becomes 1 after at most n transvections.

BitMatrix lu_conjugator(const BitMatrix& a) {
  const int n = a.rows();
  std::vector<BitVec> m = a.row_list();
  std::vector<BitVec> q = eye(n).row_list();
  for (int k = 0; k < n; ++k) {
    std::vector<BitVec> w = m;
    for (int p = 0; p < k; ++p)
      for (int i = p + 1; i < n; ++i)
        if ((w[i] >> p) & 1) w[i] ^= w[p];
    if ((w[k] >> k) & 1) continue;
    int j = k + 1;
    while (j < n && !((w[j] >> k) & 1)) ++j;
    if (j == n) throw std::logic_error("internal error: lu_conjugator met a singular Schur complement");
    // M ← T·M·T: row k ^= row j, then column j ^= column k; Q ← Q·T: column j ^= column k.
    m[k] ^= m[j];
    for (BitVec& row : m) row ^= ((row >> k) & 1) << j;
    for (BitVec& row : q) row ^= ((row >> k) & 1) << j;
  }
  return BitMatrix::from_rows(n, q);
}

// The two unipotents of the LU route under the conjugator q, or nothing when Q⁻¹AQ needs pivoting.
std::optional<std::pair<BitMatrix, BitMatrix>> conjugated_lu(const BitMatrix& a, const BitMatrix& q,
                                                             const BitMatrix& q_inv) {
  const LupFactors f = lup(q_inv * a * q);
  if (f.p != eye(a.rows())) return std::nullopt;
  return std::make_pair(q * f.u * q_inv, q * f.l * q_inv);  // (first, second)
}

Linear concat(Linear a, const Linear& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Shorter routes for some structured A: one triangular factor of an LUP/ULP of A or of Aᵀ is I, so A is a
// permutation times a unipotent. We arrange the unipotent last (A = T·P, or P·T = (P·T·P⁻¹)·P) so that its
// pair absorbs any complement. Pays off when P or T is an involution (3 factors instead of 4).
std::vector<std::pair<BitMatrix, BitMatrix>> permutation_times_unipotent(const BitMatrix& a) {
  const int n = a.rows();
  std::vector<std::pair<BitMatrix, BitMatrix>> out;  // (P, T) with A = T·P
  const LupFactors f = lup(a);
  if (f.l == eye(n)) out.emplace_back(f.p, f.u);
  if (f.u == eye(n)) out.emplace_back(f.p, f.l);
  const UlpFactors g = ulp(a);
  if (g.l == eye(n)) out.emplace_back(g.p, g.u);
  if (g.u == eye(n)) out.emplace_back(g.p, g.l);
  // Aᵀ = X·P' with X triangular ⇒ A = P'ᵀ·Xᵀ = (P'ᵀ·Xᵀ·P')·P'ᵀ.
  const LupFactors h = lup(a.transpose());
  const BitMatrix pt = h.p.transpose();
  if (h.l == eye(n)) out.emplace_back(pt, pt * h.u.transpose() * h.p);
  if (h.u == eye(n)) out.emplace_back(pt, pt * h.l.transpose() * h.p);
  return out;
}

// ---- A shorter general route: an involution I ⊕ U·Vᵀ times a unipotent ---------------------------------
//
// J = I ⊕ U·Vᵀ (U, V of r columns) with Vᵀ·U = 0 is an involution: J² = I ⊕ U·(Vᵀ·U)·Vᵀ = I; for r = 1 it is
// a transvection. J·A = A ⊕ U·Wᵀ with W = Aᵀ·V is a rank-r update of A, and pole placement can give it any
// characteristic polynomial p, here p(x) = (x+1)^n, i.e. make J·A unipotent. Single input (Ackermann): when
// (A₀, u) is controllable, i.e. C = [u, A₀·u, …, A₀^{n-1}·u] is invertible, wᵀ = e_{n-1}ᵀ·C⁻¹·p(A₀) is the one
// row with char(A₀ ⊕ u·wᵀ) = p. r = 1: A₀ = A, U = u, W = w; this works for cyclic A (minimal polynomial =
// characteristic polynomial, most matrices). r = 2 (Heymann's lemma, for A with two invariant factors): a
// random first update A₀ = A ⊕ U·W₀ᵀ, then u = U·g for a random g, and W = W₀ ⊕ w·gᵀ. Either way
// V = A⁻ᵀ·W is then fixed, and J is an involution iff Vᵀ·U = 0: r² bits, so random tries succeed about
// 2^(-r²) of the time. Then A = (A·J)·J with A·J = J·(J·A)·J unipotent: J first (1 involution), A·J's pair
// last (2), which also absorbs any complement. 3 in all.
constexpr int kPoleTries[] = {0, 64, 256};  // tries for r = 1, 2
constexpr std::uint64_t kPoleSeed = 0x7a3c91e5d2b40f68ULL;

BitMatrix power(const BitMatrix& m, int e) {
  BitMatrix r = eye(m.rows()), b = m;
  for (; e; e >>= 1, b = b * b)
    if (e & 1) r = r * b;
  return r;
}

// (J, A·J) with J = I ⊕ U·Vᵀ an involution of rank(J ⊕ I) ≤ r and A·J unipotent, or nothing when the tries
// run out.
std::optional<std::pair<BitMatrix, BitMatrix>> involution_times_unipotent(const BitMatrix& a, int r) {
  const int n = a.rows();
  const BitMatrix a_inv_t = a.inverse().transpose();
  const BitMatrix p_of_a_t = power(a + eye(n), n).transpose();  // p(A)ᵀ, the one r = 1 needs
  std::mt19937_64 rng(kPoleSeed + static_cast<std::uint64_t>(r));
  for (int t = 0; t < kPoleTries[r]; ++t) {
    std::vector<BitVec> u(r), w(r, 0);
    for (BitVec& x : u) x = rng() & low_mask(n);
    BitMatrix a0 = a;
    BitVec g = 1;
    if (r > 1) {
      for (BitVec& x : w) x = rng() & low_mask(n);
      for (int s = 0; s < r; ++s)
        for (int i = 0; i < n; ++i)
          if ((u[s] >> i) & 1) a0.set_row(i, a0.row(i) ^ w[s]);
      g = rng() & low_mask(r);
    }
    BitVec u1 = 0;
    for (int s = 0; s < r; ++s)
      if ((g >> s) & 1) u1 ^= u[s];
    std::vector<BitVec> krylov{u1};
    for (int i = 1; i < n; ++i) krylov.push_back(a0.apply(krylov.back()));
    const BitMatrix c = BitMatrix::from_cols(n, krylov);
    if (!c.invertible()) continue;
    const BitMatrix p_t = r == 1 ? p_of_a_t : power(a0 + eye(n), n).transpose();
    const BitVec w1 = p_t.apply(c.inverse().row(n - 1));  // wᵀ = e_{n-1}ᵀ·C⁻¹·p(A₀)
    bool ok = true;
    std::vector<BitVec> v(r);
    for (int s = 0; s < r; ++s) v[s] = a_inv_t.apply(w[s] ^ (((g >> s) & 1) ? w1 : 0));
    for (int s = 0; s < r && ok; ++s)
      for (int q = 0; q < r && ok; ++q) ok = !parity(v[s] & u[q]);  // Vᵀ·U = 0
    if (!ok) continue;
    BitMatrix j = eye(n);
    for (int s = 0; s < r; ++s)
      for (int i = 0; i < n; ++i)
        if ((u[s] >> i) & 1) j.set_row(i, j.row(i) ^ v[s]);
    if (j == eye(n)) continue;
    const BitMatrix b = a * j;
    if (is_unipotent(b)) return std::make_pair(j, b);
  }
  return std::nullopt;
}

// Random conjugators tried in search of an LU with an involution factor (3 instead of 4). The chance of one
// falls fast with n (a random unitriangular matrix squares to I with probability about 2^(-n²/4)), so the
// search only runs for small n. Fixed seed: the result is deterministic.
constexpr int kSearchMaxN = 8;
constexpr int kSearchTries = 300;
constexpr std::uint64_t kSearchSeed = 0x1d2a7b5c3e4f6091ULL;

struct Candidate {
  std::vector<Bmmc> factors;
  const char* route;
};

Candidate general_route(const Bmmc& f) {
  const int n = f.n();
  const BitMatrix& a = f.matrix();
  const BitVec c = f.complement();
  std::optional<Candidate> best;
  auto offer = [&](const Linear& lin, const char* route) {
    std::vector<Bmmc> g = attach_complement(without_identities(lin), c, n);
    if (!best || g.size() < best->factors.size()) best = Candidate{std::move(g), route};
  };
  auto lu_linear = [&](const std::pair<BitMatrix, BitMatrix>& fs) {
    return concat(unipotent_linear(fs.first), unipotent_linear(fs.second));
  };
  // The short routes first (3 factors), then the LU route, which always succeeds (≤ 4) and for small n may
  // give 2 or 3 (L or U an involution), then, for small n only, more conjugators in search of that.
  for (int r = 1; r <= 2 && !best; ++r)
    if (const auto jb = involution_times_unipotent(a, r))
      offer(concat({jb->first}, unipotent_linear(jb->second)), "involution-unipotent");
  for (const auto& [p, t] : permutation_times_unipotent(a))
    if (is_linear_involution(p) || is_linear_involution(t))
      offer(concat(bpc_linear(p), unipotent_linear(t)), "permutation-unipotent");
  if (!best || best->factors.size() > 3 || n <= kSearchMaxN) {
    const BitMatrix q0 = lu_conjugator(a);
    const auto lu0 = conjugated_lu(a, q0, q0.inverse());
    if (!lu0) throw std::logic_error("internal error: the LU conjugator left a matrix that needs pivoting");
    offer(lu_linear(*lu0), "general");
  }
  if (n <= kSearchMaxN && best->factors.size() > 2) {
    std::mt19937_64 rng(kSearchSeed);
    for (int t = 0; t < kSearchTries && best->factors.size() > 2; ++t) {
      std::vector<BitVec> rows(n);
      for (BitVec& r : rows) r = rng() & low_mask(n);
      const BitMatrix q = BitMatrix::from_rows(n, rows);
      if (!q.invertible()) continue;
      const BitMatrix q_inv = q.inverse();
      const auto lu = conjugated_lu(a, q, q_inv);
      if (lu && (is_linear_involution(lu->first) || is_linear_involution(lu->second)))
        offer(lu_linear(*lu), "general");
    }
  }
  return std::move(*best);
}

}  // namespace

bool is_involution(const Bmmc& f) {
  return f.matrix() * f.matrix() == eye(f.n()) && f.matrix().apply(f.complement()) == f.complement();
}

int carried_low_bits(const Bmmc& f) {
  int s = 0;
  while (s < f.n() && f.matrix().col(s) == BitVec{1} << s && f.matrix().row(s) == BitVec{1} << s &&
         !((f.complement() >> s) & 1))
    ++s;
  return s;
}

Bmmc swap_index_bits(int n, const std::vector<std::pair<int, int>>& pairs) {
  if (n < 0 || n > 64)
    throw std::invalid_argument(fmt::format("swap_index_bits: n must be between 0 and 64 index bits, got {}", n));
  std::vector<int> owner(n, -1);  // which pair already uses each bit
  BitMatrix a = eye(n);
  for (int p = 0; p < static_cast<int>(pairs.size()); ++p) {
    const auto [i, j] = pairs[p];
    if (i < 0 || i >= n || j < 0 || j >= n)
      throw std::invalid_argument(fmt::format(
          "swap_index_bits: pair {} ({}, {}) names a bit outside 0..{} (n = {})", p, i, j, n - 1, n));
    if (i == j)
      throw std::invalid_argument(
          fmt::format("swap_index_bits: pair {} ({}, {}) swaps bit {} with itself; the two bits must differ", p,
                      i, j, i));
    for (int b : {i, j})
      if (owner[b] >= 0)
        throw std::invalid_argument(fmt::format(
            "swap_index_bits: pair {} ({}, {}) reuses bit {}, already swapped by pair {} ({}, {}); pairs must "
            "be disjoint",
            p, i, j, b, owner[b], pairs[owner[b]].first, pairs[owner[b]].second));
    owner[i] = owner[j] = p;
    a.set_row(i, BitVec{1} << j);
    a.set_row(j, BitVec{1} << i);
  }
  return Bmmc(a);
}

InvolutionFactorization factor_involutions_explained(const Bmmc& f) {
  const int n = f.n();
  InvolutionFactorization r;
  if (f.is_identity()) {
    r = {{}, "identity", 0};
  } else if (is_involution(f)) {
    r = {{f}, "involution", 1};
  } else if (f.is_bpc()) {
    r = {bpc_factors(f), "bpc", 2};
  } else if (is_unipotent(f.matrix())) {
    r = {attach_complement(unipotent_linear(f.matrix()), f.complement(), n), "unipotent", 2};
  } else {
    Candidate g = general_route(f);
    r = {std::move(g.factors), g.route, 4};
  }
  // The check every route answers to: involutions, none the identity, at most the bound, composing to f.
  Bmmc product(eye(n));
  for (const Bmmc& g : r.factors) {
    if (!is_involution(g) || g.is_identity())
      throw std::logic_error(fmt::format("internal error: factor_involutions ({} route) produced a factor that is "
                                         "not a non-identity involution:\n{}",
                                         r.route, g.to_string()));
    product = compose(g, product);
  }
  if (product != f || static_cast<int>(r.factors.size()) > r.bound)
    throw std::logic_error(fmt::format("internal error: factor_involutions ({} route) produced {} factors "
                                       "(bound {}) whose product is{} the input",
                                       r.route, r.factors.size(), r.bound, product == f ? "" : " not"));
  return r;
}

std::vector<Bmmc> factor_involutions(const Bmmc& f) { return factor_involutions_explained(f).factors; }

}  // namespace bmmc
