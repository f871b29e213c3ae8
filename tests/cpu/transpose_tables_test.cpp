// The register-transpose tables (src/cpu/transpose_blocks.hpp) checked on their own, without AVX: property
// tests over random tile relabellings and over the tiles of real CPU plans. Each check rebuilds what the
// tables mean from plain F2 matrix algebra (BitMatrix inverse, product, rank) instead of trusting the
// builder's own self-check:
//  - applied to index vectors exactly as the SIMD loop applies them (load 2^W vectors at rep ⊕ kpos[k], lane
//    permutation pre, exchange of the r highest lane bits with vector bits, lane permutation post ⊕ μ, store
//    at tile vector rep_vec ⊕ qvec[v]), every group puts natural element p at tile[K0(p)], K0 = N⁻¹ where
//    N's columns are the tile basis c_0..c_{s−1}, g_0..g_{m−1};
//  - the Bruhat form: the group map M (slot k, lane ℓ) → (tile vector, lane) equals L1·T_r·L2 as a matrix
//    product, with L2 and L1 linear maps that keep lanes in lanes (pre and post) and r = the rank of M's
//    lane → vector block;
//  - shapes the loops cannot run, and singular bases, give nullopt;
//  - the group index's columns follow the directions offered first (rep_first), and the direct loop's order
//    of them (set_changing_first) puts the directions that change both sides' L1 sets first.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "../../src/cpu/direct_blocks.hpp"
#include "../../src/cpu/tile_tables.hpp"
#include "../../src/cpu/transpose_blocks.hpp"
#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/executor.hpp"

