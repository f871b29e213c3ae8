// The partners of the direct loops' units, for running them in place (make_direct_pairs, direct_blocks.hpp).
//
// For an involution f(x) = A·x ⊕ c (A² = I, A·c = c) and a unit whose space U (the elements a unit covers,
// less its origin) satisfies A·U = U, the unit's output set f(origin ⊕ U) is again a coset of U, i.e. the
// input set of one unit: its partner. The partner's input set is then the unit's output set, and its output
// set the unit's input set (f ∘ f = id). A group's U is the lanes plus span(X) (transpose_blocks.hpp): A-
// invariant when X spans A·lanes modulo the lanes, which holds whenever the lanes and A·lanes are independent
// and when X's completion by unit vectors takes directions f fixes; else these are no pairs and the executor
// keeps the tile loop. A walk block's U = S = the line bits ⊕ A·(the line bits), A-invariant for every
// involution. Which unit holds an element is a linear function of the element (its coordinates on the unit
// origins' basis), so the partner's Gray index is affine in the unit's: evaluated at 0 and at each unit
// vector, it is stored as columns, and so are a partner group's origins, which the loops walk beside their own.
#include "direct_blocks.hpp"

#include <algorithm>
#include <stdexcept>

#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/core/subspace.hpp"

namespace bmmc::cpu_detail {

namespace {

// An affine map of Gray indices as its value at 0 and its columns, from `map` (nullopt: no partner) at 0 and at
// the unit vectors; nullopt when some value is missing or the map is not an involution there (which, for an
// affine map, makes it one everywhere).
template <class Map>
std::optional<std::pair<BitVec, std::vector<BitVec>>> affine_involution(int bits, const Map& map) {
  const std::optional<BitVec> at0 = map(0);
  if (!at0) return std::nullopt;
  std::vector<BitVec> cols;
  for (int i = 0; i < bits; ++i) {
    const std::optional<BitVec> v = map(BitVec{1} << i);
    if (!v) return std::nullopt;
    cols.push_back(*v ^ *at0);
  }
  const auto apply = [&](BitVec h) { return xor_of_columns(cols, h) ^ *at0; };
  if (apply(apply(0)) != 0) return std::nullopt;
  for (int i = 0; i < bits; ++i)
    if (apply(apply(BitVec{1} << i)) != BitVec{1} << i) return std::nullopt;
  return std::pair{*at0, std::move(cols)};
}

// The Gray-index coordinates of v on the unit origins' columns `origin_cols` with the unit's own space `own`
// appended to the basis (v = origins(h) ⊕ u, u in span(own)): h, or nullopt when v is outside.
std::optional<BitVec> origin_index(const std::vector<BitVec>& origin_cols, const std::vector<BitVec>& own, BitVec v) {
  std::vector<BitVec> basis = origin_cols;
  basis.insert(basis.end(), own.begin(), own.end());
  std::optional<BitVec> k;
  try {
    k = coordinates(basis, v);
  } catch (const std::invalid_argument&) {  // a dependent basis: no unit structure to pair
    return std::nullopt;
  }
  if (!k) return std::nullopt;
  return *k & low_mask(static_cast<int>(origin_cols.size()));
}

// The state columns of the partner: columns `cols` (constant `c`) composed with the partner map.
template <class T>
void compose(const std::vector<T>& cols, T c, const std::pair<BitVec, std::vector<BitVec>>& partner,
             std::vector<T>& out_cols, T& out_c) {
  out_cols.clear();
  for (BitVec h : partner.second) out_cols.push_back(xor_of_columns(cols, h));
  out_c = xor_of_columns(cols, partner.first) ^ c;
}

bool group_pairs(DirectTables& d) {
  const bool groups = d.groups.has_value();
  const int W = groups ? d.groups->lane_bits : d.elem_bytes == 4 ? 3 : 2, V = 1 << W;
  const std::uint32_t* kpos = groups ? d.groups->kpos.data() : d.kpos.data();
  const std::uint32_t* qvec = groups ? d.groups->qvec.data() : d.qvec.data();
  // The group's input vectors are a ⊕ span(kcols) (vector starts, aligned); its output vectors
  // vec ⊕ qvec[l] must be a coset of the same span, shifted by W.
  std::vector<BitVec> kcols;
  for (int i = 0; i < W; ++i) kcols.push_back(kpos[1 << i]);
  for (int k = 0; k < V; ++k)
    if (kpos[k] != xor_of_columns(kcols, static_cast<std::uint64_t>(k)) || (kpos[k] & (V - 1))) return false;
  std::vector<std::uint32_t> qdiff, kvec;
  for (int l = 0; l < V; ++l) qdiff.push_back(qvec[l] ^ qvec[0]), kvec.push_back(kpos[l] >> W);
  std::sort(qdiff.begin(), qdiff.end()), std::sort(kvec.begin(), kvec.end());
  if (qdiff != kvec) return false;
  const std::vector<BitVec> nat(d.nat_cols.begin(), d.nat_cols.end());
  const auto partner = affine_involution(static_cast<int>(nat.size()), [&](BitVec h) {
    const std::uint32_t vec = xor_of_columns(d.vec_cols, h) ^ d.vec_c;
    return origin_index(nat, kcols, (BitVec{vec ^ qvec[0]} << W) ^ d.nat_c);
  });
  if (!partner) return false;
  DirectPairs p;
  p.h_c = partner->first, p.h_cols = partner->second;
  compose(d.nat_cols, d.nat_c, *partner, p.nat_cols, p.nat_c);
  compose(d.vec_cols, d.vec_c, *partner, p.vec_cols, p.vec_c);
  compose(d.mu_cols, d.mu_c, *partner, p.mu_cols, p.mu_c);
  d.pairs = std::move(p);
  return true;
}

bool walk_pairs(DirectTables& d) {
  // S's basis: the table is the XOR table of it; A⁻¹·S = S (walk_in[j] = A⁻¹·walk_out[j]).
  std::vector<BitVec> s;
  for (std::size_t j = 1; j < d.walk_out.size(); j *= 2) s.push_back(d.walk_out[j]);
  const Subspace span = Subspace::span(d.n, s);
  for (std::size_t j = 1; j < d.walk_in.size(); j *= 2)
    if (!span.contains(d.walk_in[j])) return false;
  // Block h's sources x0(h) ⊕ S are the outputs of the block whose output coset y0 ⊕ S holds x0(h).
  const auto partner = affine_involution(static_cast<int>(d.walk_ycols.size()), [&](BitVec h) {
    return origin_index(d.walk_ycols, s, xor_of_columns(d.walk_xcols, h) ^ d.walk_c);
  });
  if (!partner) return false;
  DirectPairs p;  // the walk exchanges a block's outputs with their sources: the partner's index is enough
  p.h_c = partner->first, p.h_cols = partner->second;
  d.pairs = std::move(p);
  return true;
}

}  // namespace

bool make_direct_pairs(const Bmmc& bmmc, DirectTables& t) {
  if (bmmc.n() != t.n || !is_involution(bmmc)) return false;
  return t.groups || t.blend ? group_pairs(t) : walk_pairs(t);
}

}  // namespace bmmc::cpu_detail
