// The direct loops' tables and the choice between them (see direct_blocks.hpp): groups of 64-byte vectors
// where the CPU has AVX-512 (VBMI for 2-byte elements), else the cheaper of the AVX2 blend and
// lane-permuting groups, the byte groups of 32-byte vectors (VBMI), else the walk; and each choice's L1-set
// pile, which the executor's size rule reads. Pure apart from the CPU checks.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <utility>

#include "avx2_transpose.hpp"
#include "avx512_network.hpp"
#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/core/subspace.hpp"
#include "direct_blocks.hpp"
#include "tuning.hpp"
#include "vbmi_network.hpp"

namespace bmmc::cpu_detail {

namespace {

// Whether every vector's lane permutation is the identity.
bool identity_lanes(const std::array<std::array<std::int32_t, 32>, 32>& perm, int lanes) {
  for (int v = 0; v < lanes; ++v)
    for (int j = 0; j < lanes; ++j)
      if (perm[v][j] != j) return false;
  return true;
}

// The L1 set (of 64 sets of 64-byte lines: byte address bits 6..11) of an element offset from a 4 KiB-aligned
// base. Linear in the offset: l1_set(x ⊕ y) = l1_set(x) ⊕ l1_set(y).
std::uint64_t l1_set(std::uint64_t elem_offset, int elem_bytes) {
  return (elem_offset * static_cast<std::uint64_t>(elem_bytes) >> 6) & 63;
}

// The most of these element offsets (vector starts) that fall into one L1 set.
int set_pile(const std::uint32_t* offsets, int count, int elem_bytes) {
  int pile = 0;
  for (int i = 0; i < count; ++i) {
    int same = 0;
    for (int j = 0; j < count; ++j) same += l1_set(offsets[i], elem_bytes) == l1_set(offsets[j], elem_bytes);
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
// For pairs (make_direct_tables' `pairs`): directions that complete the group space U = lanes + A·lanes
// A-invariantly. Any v with A·v ⊕ v ∈ U keeps it so (A·(U + v) ⊆ U + v), e.g. every vector f fixes; these v
// form a space Z ⊇ U, found by elimination on the images (A ⊕ I)·e_j modulo U. Unit directions of Z first
// (whole consecutive vectors for the group), then the rest of Z's basis; aligned (lane bits in U anyway).
std::vector<std::uint32_t> invariant_directions(const BitMatrix& a, int W) {
  const int n = a.cols();
  Subspace u = Subspace::low_bits(n, W);
  for (int i = 0; i < W; ++i) u.insert(a.col(i));
  std::vector<std::pair<BitVec, BitVec>> rows;  // (image modulo U, the combination of e_j it is the image of)
  std::vector<std::uint32_t> units, combos;
  for (int j = W; j < n; ++j) {
    BitVec img = u.reduce(a.col(j) ^ (BitVec{1} << j)), comb = BitVec{1} << j;
    for (const auto& [r, c] : rows)
      if (img & r & -r) img ^= r, comb ^= c;  // rows are reduced by their predecessors: pivots stay cleared
    if (img != 0)
      rows.emplace_back(img, comb);
    else
      (std::has_single_bit(comb) ? units : combos).push_back(static_cast<std::uint32_t>(comb));
  }
  units.insert(units.end(), combos.begin(), combos.end());
  return units;
}

bool fill_groups(const Bmmc& bmmc, const BitMatrix& ainv, int vector_bytes, DirectTables& d, bool pairs) {
  const int n = bmmc.n();
  const int W = std::countr_zero(static_cast<unsigned>(vector_bytes / d.elem_bytes)), V = 1 << W;
  // K0 = A: the group basis is A⁻¹'s columns (K0⁻¹(e_i) = A⁻¹·e_i).
  std::vector<BitVec> basis(n);
  for (int i = 0; i < n; ++i) basis[i] = ainv.col(i);
  // Groups of whole lines walk so that consecutive groups change L1 sets on both sides. Not the byte groups
  // of 32-byte vectors: there consecutive groups share lines (e_W, the other halves, is the first column), and
  // the set order measured slower (1-byte transposes at n = 16..18, BENCHMARKS.md session 23).
  const std::vector<std::uint32_t> first =
      vector_bytes == 64 ? set_changing_first(bmmc.matrix(), W, d.elem_bytes) : std::vector<std::uint32_t>{};
  std::optional<TransposeTables> x =
      make_group_tables(basis, W, d.elem_bytes, vector_bytes, first,
                        pairs ? invariant_directions(bmmc.matrix(), W) : std::vector<std::uint32_t>{});
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

std::vector<std::uint32_t> set_changing_first(const BitMatrix& a, int W, int elem_bytes) {
  // A direction moves a side to another set when its image there has a nonzero set (l1_set is linear).
  std::vector<std::uint32_t> order;
  for (int sides = 2; sides >= 0; --sides)
    for (int b = W; b < a.cols(); ++b) {
      const BitVec e = BitVec{1} << b;
      if ((l1_set(e, elem_bytes) != 0) + (l1_set(a.apply(e), elem_bytes) != 0) == sides)
        order.push_back(static_cast<std::uint32_t>(e));
    }
  return order;
}

DirectTables make_direct_tables(const Bmmc& bmmc, int elem_bytes, bool transposes, bool avx512, bool pairs) {
  const int n = bmmc.n();
  if (n > 32) throw std::invalid_argument(fmt::format("direct CPU loop: n = {} is above 32", n));
  DirectTables d;
  d.n = n;
  d.elem_bytes = elem_bytes;
  const BitMatrix ainv = bmmc.matrix().inverse();
  const BitVec c = bmmc.complement();
#if BMMC_CPU_DIRECT_AVX2
  // Groups of whole 64-byte lines where the CPU has them (AVX-512 for 4/8-byte elements, VBMI for 2-byte), for
  // every map that has them (n ≥ 2W); they beat the AVX2 loops and the 32-byte byte groups on every map
  // measured (BENCHMARKS.md, docs/DESIGN.md §4.2).
  if (transposes && wide_groups_supported(elem_bytes, avx512) && fill_groups(bmmc, ainv, 64, d, pairs)) {
    const int V = 1 << d.groups->lane_bits;
    return with_pile(std::move(d), V);
  }
  if (transposes && (elem_bytes == 4 || elem_bytes == 8) && has_avx2()) {
    DirectTables blended = d;
    const bool blend = make_blend_tables(bmmc, elem_bytes, blended);
    const int W = elem_bytes == 4 ? 3 : 2;
    if (fill_groups(bmmc, ainv, 32, d, pairs)) {
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
  // 1- and 2-byte elements (2-byte ones below 2W = 10 bits): the byte groups of 32-byte vectors (AVX-512 VBMI).
  if (transposes && avx512 && (elem_bytes == 1 || elem_bytes == 2) && has_vbmi() &&
      fill_groups(bmmc, ainv, 32, d, pairs)) {
    const int V = 1 << d.groups->lane_bits;
    return with_pile(std::move(d), V);
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

std::size_t direct_limit_bytes(const DirectTables& d) {
  using namespace cpu_tuning;
  const int group_vectors = d.groups ? 1 << d.groups->lane_bits : d.elem_bytes == 4 ? 8 : 4;
  if (!d.groups && !d.blend) return d.set_pile > kL1Ways ? kDirectPiledWalkBytes : kDirectWalkBytes;  // the walk
  if (d.groups && d.groups->vector_bytes == 64) return kDirectWideBytes;
  if (2 * d.set_pile > group_vectors) return kDirectPiledBytes;
  return d.elem_bytes <= 2 ? kDirectByteGroupBytes : kDirectTransposeBytes;
}

std::uint64_t direct_chunk(const DirectTables& d, int threads) {
  const std::uint64_t units = direct_units(d);
  const std::uint64_t min_chunk = std::max<std::uint64_t>(
      1, std::uint64_t{cpu_tuning::kDirectMinChunkBytes} * units / array_bytes(d.n, d.elem_bytes));
  const auto per_thread = static_cast<std::uint64_t>(cpu_tuning::kChunksPerThread) * std::max(threads, 1);
  return std::max<std::uint64_t>(min_chunk, units / per_thread);
}

std::optional<DirectTables> choose_direct(const Bmmc& bmmc, int elem_bytes, const CpuPolicy& policy, bool pairs) {
  using namespace cpu_tuning;
  if (policy.direct == false) return std::nullopt;
  const std::size_t bytes = array_bytes(bmmc.n(), elem_bytes);
  // No tables built for arrays above every limit.
  if (policy.direct != true &&
      bytes > (policy.register_transpose != false && wide_groups_supported(elem_bytes, policy.avx512)
                   ? kDirectWideBytes
                   : std::max(kDirectTransposeBytes, kDirectWalkBytes)))
    return std::nullopt;
  DirectTables d =
      make_direct_tables(bmmc, elem_bytes, policy.register_transpose.value_or(true), policy.avx512, pairs);
  if (policy.direct != true && bytes > direct_limit_bytes(d)) return std::nullopt;
  return d;
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

}  // namespace bmmc::cpu_detail