namespace bmmc {
namespace {

using cpu_detail::make_transpose_tables;
using cpu_detail::TileTables;
using cpu_detail::TransposeTables;
using cpu_detail::xor_table;

int lane_bits_of(int elem_bytes) { return elem_bytes == 1 ? 5 : elem_bytes == 2 ? 4 : elem_bytes == 4 ? 3 : 2; }

// Tile tables whose basis (c_0..c_{s-1}, g_0..g_{m-1}) is the columns of N. Only s, m, ntau and nsig matter to
// make_transpose_tables.
TileTables tile_with_basis(int s, int m, const BitMatrix& N) {
  TileTables t;
  t.s = s;
  t.m = m;
  std::vector<std::uint32_t> c, g;
  for (int i = 0; i < s; ++i) c.push_back(static_cast<std::uint32_t>(N.col(i)));
  for (int i = 0; i < m; ++i) g.push_back(static_cast<std::uint32_t>(N.col(s + i)));
  t.ntau = xor_table(c);
  t.nsig = xor_table(g);
  return t;
}

// The basis matrix N of a tile: column i = ntau[2^i] (i < s), column s + i = nsig[2^i].
BitMatrix basis_of(const TileTables& t) {
  std::vector<BitVec> cols;
  for (int i = 0; i < t.s; ++i) cols.push_back(t.ntau[std::size_t{1} << i]);
  for (int i = 0; i < t.m; ++i) cols.push_back(t.nsig[std::size_t{1} << i]);
  return BitMatrix::from_cols(t.s + t.m, cols);
}

// A random invertible N of s + m bits whose first `fixed` columns are e_0..e_{fixed-1}: those run bits keep
// their natural lane, so at most W − fixed lane bits are exchanged with vector bits (r ≤ W − fixed).
BitMatrix random_basis(int bits, int fixed, std::mt19937_64& rng) {
  for (;;) {
    std::vector<BitVec> cols;
    for (int i = 0; i < bits; ++i) cols.push_back(i < fixed ? BitVec{1} << i : rng() & low_mask(bits));
    BitMatrix N = BitMatrix::from_cols(bits, cols);
    if (N.invertible()) return N;
  }
}

// The permutation inverse of a table of 2^W lane indices; fails the test when it is not a permutation.
std::vector<std::uint32_t> inverse_perm(const std::array<std::int32_t, 32>& p, std::uint32_t V,
                                        const std::string& what) {
  std::vector<std::uint32_t> inv(V, V);
  for (std::uint32_t i = 0; i < V; ++i) {
    EXPECT_TRUE(p[i] >= 0 && static_cast<std::uint32_t>(p[i]) < V && inv[p[i]] == V) << what << " lane " << i;
    if (p[i] >= 0 && static_cast<std::uint32_t>(p[i]) < V) inv[p[i]] = i;
  }
  return inv;
}

// T_r on group coordinates (bits 0..W-1 vector, W..2W-1 lane): exchanges vector bit q with lane bit q for the
// r highest q, written from the definition (not the library's swap_bits).
std::uint32_t exchange(int W, int r, std::uint32_t x) {
  const std::uint32_t v = x & ((1u << W) - 1), l = x >> W, hi = ((1u << W) - 1) & ~((1u << (W - r)) - 1);
  return ((v & ~hi) | (l & hi)) | (((l & ~hi) | (v & hi)) << W);
}

// The 2W×2W matrix of a map on group coordinates from its images of the unit vectors; fails the test unless
// the map is linear (checked on every one of the 2^(2W) inputs).
template <class F>
BitMatrix linear_map(int W, F f, const std::string& what) {
  std::vector<BitVec> cols;
  for (int i = 0; i < 2 * W; ++i) cols.push_back(f(1u << i));
  const BitMatrix A = BitMatrix::from_cols(2 * W, cols);
  for (std::uint32_t x = 0; x < (1u << (2 * W)); ++x)
    if (A.apply(x) != f(x)) {
      ADD_FAILURE() << what << " is not linear at " << x;
      break;
    }
  return A;
}

// Every check of the header comment, for one tile. Returns r.
int check_tables(const TileTables& t, int eb, const std::string& what) {
  const int W = lane_bits_of(eb), bits = t.s + t.m;
  const std::uint32_t V = 1u << W, lanes = V - 1;
  const std::optional<TransposeTables> x = make_transpose_tables(t, eb);
  if (!x) {
    ADD_FAILURE() << what << ": no tables";
    return -1;
  }
  EXPECT_EQ(x->lane_bits, W) << what;
  EXPECT_GE(x->swaps, 0) << what;
  EXPECT_LE(x->swaps, W) << what;
  const int r = x->swaps;
  const BitMatrix K0 = basis_of(t).inverse();
  const std::size_t groups = x->rep_nat.size();
  EXPECT_EQ(groups << (2 * W), std::size_t{1} << bits) << what;
  EXPECT_EQ(x->rep_vec.size(), groups) << what;
  EXPECT_EQ(x->rep_mu.size(), groups) << what;
  std::vector<std::vector<std::uint32_t>> pre_inv, post_inv;
  for (std::uint32_t k = 0; k < V; ++k) {
    pre_inv.push_back(inverse_perm(x->pre[k], V, what + fmt::format(": pre[{}]", k)));
    post_inv.push_back(inverse_perm(x->post[k], V, what + fmt::format(": post[{}]", k)));
  }
  if (::testing::Test::HasFailure()) return r;

  // 1. Applied to index vectors, every group, as the loop does: tile[K0(p)] = p for every natural p.
  std::vector<std::int64_t> tile(std::size_t{1} << bits, -1);
  for (std::size_t g = 0; g < groups && !::testing::Test::HasFailure(); ++g) {
    std::vector<std::uint32_t> reg(V * V);  // reg[k·V + lane] = natural index held there
    for (std::uint32_t k = 0; k < V; ++k) {
      const std::uint32_t start = x->rep_nat[g] ^ x->kpos[k];  // an aligned vector of V consecutive elements
      EXPECT_EQ(start & lanes, 0u) << what << ": group " << g << " vector " << k << " is not aligned";
      for (std::uint32_t l = 0; l < V; ++l) reg[k * V + l] = start + static_cast<std::uint32_t>(x->pre[k][l]);
    }
    std::vector<std::uint32_t> swapped(V * V);
    for (std::uint32_t k = 0; k < V; ++k)
      for (std::uint32_t l = 0; l < V; ++l) {
        const std::uint32_t to = exchange(W, r, k | (l << W));
        swapped[(to & lanes) * V + (to >> W)] = reg[k * V + l];
      }
    for (std::uint32_t v = 0; v < V; ++v)
      for (std::uint32_t j = 0; j < V; ++j) {
        const std::size_t at = (std::size_t{x->rep_vec[g] ^ x->qvec[v]} << W) | j;
        if (at >= tile.size()) {
          ADD_FAILURE() << what << ": tile vector " << (at >> W) << " is outside the tile";
          return r;
        }
        if (tile[at] != -1) {
          ADD_FAILURE() << what << ": tile element " << at << " written twice";
          return r;
        }
        tile[at] = swapped[v * V + (static_cast<std::uint32_t>(x->post[v][j]) ^ x->rep_mu[g])];
      }
  }
  for (std::uint32_t p = 0; p < (1u << bits) && !::testing::Test::HasFailure(); ++p)
    EXPECT_EQ(tile[K0.apply(p)], std::int64_t{p})
        << what << ": natural element " << p << " is not at K0(p) = " << K0.apply(p);

  // 2. The Bruhat form on group 0 (representative 0): M = L1·T_r·L2.
  EXPECT_EQ(x->rep_nat[0], 0u) << what;
  EXPECT_EQ(x->rep_vec[0], 0u) << what;
  EXPECT_EQ(x->rep_mu[0], 0u) << what;
  std::map<std::uint32_t, std::uint32_t> vector_of;  // tile vector (K0 >> W) -> v with qvec[v] = it
  for (std::uint32_t v = 0; v < V; ++v) vector_of[x->qvec[v]] = v;
  EXPECT_EQ(vector_of.size(), V) << what << ": qvec repeats a tile vector";
  const BitMatrix M = linear_map(W, [&](std::uint32_t kl) -> BitVec {
    const auto p = static_cast<std::uint32_t>(K0.apply(x->kpos[kl & lanes] ^ (kl >> W)));
    const auto it = vector_of.find(p >> W);
    return (it == vector_of.end() ? 0 : it->second) | ((p & lanes) << W);  // a missing one failed above
  }, what + ": M");
  const BitMatrix L2 = linear_map(W, [&](std::uint32_t kl) -> BitVec {
    return (kl & lanes) | (pre_inv[kl & lanes][kl >> W] << W);
  }, what + ": L2");
  const BitMatrix T = linear_map(W, [&](std::uint32_t kl) -> BitVec { return exchange(W, r, kl); }, what + ": T_r");
  const BitMatrix L1 = linear_map(W, [&](std::uint32_t vl) -> BitVec {
    return (vl & lanes) | (post_inv[vl & lanes][vl >> W] << W);
  }, what + ": L1");
  EXPECT_TRUE(M.invertible()) << what;
  EXPECT_EQ(M, L1 * T * L2) << what << "\nM =\n" << M.to_string() << "L1·T_r·L2 =\n" << (L1 * T * L2).to_string();
  // L2 and L1 keep lanes in lanes by construction (pre and post permute the lanes of one vector); what
  // linear_map checked is that they are linear, i.e. of the form lane ↦ A·lane ⊕ f(vector).
  // r = rank of M's lane → vector block = rank of the vector part of K0 on the natural lane bits.
  std::vector<BitVec> block, k0_lanes;
  for (int i = 0; i < W; ++i) {
    block.push_back(M.col(W + i) & lanes);
    k0_lanes.push_back(K0.apply(BitVec{1} << i) >> W);
  }
  EXPECT_EQ(r, BitMatrix::from_cols(W, block).rank()) << what;
  EXPECT_EQ(r, BitMatrix::from_cols(bits - W, k0_lanes).rank()) << what;
  return r;
}

TEST(TransposeTables, RandomTileBasesReconstruct) {
  std::mt19937_64 rng(20240611);
  std::map<std::pair<int, int>, int> seen;  // (elem_bytes, r) -> tiles
  for (int eb : {1, 2, 4, 8}) {
    const int W = lane_bits_of(eb);
    for (int trial = 0; trial < 48; ++trial) {
      const int s = W + static_cast<int>(rng() % static_cast<unsigned>(8 - W));       // W..7
      const int m = std::max(0, 2 * W - s) + static_cast<int>(rng() % 4);             // bits ≥ 2W
      const int fixed = trial % (W + 1);                                              // 0..W run bits kept
      const BitMatrix N = random_basis(s + m, fixed, rng);
      const int r = check_tables(tile_with_basis(s, m, N), eb,
                                 fmt::format("eb {} s {} m {} fixed {} trial {}\nN =\n{}", eb, s, m, fixed, trial,
                                             N.to_string()));
      if (::testing::Test::HasFailure()) return;
      EXPECT_LE(r, W - fixed);
      ++seen[{eb, r}];
    }
  }
  // Every number of exchanged lane bits, full transposes to none, for every element size.
  for (int eb : {1, 2, 4, 8})
    for (int r = 0; r <= lane_bits_of(eb); ++r) EXPECT_GT((seen[{eb, r}]), 0) << eb << " B, r = " << r;
}

// The tiles the CPU planner makes for random and named maps: tables exist and reconstruct, whatever the CPU.
TEST(TransposeTables, PlannerTilesReconstruct) {
  int checked = 0;
  for (int eb : {1, 2, 4, 8})
    for (int n : {10, 13, 16})
      for (const Bmmc& b : {random_bmmc(n, 3), random_bpc(n, 4), bit_reverse(n), gray(n), gray_inverse(n),
                            rotate(n, 1), transpose(n, n / 2), identity(n)})
        for (int tile : {-1, 10}) {
          const Plan plan = make_cpu_plan(b, eb, CpuPolicy{1, tile});
          for (const Pass& pass : plan.passes)
            if (const auto* tp = std::get_if<TilePass>(&pass)) {
              check_tables(cpu_detail::build_tables(*tp), eb,
                           fmt::format("eb {} tile {} {}\n{}", eb, tile, describe(plan), b.to_string()));
              if (::testing::Test::HasFailure()) return;
              ++checked;
            }
        }
  EXPECT_GT(checked, 100);
}

// The direct loop's index vectors (WordIndices, WideByteIndices for 64-byte vectors, ByteIndices for the byte
// groups of 32-byte vectors) simulated unit by unit as the AVX-512 loops apply them: the folded network (pre in the first exchange, post and the lane XOR μ in the last, through
// last_mu_index) leaves every register holding what pre → exchanges → post ⊕ μ leaves there.
using Reg = std::vector<int>;  // the (register, unit) a vector unit came from, as register · 64 + unit

// The hardware reads only the index bits it needs; an index beyond them is a table error here (-1: marked).
Reg permute1(const Reg& a, const auto& idx, std::size_t units) {
  Reg out(units);
  for (std::size_t i = 0; i < units; ++i) {
    const auto j = static_cast<std::size_t>(idx[i]);
    out[i] = j < units ? a[j] : -1;
  }
  return out;
}
Reg permute2(const Reg& a, const auto& idx, const Reg& b, std::size_t units, std::uint32_t xor_with = 0) {
  Reg out(units);
  for (std::size_t i = 0; i < units; ++i) {
    const std::size_t j = static_cast<std::uint32_t>(idx[i]) ^ xor_with;
    out[i] = j < units ? a[j] : j < 2 * units ? b[j - units] : -1;
  }
  return out;
}

// The plain index vectors straight from the lane tables: unit e of lane ℓ is unit ℓ·per_lane + e, the second
// source starts at `units`.
template <class Ix>
void check_plain(const TransposeTables& x, const Ix& ix, std::size_t units, std::uint32_t per_lane,
                 const std::string& what) {
  const int W = x.lane_bits;
  for (std::uint32_t i = 0; i < units; ++i) {
    const std::uint32_t l = i / per_lane, e = i % per_lane;
    for (int v = 0; v < (1 << W); ++v) {
      ASSERT_EQ(static_cast<std::uint32_t>(ix.pre[v][i]), static_cast<std::uint32_t>(x.pre[v][l]) * per_lane + e) << what;
      ASSERT_EQ(static_cast<std::uint32_t>(ix.post[v][i]), static_cast<std::uint32_t>(x.post[v][l]) * per_lane + e) << what;
    }
    for (int q = 0; q < W; ++q) {
      const std::uint32_t from_b = ((l >> q) & 1) ? static_cast<std::uint32_t>(units) : 0;
      ASSERT_EQ(static_cast<std::uint32_t>(ix.lo[q][i]), from_b + (l & ~(1u << q)) * per_lane + e) << what;
      ASSERT_EQ(static_cast<std::uint32_t>(ix.hi[q][i]), from_b + (l | (1u << q)) * per_lane + e) << what;
    }
  }
}

template <class Ix>
void check_folded(const TransposeTables& x, const Ix& ix, std::size_t units, std::uint32_t per_lane,
                  std::uint32_t mu, const std::string& what) {
  check_plain(x, ix, units, per_lane, what);
  const int W = x.lane_bits, V = 1 << W, r = x.swaps;
  std::vector<Reg> plain(V), folded(V);
  for (int k = 0; k < V; ++k) {
    plain[k].resize(units);
    for (std::size_t i = 0; i < units; ++i) plain[k][i] = k * 64 + static_cast<int>(i);
  }
  folded = plain;
  const bool fold_pre = r >= 2, fold_post = r >= 1;
  for (int k = 0; k < V; ++k) {
    plain[k] = permute1(plain[k], ix.pre[k], units);
    if (!fold_pre) folded[k] = permute1(folded[k], ix.pre[k], units);
  }
  const std::uint32_t mx = cpu_detail::last_mu_index(W, r, mu, static_cast<std::uint32_t>(units), per_lane);
  for (int q = W - 1; q >= W - r; --q)
    for (int k = 0; k < V; ++k) {
      if ((k >> q) & 1) continue;
      const int k1 = k | (1 << q);
      const Reg a = plain[k], b = plain[k1], fa = folded[k], fb = folded[k1];
      plain[k] = permute2(a, ix.lo[q], b, units), plain[k1] = permute2(a, ix.hi[q], b, units);
      if (fold_pre && q == W - 1)
        folded[k] = permute2(fa, ix.first[k], fb, units), folded[k1] = permute2(fa, ix.first[k1], fb, units);
      else if (fold_post && q == W - r)
        folded[k] = permute2(fa, ix.last[k], fb, units, mx), folded[k1] = permute2(fa, ix.last[k1], fb, units, mx);
      else
        folded[k] = permute2(fa, ix.lo[q], fb, units), folded[k1] = permute2(fa, ix.hi[q], fb, units);
    }
  for (int l = 0; l < V; ++l) {
    Reg idx(units);
    for (std::size_t i = 0; i < units; ++i) idx[i] = static_cast<int>(static_cast<std::uint32_t>(ix.post[l][i]) ^ (mu * per_lane));
    plain[l] = permute1(plain[l], idx, units);
    if (!fold_post) folded[l] = permute1(folded[l], idx, units);
    ASSERT_EQ(plain[l], folded[l]) << what << ", register " << l << ", mu " << mu;
    ASSERT_EQ(std::count(plain[l].begin(), plain[l].end(), -1), 0) << what << ": an index beyond two vectors";
  }
}

TEST(TransposeTables, FoldedIndexVectors) {
  std::mt19937_64 rng(99);
  std::map<std::pair<int, int>, int> seen;  // (elem_bytes, swaps) -> tables checked
  for (int eb : {1, 2, 4, 8, -2}) {  // -2: 2-byte elements in 32-byte vectors (1 B: always 32-byte vectors)
    const int vb = eb == 1 || eb == -2 ? 32 : 64;
    eb = std::abs(eb);
    const int W = vb == 32 ? lane_bits_of(eb) : eb == 2 ? 5 : eb == 4 ? 4 : 3;
    for (int trial = 0; trial < 40; ++trial) {
      const int bits = 2 * W + static_cast<int>(rng() % 4), fixed = trial % (W + 1);
      const BitMatrix N = random_basis(bits, fixed, rng);
      std::vector<BitVec> basis;
      for (int i = 0; i < bits; ++i) basis.push_back(N.col(i));
      const auto x = cpu_detail::make_group_tables(basis, W, eb, vb);
      ASSERT_TRUE(x.has_value()) << eb << " B, trial " << trial;
      EXPECT_EQ(x->lane_bits, W);
      EXPECT_EQ(x->vector_bytes, vb);
      ++seen[{eb * vb, x->swaps}];
      const std::string what = fmt::format("{} B in {} B vectors, trial {}, swaps {}", eb, vb, trial, x->swaps);
      for (std::uint32_t mu : {0u, 1u, static_cast<std::uint32_t>(rng() % (1u << W)), (1u << W) - 1}) {
        if (vb == 32)
          check_folded(*x, *x->bytes, 32, static_cast<std::uint32_t>(eb), mu, what);
        else if (eb == 2)
          check_folded(*x, *x->wide_bytes, 64, 2, mu, what);
        else
          check_folded(*x, *x->words, 16, static_cast<std::uint32_t>(eb / 4), mu, what);
        if (::testing::Test::HasFailure()) return;
      }
    }
    for (int r = 0; r <= W; ++r) EXPECT_GT((seen[{eb * vb, r}]), 0) << eb << " B in " << vb << " B, swaps " << r;
  }
  // 64-byte vectors exist for 2-, 4- and 8-byte elements only.
  std::vector<BitVec> basis;
  for (int i = 0; i < 12; ++i) basis.push_back(BitVec{1} << i);
  EXPECT_FALSE(cpu_detail::make_group_tables(basis, 6, 1, 64).has_value());
  EXPECT_FALSE(cpu_detail::make_group_tables(basis, 6, 4, 48).has_value());
  // last_mu_index's worked example (transpose_blocks.hpp).
  EXPECT_EQ(cpu_detail::last_mu_index(4, 4, 3, 16, 1), 18u);
}

// The directions of `candidates` taken in order while independent of `span` and of those taken before
// (rank over F2 on `bits` bits, from BitMatrix rather than the library's Subspace); `span` grows by them.
std::vector<std::uint32_t> greedy_columns(std::vector<BitVec>& span, const std::vector<std::uint32_t>& candidates,
                                          int bits) {
  std::vector<std::uint32_t> taken;
  for (std::uint32_t e : candidates) {
    std::vector<BitVec> with = span;
    with.push_back(e);
    if (BitMatrix::from_cols(bits, with).rank() > static_cast<int>(span.size())) span.push_back(e), taken.push_back(e);
  }
  return taken;
}

// make_group_tables' rep_first: the group index's columns are the offered directions in order, each taken
// when independent of the group's own vectors and the columns before it (rank, recomputed here), then units;
// and the groups still cover every element once.
TEST(TransposeTables, GroupColumnsTakeRepFirstInOrder) {
  std::mt19937_64 rng(23);
  int ahead_of_units = 0;  // columns taken from the offered list before the first unit fills in
  for (auto [eb, vb] : {std::pair{1, 32}, std::pair{2, 32}, std::pair{2, 64}, std::pair{4, 64}, std::pair{8, 64}}) {
    const int W = vb == 32 ? lane_bits_of(eb) : eb == 2 ? 5 : eb == 4 ? 4 : 3;
    const std::uint32_t lanes = (1u << W) - 1;
    for (int trial = 0; trial < 12; ++trial) {
      const int bits = 2 * W + 1 + static_cast<int>(rng() % 5);
      const BitMatrix N = random_basis(bits, trial % (W + 1), rng);
      std::vector<BitVec> basis;
      for (int i = 0; i < bits; ++i) basis.push_back(N.col(i));
      // Offered: aligned units in a random order, random aligned combinations, a repeat, one with lane bits
      // (not a vector start), one beyond the index's bits and zero: the last three must be skipped.
      std::vector<std::uint32_t> first;
      for (int b = W; b < bits; ++b) first.push_back(1u << b);
      std::shuffle(first.begin(), first.end(), rng);
      first.resize(first.size() / 2);
      first.push_back(static_cast<std::uint32_t>(rng() & low_mask(bits)) & ~lanes);
      first.push_back(first.front());
      first.push_back(static_cast<std::uint32_t>(rng() & low_mask(bits)) | 1u);
      first.push_back(0);
      first.push_back(1u << bits);
      std::shuffle(first.begin() + 1, first.end(), rng);
      const auto x = cpu_detail::make_group_tables(basis, W, eb, vb, first);
      const std::string what = fmt::format("{} B in {} B vectors, {} bits, trial {}", eb, vb, bits, trial);
      ASSERT_TRUE(x.has_value()) << what;
      // The expected columns: greedy over the offered aligned directions, then the units, against the span
      // of the group's own vectors kpos[2^i].
      std::vector<BitVec> span;
      for (int i = 0; i < W; ++i) span.push_back(x->kpos[std::size_t{1} << i]);
      std::vector<std::uint32_t> candidates;
      for (std::uint32_t e : first)
        if ((e & lanes) == 0 && e >> bits == 0) candidates.push_back(e);
      for (int b = W; b < bits; ++b) candidates.push_back(1u << b);
      const std::vector<std::uint32_t> want = greedy_columns(span, candidates, bits);
      ASSERT_EQ(want.size(), static_cast<std::size_t>(bits - 2 * W)) << what;
      for (std::uint32_t e : want) {
        if (std::find(first.begin(), first.end(), e) == first.end()) break;
        ++ahead_of_units;
      }
      for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_EQ(x->rep_nat[std::size_t{1} << i], want[i]) << what << ", column " << i;
      std::vector<int> seen(std::size_t{1} << bits, 0);
      for (std::uint32_t g = 0; g < x->rep_nat.size(); ++g)
        for (std::uint32_t k = 0; k <= lanes; ++k)
          for (std::uint32_t l = 0; l <= lanes; ++l) ++seen.at((x->rep_nat[g] ^ x->kpos[k]) + l);
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(seen.size()))
          << what << ": the groups do not cover every element once";
    }
  }
  EXPECT_GT(ahead_of_units, 60) << "the offered directions should lead the columns";
}

// The direct loop's walk order (direct_blocks.hpp): its worked example verbatim, and for random maps every
// aligned unit once, ordered by how many sides' L1 sets it changes (computed here from addresses).
TEST(TransposeTables, SetChangingDirectionsFirst) {
  const auto order = cpu_detail::set_changing_first(bit_reverse(14).matrix(), 3, 8);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{1u << 5, 1u << 6, 1u << 7, 1u << 8, 1u << 3, 1u << 4, 1u << 9,
                                               1u << 10, 1u << 11, 1u << 12, 1u << 13}));
  for (int eb : {2, 4, 8}) {
    const int W = eb == 2 ? 5 : eb == 4 ? 4 : 3;
    for (int n : {2 * W, 14, 17, 22})
      for (std::uint64_t seed = 1; seed <= 6; ++seed)
        for (const Bmmc& b : {random_bmmc(n, seed), random_bpc(n, seed), transpose(n, n / 2)}) {
          const auto o = cpu_detail::set_changing_first(b.matrix(), W, eb);
          ASSERT_EQ(o.size(), static_cast<std::size_t>(n - W)) << b.to_string();
          auto set = [&](BitVec index) { return (index * static_cast<BitVec>(eb) >> 6) & 63; };
          auto sides = [&](std::uint32_t e) { return (set(e) != 0) + (set(b.matrix().apply(e)) != 0); };
          std::vector<std::uint32_t> sorted = o;
          std::sort(sorted.begin(), sorted.end());
          for (int i = 0; i < n - W; ++i) EXPECT_EQ(sorted[i], 1u << (W + i)) << "not every aligned unit once";
          for (std::size_t i = 1; i < o.size(); ++i)
            EXPECT_TRUE(sides(o[i - 1]) > sides(o[i]) || (sides(o[i - 1]) == sides(o[i]) && o[i - 1] < o[i]))
                << eb << " B, " << b.to_string() << " at " << i;
        }
  }
}

