// The distributed planner (see dist_plan.hpp and docs/DESIGN.md §9 for the algebra).
#include "bmmc/dist/dist_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/subspace.hpp"

namespace bmmc {

namespace {

std::string hex_list(const std::vector<BitVec>& v) {
  std::string s;
  for (BitVec x : v) s += fmt::format("{}{:#x}", s.empty() ? "" : " ", x);
  return s.empty() ? "-" : s;
}

// Coordinates of v ∈ span(basis) in that basis, or a logic_error: every caller has proved membership, so a
// miss is a bug of this file, not bad input.
BitVec coords_in(const std::vector<BitVec>& basis, BitVec v, const char* what) {
  const auto c = coordinates(basis, v);
  if (!c) throw std::logic_error(fmt::format("dist plan: {} {:#x} is outside the expected span", what, v));
  return *c;
}

// The piece rows φ (dist_plan.hpp): up to kPieceBits functionals on the local input, independent modulo the
// chunk rows T, vanishing on the low w_in input bits and on the local parts of A⁻¹·e_b for the low w_out output
// bits. Then a tile whose coset contains those directions — every one-pass tile of the pre-pass (its low input
// bits and a few more coordinates) and of the post-pass (its low output bits) — lies inside one φ value, so the
// pipelined engines run a piece as a range of whole tiles. Widest (w_in, w_out) first, as long as m allows; with
// no room left (small m) any rows independent of T, taken from the top coordinates down.
std::vector<BitVec> piece_rows(const BitMatrix& a, int m, const std::vector<BitVec>& t_rows) {
  const int k = static_cast<int>(t_rows.size());
  const int want = std::min(kPieceBits, m - k);
  if (want <= 0) return {};
  const BitMatrix ainv = a.inverse();
  const BitVec lmask = low_mask(m);
  const auto pick = [&](const std::vector<BitVec>& candidates) {
    Subspace taken = Subspace::span(m, t_rows);
    std::vector<BitVec> phi;
    for (BitVec z : candidates)
      if (static_cast<int>(phi.size()) < want && taken.insert(z)) phi.push_back(z);
    return phi;
  };
  constexpr int kWidths[][2] = {{12, 8}, {10, 7}, {8, 6}, {6, 5}};
  for (const auto& w : kWidths) {
    std::vector<BitVec> keep;
    for (int b = 0; b < std::min(w[0], m); ++b) keep.push_back(BitVec{1} << b);
    for (int b = 0; b < std::min(w[1], m); ++b) keep.push_back(ainv.col(b) & lmask);
    std::vector<BitVec> zs = Subspace::span(m, keep).annihilator().basis();
    std::reverse(zs.begin(), zs.end());  // highest pivots first: the rows stay away from the low bits
    std::vector<BitVec> phi = pick(zs);
    if (static_cast<int>(phi.size()) == want) return phi;
  }
  std::vector<BitVec> coords;
  for (int j = m - 1; j >= 0; --j) coords.push_back(BitVec{1} << j);
  return pick(coords);
}

}  // namespace

int dist_rank_bits(std::uint64_t ranks, int n) {
  if (ranks == 0 || (ranks & (ranks - 1)) != 0)
    throw std::invalid_argument(fmt::format("{} ranks: the number of ranks must be a power of two (1, 2, 4, ...)", ranks));
  const int g = __builtin_ctzll(ranks);
  if (g > n)
    throw std::invalid_argument(fmt::format(
        "{} ranks need at least {} index bits, but n = {}: each rank must hold at least one element", ranks, g, n));
  if (g > kMaxRankBits)
    throw std::invalid_argument(fmt::format("{} ranks: at most 2^{} = {} ranks are supported", ranks, kMaxRankBits,
                                            std::uint64_t{1} << kMaxRankBits));
  return g;
}

void check_dist_geometry(const Bmmc& bmmc, int rank_bits, int elem_bytes) {
  check_elem_bytes(elem_bytes);
  const int n = bmmc.n();
  if (n > kMaxPermuteBits)
    throw std::invalid_argument(fmt::format("n = {} is too large: at most {} index bits", n, kMaxPermuteBits));
  if (rank_bits < 0 || rank_bits > n || rank_bits > kMaxRankBits)
    throw std::invalid_argument(fmt::format("rank bits g = {} must lie in 0..min(n, {}) = 0..{} (n = {})", rank_bits,
                                            kMaxRankBits, std::min(n, kMaxRankBits), n));
}

void require_planned(const DistPlan& plan, const char* who) {
  try {
    check_dist_geometry(plan.bmmc, plan.rank_bits, plan.elem_bytes);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", who, e.what()));
  }
  const DistPlan want = make_dist_plan(plan.bmmc, plan.rank_bits, plan.elem_bytes);
  if (plan == want) return;
  const std::pair<bool, const char*> fields[] = {
      {plan.local_bits == want.local_bits, "local_bits"},
      {plan.k == want.k, "k"},
      {plan.chunk_rows == want.chunk_rows, "chunk_rows"},
      {plan.dest_chunk_cols == want.dest_chunk_cols, "dest_chunk_cols"},
      {plan.spread_rows == want.spread_rows, "spread_rows"},
      {plan.piece_bits == want.piece_bits, "piece_bits"},
      {plan.pre == want.pre, "pre"},
      {plan.dest_rank_cols == want.dest_rank_cols, "dest_rank_cols"},
      {plan.dest_complement == want.dest_complement, "dest_complement"},
      {plan.chunk_of_dest_cols == want.chunk_of_dest_cols, "chunk_of_dest_cols"},
      {plan.sender_basis == want.sender_basis, "sender_basis"},
      {plan.sender_rep_cols == want.sender_rep_cols, "sender_rep_cols"},
      {plan.sender_rep_complement == want.sender_rep_complement, "sender_rep_complement"},
      {plan.round_cols == want.round_cols, "round_cols"},
      {plan.post == want.post, "post"},
      {plan.post_rank_cols == want.post_rank_cols, "post_rank_cols"},
      {plan.fused_line_bits == want.fused_line_bits, "fused_line_bits"}};
  const char* field = "a field";
  for (const auto& [same, name] : fields)
    if (!same) {
      field = name;
      break;
    }
  throw std::invalid_argument(fmt::format(
      "{}: the DistPlan's {} differs from make_dist_plan's for its own bmmc, {} rank bits and {}-byte elements; a "
      "hand-edited plan cannot be run (plan again with make_dist_plan)",
      who, field, plan.rank_bits, plan.elem_bytes));
}

DistPlan make_dist_plan(const Bmmc& bmmc, int rank_bits, int elem_bytes) {
  check_dist_geometry(bmmc, rank_bits, elem_bytes);
  const int n = bmmc.n();
  const int g = rank_bits, m = n - g;
  const BitMatrix& a = bmmc.matrix();
  const BitVec c = bmmc.complement();
  const BitVec lmask = low_mask(m), gmask = low_mask(g);

  DistPlan p;
  p.bmmc = bmmc;
  p.rank_bits = g;
  p.local_bits = m;
  p.elem_bytes = elem_bytes;

  // A_hl = B·T: T = the reduced echelon basis of A_hl's rows; row a of B = coordinates of row a of A_hl in T.
  std::vector<BitVec> hl_rows(g);
  for (int i = 0; i < g; ++i) hl_rows[i] = a.row(m + i) & lmask;
  const Subspace row_space = Subspace::span(m, hl_rows);
  p.chunk_rows = row_space.basis();
  p.k = row_space.dim();
  const int k = p.k;
  std::vector<BitVec> b_rows(g);
  for (int i = 0; i < g; ++i) b_rows[i] = coords_in(p.chunk_rows, hl_rows[i], "a row of A_hl");
  p.dest_chunk_cols = BitMatrix::from_rows(k, b_rows).col_list();

  // S: the coordinate vectors at the non-pivot positions of T and the piece rows φ, then φ on top, so [S; T] is
  // invertible (Subspace's direct sum) and the top piece_bits of a chunk offset u are φ·x_l.
  const std::vector<BitVec> phi = piece_rows(a, m, p.chunk_rows);
  p.piece_bits = static_cast<int>(phi.size());
  {
    std::vector<BitVec> t_phi = p.chunk_rows;
    t_phi.insert(t_phi.end(), phi.begin(), phi.end());
    for (int j : Subspace::span(m, t_phi).coordinate_complement()) p.spread_rows.push_back(BitVec{1} << j);
    p.spread_rows.insert(p.spread_rows.end(), phi.begin(), phi.end());
  }
  std::vector<BitVec> pre_rows = p.spread_rows;
  pre_rows.insert(pre_rows.end(), p.chunk_rows.begin(), p.chunk_rows.end());
  p.pre = Bmmc(BitMatrix::from_rows(m, pre_rows));

  // Send side: d = B·t ⊕ A_hh·r ⊕ c_h.
  for (int i = 0; i < g; ++i) p.dest_rank_cols.push_back((a.col(m + i) >> m) & gmask);
  p.dest_complement = (c >> m) & gmask;

  // B⁺: complete B's columns to a basis of F2^g with coordinate vectors; the first k rows of the inverse of
  // [B | E] map every v ∈ im B to its coordinates t (B·t = v).
  const Subspace im_b = Subspace::span(g, p.dest_chunk_cols);
  {
    std::vector<BitVec> cols = p.dest_chunk_cols;
    for (int j : im_b.coordinate_complement()) cols.push_back(BitVec{1} << j);
    const BitMatrix inv = BitMatrix::from_cols(g, cols).inverse();
    for (int i = 0; i < g; ++i) p.chunk_of_dest_cols.push_back(inv.col(i) & low_mask(k));
  }

  // K = {r : A_hh·r ∈ im B} = the kernel of r ↦ (A_hh·r reduced modulo im B), a linear map whose kernel is the
  // annihilator of its row space. §9 proves dim K = k: [B | A_hh] has rank g (bottom rows of an invertible
  // matrix) so its kernel has dimension k, and projects injectively onto the r coordinates.
  {
    std::vector<BitVec> red_cols(g);
    for (int i = 0; i < g; ++i) red_cols[i] = im_b.reduce(p.dest_rank_cols[i]);
    const std::vector<BitVec> rows = g == 0 ? std::vector<BitVec>{} : BitMatrix::from_cols(g, red_cols).row_list();
    const Subspace kspace = Subspace::span(g, rows).annihilator();
    p.sender_basis = kspace.basis();
    if (kspace.dim() != k)
      throw std::logic_error(fmt::format("dist plan: the senders of a rank span dimension {}, expected k = {}",
                                         kspace.dim(), k));
    // r_0(d): the rank of A⁻¹(d << m ⊕ c) sends to d (it holds the element that lands at offset 0 of d);
    // reducing it modulo K gives the representative with K's pivot bits clear. Linear part H, constant h0.
    const BitMatrix ainv = a.inverse();
    for (int i = 0; i < g; ++i) p.sender_rep_cols.push_back(kspace.reduce((ainv.col(m + i) >> m) & gmask));
    p.sender_rep_complement = kspace.reduce((ainv.apply(c) >> m) & gmask);
    // Round matrix M = B⁺·A_hh·K (A_hh·κ ∈ im B by definition of K).
    for (BitVec kappa : p.sender_basis)
      p.round_cols.push_back(xor_of_columns(p.chunk_of_dest_cols, xor_of_columns(p.dest_rank_cols, kappa)));

    // fused_line_bits: the longest prefix of output bits whose preimages stay on one rank.
    while (p.fused_line_bits < m && ((ainv.col(p.fused_line_bits) >> m) & gmask) == 0) ++p.fused_line_bits;
  }

  // Post-pass. On receiver d, receive position q = (u, j) holds the element that sender
  //   r = r_0(d) ⊕ K·j  put at pre-pass position (u, t),  t = B⁺·(d ⊕ c_h ⊕ A_hh·r),
  // i.e. x_l = P⁻¹·(u | t << (m − k)), and it belongs at y_l = low m bits of A·(x_l | r << m) ⊕ c. Every step is
  // affine in (d, q) jointly (B⁺ is linear and its argument lies in im B), so y_l = Π·q ⊕ c_post ⊕ C·d: read Π,
  // c_post and C off by evaluating at 0 and the unit vectors. tests/dist/ checks the result on every element.
  const int cb = m - k;
  const Bmmc pre_inv = p.pre.inverse();
  const auto post_eval = [&](BitVec d, BitVec q) {
    const BitVec u = q & low_mask(cb), j = q >> cb;
    const BitVec r = xor_of_columns(p.sender_rep_cols, d) ^ p.sender_rep_complement ^ xor_of_columns(p.sender_basis, j);
    const BitVec t = xor_of_columns(p.chunk_of_dest_cols, d ^ p.dest_complement ^ xor_of_columns(p.dest_rank_cols, r));
    const BitVec x_l = pre_inv.apply(u | (t << cb));
    const BitVec y = bmmc.apply(x_l | (r << m));
    if (((y >> m) & gmask) != d)
      throw std::logic_error(fmt::format("dist plan: receive position {:#x} of rank {} traced to rank {}", q, d, y >> m));
    return y & lmask;
  };
  const BitVec c_post = post_eval(0, 0);
  std::vector<BitVec> post_cols(m);
  for (int i = 0; i < m; ++i) post_cols[i] = post_eval(0, BitVec{1} << i) ^ c_post;
  p.post = Bmmc(BitMatrix::from_cols(m, post_cols), c_post);  // throws if Π were singular: a bug, not input
  for (int i = 0; i < g; ++i) p.post_rank_cols.push_back(post_eval(BitVec{1} << i, 0) ^ c_post);

  return p;
}

Bmmc post_for_rank(const DistPlan& plan, BitVec rank) {
  if (rank >= plan.ranks())
    throw std::invalid_argument(fmt::format("rank {} is outside 0..{}", rank, plan.ranks() - 1));
  return Bmmc(plan.post.matrix(), plan.post.complement() ^ xor_of_columns(plan.post_rank_cols, rank));
}

std::uint64_t dist_plan_hash(const DistPlan& plan) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64 over the little-endian bytes of each word
  const auto mix = [&h](std::uint64_t word) {
    for (int i = 0; i < 8; ++i) {
      h ^= (word >> (8 * i)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  };
  mix(0x626d6d6364697374ULL);  // "bmmcdist"
  mix(kDistPlanVersion);
  mix(static_cast<std::uint64_t>(plan.n()));
  mix(static_cast<std::uint64_t>(plan.rank_bits));
  mix(static_cast<std::uint64_t>(plan.elem_bytes));
  for (int i = 0; i < plan.n(); ++i) mix(plan.bmmc.matrix().row(i));
  mix(plan.bmmc.complement());
  return h;
}

std::string describe(const DistPlan& p) {
  std::string s = fmt::format(
      "distributed plan: n = {} = {} local + {} rank bits ({} ranks of 2^{} elements), elem_bytes = {}, hash {:#018x}\n",
      p.n(), p.local_bits, p.rank_bits, p.ranks(), p.local_bits, p.elem_bytes, dist_plan_hash(p));
  s += fmt::format(
      " k = rank(A_hl) = {}: each rank sends {} chunks of 2^{} = {} elements ({} bytes) to {} ranks; {} group{} of {} "
      "ranks; {} round{}\n",
      p.k, p.destinations_per_rank(), p.chunk_bits(), p.chunk_elems(), p.chunk_bytes(), p.destinations_per_rank(),
      p.groups(), p.groups() == 1 ? "" : "s", p.destinations_per_rank(), p.rounds(), p.rounds() == 1 ? "" : "s");
  s += fmt::format(" A_hl = B·T: T rows {}; B cols {}\n", hex_list(p.chunk_rows), hex_list(p.dest_chunk_cols));
  s += fmt::format(" S rows {} (the top {} are the piece rows φ)\n", hex_list(p.spread_rows), p.piece_bits);
  s += fmt::format(" pre-pass (every rank, m = {} bits): rows {} c = {:#x}\n", p.local_bits,
                   hex_list(p.pre.matrix().row_list()), p.pre.complement());
  s += fmt::format(" send: rank r sends chunk t to B·t ⊕ A_hh·r ⊕ {:#x}, A_hh cols {}\n", p.dest_complement,
                   hex_list(p.dest_rank_cols));
  s += fmt::format(" receive: senders of d = H·d ⊕ {:#x} ⊕ span(K), H cols {}, K {}; slot = r's bits at K's pivots\n",
                   p.sender_rep_complement, hex_list(p.sender_rep_cols), hex_list(p.sender_basis));
  s += fmt::format(" rounds: slot j sends chunk t in round t ⊕ j ⊕ M·j, M cols {}\n", hex_list(p.round_cols));
  s += fmt::format(" post-pass (rank d): rows {} c = {:#x} ⊕ C·d, C cols {}\n", hex_list(p.post.matrix().row_list()),
                   p.post.complement(), hex_list(p.post_rank_cols));
  s += fmt::format(" fused: origin of rank r = A·(r << {}) ⊕ c; runs of 2^{} output elements come from one rank\n",
                   p.local_bits, p.fused_line_bits);
  return s;
}

}  // namespace bmmc