// The direct tables (src/cpu/direct_tables.cpp) order their group columns by set_changing_first of A, not of
// A⁻¹: checked on maps that are not involutions, where the two orders differ. Needs the CPU's AVX-512 for the
// tables of 64-byte vectors.
TEST(TransposeTables, DirectGroupsWalkInTheSetOrderOfA) {
  if (!cpu_detail::wide_groups_supported(8, true)) GTEST_SKIP() << "no AVX-512: no groups of 64-byte vectors here";
  const int W = 3;
  int differing = 0;
  for (const Bmmc& b : {random_bpc(14, 3), random_bpc(15, 4), random_bmmc(16, 4), random_bmmc(17, 5)}) {
    const BitMatrix& A = b.matrix();
    const std::vector<std::uint32_t> order = cpu_detail::set_changing_first(A, W, 8);
    differing += order != cpu_detail::set_changing_first(A.inverse(), W, 8);
    const cpu_detail::DirectTables d = cpu_detail::make_direct_tables(b, 8, true);
    ASSERT_TRUE(d.groups.has_value()) << b.to_string();
    ASSERT_EQ(d.groups->vector_bytes, 64);
    std::vector<BitVec> span;
    for (int i = 0; i < W; ++i) span.push_back(d.groups->kpos[std::size_t{1} << i]);
    EXPECT_EQ(d.nat_cols, greedy_columns(span, order, b.n())) << b.to_string();
  }
  EXPECT_GE(differing, 2) << "maps whose orders of A and of A⁻¹ differ, so that the check can tell them apart";
}

TEST(TransposeTables, ShapesTheLoopsCannotRunGiveNullopt) {
  std::mt19937_64 rng(7);
  auto tables = [&](int s, int m, int eb) {
    return make_transpose_tables(tile_with_basis(s, m, random_basis(s + m, 0, rng)), eb);
  };
  EXPECT_TRUE(tables(5, 5, 1).has_value());
  EXPECT_FALSE(tables(5, 5, 16).has_value());  // no 16-byte loop
  EXPECT_FALSE(tables(4, 8, 1).has_value());   // runs shorter than a vector of 32 one-byte lanes
  EXPECT_FALSE(tables(8, 4, 4).has_value());   // runs longer than 2^7 elements
  EXPECT_FALSE(tables(5, 4, 1).has_value());   // tile smaller than one group of 32 vectors of 32
  EXPECT_FALSE(tables(7, 18, 4).has_value());  // tile of more than 2^24 elements
  EXPECT_TRUE(tables(3, 3, 4).has_value());
  // A basis that is not one (two equal columns): no K0, so no tables rather than wrong ones.
  TileTables t = tile_with_basis(3, 3, random_basis(6, 0, rng));
  t.nsig = xor_table(std::vector<std::uint32_t>{t.ntau[1], t.nsig[2], t.nsig[4]});
  EXPECT_FALSE(make_transpose_tables(t, 4).has_value());
}

}  // namespace
}  // namespace bmmc
