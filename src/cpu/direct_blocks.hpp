// Internal to the CPU backend: the direct loops for arrays that fit in cache — one pass from input to
// output through registers, with no tile — and the same loops in place on pairs of units for involutions
// (make_direct_pairs, run_direct_pairs; docs/DESIGN.md §8).
//
// Why. The tile loops (transpose_blocks.hpp, executor.cpp) read and write every element twice (input →
// tile → output) so that a block's input runs and output runs are both whole cache lines; for arrays that
// stream from DRAM that is what makes them run at memcpy speed. An array that fits in L2 has no lines to
// save, and there the round trip itself was the cost: 4.2–5× a single-thread memcpy at 64–256 KiB
// (BENCHMARKS.md "CPU small arrays"). The direct loops touch every element once:
//
// - Transposes (4- and 8-byte elements, AVX2): the group algebra of transpose_blocks.hpp with the output
//   array in the role of the tile, i.e. K0 = A. A group is 2^W input vectors of 2^W consecutive elements at
//   a ⊕ X·k that A maps onto exactly 2^W output vectors of consecutive elements (X spans the aligned part of
//   A⁻¹'s lane columns); each group is loaded, lane-permuted (vpermd, skipped when the tables make it the
//   identity, e.g. bit-reverse and bit permutations that keep lanes in order), transposed (T_r) and stored
//   straight to the output. The group representatives are visited in Gray-code order, so each step is one
//   XOR of a column (input offset, output vector, lane XOR μ) instead of a table the size of the array.
//   The complement c adds its vector part to every output vector and its lane part, through D⁻¹, to μ.
// - Groups of 64-byte vectors (AVX-512; 2-byte elements with VBMI): the same lane-permuting groups with
//   16 (4-byte), 8 (8-byte) or 32 (2-byte) lanes a vector, every load and store one whole line, so crowded
//   L1 sets cost no second fetch of a line; the lane permutations folded into the first and last exchange
//   (avx512_network.hpp, vbmi_network.hpp).
// - Byte groups (1-byte elements, and 2-byte ones below n = 10, AVX-512 VBMI): the same lane-permuting groups
//   with 32 (16) lanes per 32-byte vector, through the byte-permute network of vbmi_network.hpp.
// - Walk (any element size): out[y] = in[A⁻¹·(y ⊕ c)] over blocks y0 ⊕ S, S = the output line's bits ⊕
//   A·(the input line's bits) (≤ 2^(2L) elements, L = log2 of the elements per 64-byte line, 32 bytes for
//   1/2-byte elements): a block reads and writes whole lines, so each line is fetched once even for
//   bit-reverse. Offsets come from a 2^dim(S)-entry table (y, A⁻¹·y), blocks in Gray-code order (one XOR of
//   a column per block): per element two table loads, two XORs, a load and a store. It is the loop for
//   16-byte elements, for 1- and 2-byte elements without VBMI, for CPUs without AVX2, and for 8-byte maps
//   that pile a group into one L1 set.
//
// Which loop runs, and below which size, is the executor's rule (direct_limit_bytes, choose_direct;
// docs/DESIGN.md §4.2).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/bmmc.hpp"
#include "bmmc/cpu/executor.hpp"
#include "transpose_blocks.hpp"

// The vector loops (AVX2, AVX-512) exist for GCC-compatible compilers on x86-64; elsewhere only the walk.
#if defined(__GNUC__) && defined(__x86_64__)
#define BMMC_CPU_DIRECT_AVX2 1
#else
#define BMMC_CPU_DIRECT_AVX2 0
#endif

namespace bmmc::cpu_detail {

/// In place, for an involution f (make_direct_pairs): the partner of unit h — the unit whose input set is h's
/// output set, which exists because a unit's space is A-invariant — as affine maps of h's Gray index: the
/// partner's Gray index (one unit of a pair runs both, owns_pair; a unit that is its own partner runs alone)
/// and, for groups, its state, each as the value at Gray index 0 and one column per Gray bit.
struct DirectPairs {
  std::vector<BitVec> h_cols;
  BitVec h_c = 0;
  std::vector<std::uint32_t> nat_cols, vec_cols, mu_cols;  // groups: input offset a, output vector, lane XOR μ
  std::uint32_t nat_c = 0, vec_c = 0, mu_c = 0;
};

/// Whether unit h runs its pair {h, ph} (ph = its partner's Gray index) in place: exactly one of the two does,
/// and a unit that is its own partner does. The owner is the unit whose bit at the lowest position where h and
/// ph differ equals the parity of h & ph, which spreads the owners evenly over any range of indices; "the
/// smaller index" put every owner of pairs that differ in a high bit into the first half of the array, so two
/// threads' chunks got all the work and none (2x the out-of-place time, 256 KiB of 16-byte elements).
constexpr bool owns_pair(BitVec h, BitVec ph) {
  if (h == ph) return true;
  const int b = std::countr_zero(h ^ ph);
  return ((h >> b) & 1) == static_cast<BitVec>(std::popcount(h & ph) & 1);
}

struct DirectTables {
  int n = 0;
  int elem_bytes = 4;
  // Blend transposes (the usual case: set when the input vectors' bits reach every output lane bit, e.g.
  // bit-reverse, transposes of ≥ W bits, random BMMCs): group = 2^W loads from kpos, exchanges of lanes
  // between registers s and s ⊕ ub[q] for the lanes with bit q set (vpblendd), the full transpose, the
  // same with ua, and 2^W stores to output vectors vec ⊕ qvec[s]. No lane permutes at all: with the
  // transpose T in the middle, M = U_a·T·U_b (U = "vector ⊕= B·lane", a blend per register pair) once
  // the input vectors are relabelled by Mjk⁻¹ (docs/DESIGN.md §4.2). load_swap: the 128-bit half exchange
  // of the transpose is done by the loads (two 16-byte loads per register) when ub allows it.
  bool blend = false;
  bool load_swap = false;
  std::array<std::uint32_t, 8> kpos{}, qvec{}, pre_xor{};
  std::uint32_t nat_c = 0;  // the complement's input shift (the output vector and μ ones are vec_c, mu_c)
  std::array<std::uint32_t, 3> ub{}, ua{};
  // Lane-permuting transposes (when the blends do not apply: some output lane bits come from input lane
  // bits only, e.g. transpose:1; and every byte group): the group tables with their representative tables
  // dropped; the representatives come from these columns instead, one per bit of the group index.
  std::optional<TransposeTables> groups;
  std::vector<std::uint32_t> nat_cols, vec_cols, mu_cols;
  std::uint32_t vec_c = 0, mu_c = 0;  // the complement's output-vector offset and lane XOR
  bool pre = true, post = true;       // whether the lane permutations before / after the network are needed
  bool mu = false;                    // blends: whether some group has a lane XOR μ ≠ 0
  // The most of a group's 2^W input vectors that share one L1 set (byte address bits 6..11), or of its
  // output vectors if fewer: 2^W for bit-reverse-like maps whose vector strides on both sides are
  // multiples of 4 KiB. For the walk: the most of an output line's 2^L sources that share one set. Such groups evict their own
  // lines before the neighbouring group uses the other halves, so the rule sends larger arrays of them to
  // the tile loop (executor.cpp).
  int set_pile = 0;
  // Walk: the block's output offsets (walk_out) and their sources A⁻¹·y (walk_in); the Gray-walk columns of
  // the blocks (output y and input A⁻¹·y); A⁻¹·c.
  std::vector<std::uint32_t> walk_out, walk_in;
  std::vector<BitVec> walk_ycols, walk_xcols;
  BitVec walk_c = 0;              // A⁻¹·c
  // Set by make_direct_pairs: the loop then runs in place on pairs of units (run_direct_pairs).
  std::optional<DirectPairs> pairs;
};

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
  bool owns() const { return !Pairs || owns_pair(h, ph); }
  bool paired() const { return Pairs && h != ph; }
};

/// The walk's block: the output lines' bits plus the images of the input lines' bits, so that a block reads
/// and writes whole 64-byte lines (32-byte halves for 1- and 2-byte elements, which keeps the table at
/// ≤ 2^10 entries, 8 KiB): log2 of the elements per line (part).
constexpr int walk_line_bits(int elem_bytes) {
  return elem_bytes == 16 ? 2 : elem_bytes == 8 ? 3 : elem_bytes == 4 ? 4 : 5;
}

/// Tables for out[A·x ⊕ c] = in[x]: with the register transposes when `transposes` and this CPU can run
/// them for the element size (AVX-512 groups of 64-byte vectors, else AVX2, for 4/8 bytes; AVX-512 VBMI for
/// 1/2 bytes; else the walk); `avx512` = false leaves out the AVX-512 loops, as on a CPU without them.
/// `pairs`: tables to run in place (make_direct_pairs), whose groups' X is completed by directions that keep
/// the group space A-invariant where there are such (the same loops otherwise).
/// Throws std::invalid_argument for n > 32. Pure apart from the CPU check.
DirectTables make_direct_tables(const Bmmc& bmmc, int elem_bytes, bool transposes, bool avx512 = true,
                                bool pairs = false);

/// The order in which the groups of 64-byte vectors walk their group index: the aligned unit directions e_b
/// (W ≤ b < n) that move both a group's input vectors (by e_b) and its output vectors (by A·e_b) to other L1
/// sets (byte address bits 6..11) first, then those that move one side, then the rest; bit order within
/// each. The Gray walk flips its first column every other group, so consecutive groups land in other sets
/// on both sides. Why: a group's 2^W lines on a side can share one 8-way set (bit-reverse: the vectors differ
/// only in bits above 4 KiB); when the next group's lines fall into the same sets too, 2^(W+1) lines compete
/// for 8 ways. Example: 8-byte bit-reverse, n = 14 (W = 3, sets = element bits 3..8): e_5..e_8 move both
/// sides (A·e_b = e_(13−b)), e_3, e_4 only the input, e_9, e_10 only the output, e_11..e_13 neither: order 5, 6,
/// 7, 8, 3, 4, 9, 10, 11, 12, 13 (the last three span the group's own vectors, which make_group_tables skips).
/// Measured on Zen 4 (BENCHMARKS.md, session 23): 8-byte bit-reverse at 128 KiB–512 KiB 2.2–2.5× → 1.6–1.8× a
/// one-thread memcpy. n ≤ 32 (make_direct_tables refuses more). Pure.
std::vector<std::uint32_t> set_changing_first(const BitMatrix& a, int W, int elem_bytes);

/// Fills d's blend fields (kpos, qvec, pre_xor, ub, ua, the Gray columns, load_swap, pre, mu) for 4- or
/// 8-byte elements and sets d.blend; false (d.blend unset) when the decomposition or its element-by-element
/// check fails. Pure (blend_tables.cpp).
bool make_blend_tables(const Bmmc& bmmc, int elem_bytes, DirectTables& d);

/// The units run_direct splits the array into: groups of 2^(2W) elements, or walk blocks.
std::uint64_t direct_units(const DirectTables& t);

/// The thread pool's chunk of units for `threads` threads: at least kDirectMinChunkBytes of the array (on
/// small arrays a chunk per group made the pool's shared counter line travel between the cores once per group),
/// else kChunksPerThread chunks a thread, so a stalled vCPU holds up little (tuning.hpp).
std::uint64_t direct_chunk(const DirectTables& t, int threads);

/// The walk's blocks [begin, end) (run_direct and run_direct_pairs for tables without groups; direct_walk.cpp).
void run_walk(const DirectTables& t, const unsigned char* in, unsigned char* out, std::uint64_t begin,
              std::uint64_t end, bool pairs);

/// Units [begin, end) of the permutation; `in` and `out` aligned to the element size only.
void run_direct(const DirectTables& t, const unsigned char* in, unsigned char* out, std::uint64_t begin,
                std::uint64_t end);

/// For an involution f = `bmmc` whose tables `t` are (make_direct_tables): the partner of every unit into
/// t.pairs, so that run_direct_pairs runs the loop in place. False (t unchanged) when a unit's output set is
/// not another unit's input set (a group space that f does not map onto itself: X completed by directions f
/// moves out of it) or f is not an involution. Pure.
bool make_direct_pairs(const Bmmc& bmmc, DirectTables& t);

/// Units [begin, end) of the permutation in place on `data` (t.pairs set; aligned to the element size only):
/// of each pair one unit runs (owns_pair) and the other is skipped; a group loads its own and its partner's input
/// before it stores either output, a walk block exchanges each of its outputs with its source (which runs the
/// partner block too), so every element is read before it is written and the units that run own disjoint
/// elements: calls on disjoint ranges may run at once. The same loads, networks and stores as run_direct.
void run_direct_pairs(const DirectTables& t, unsigned char* data, std::uint64_t begin, std::uint64_t end);

/// The array size up to which the executor runs these tables' loop instead of the tile loop (one-pass plans
/// made by the CPU executor; in place, each involution pass): the size rule of docs/DESIGN.md §4.2, whose
/// limits and measurements are in tuning.hpp.
std::size_t direct_limit_bytes(const DirectTables& t);

/// The direct loop's tables for out[A·x ⊕ c] = in[x] where the policy and the size rule (direct_limit_bytes) ask
/// for the direct loop on this array (policy.direct: true always, false never, unset by the rule), else nothing.
/// policy.tile_bits is the caller's to weigh (an explicit tile asks for the tile loop). `pairs`: as for
/// make_direct_tables.
std::optional<DirectTables> choose_direct(const Bmmc& bmmc, int elem_bytes, const CpuPolicy& policy,
                                          bool pairs = false);

/// The access pattern of the lane-permuting group loops alone, for benchmarks: every group's input vectors
/// loaded and stored to its output vectors in the loop's order (so every output line is written once),
/// with no lane permutes and no exchanges — not the permutation. Single thread, the whole array; false
/// (nothing written) when `t` has no groups or the CPU cannot run its vectors (AVX2; AVX-512 for 64 bytes).
bool run_direct_probe(const DirectTables& t, const unsigned char* in, unsigned char* out);

/// Whether make_direct_tables can give groups of 64-byte vectors for this element size on this CPU (AVX-512
/// for 4/8 bytes, AVX-512 VBMI for 2 bytes) with CpuPolicy::avx512 = `avx512`: the executor builds direct
/// tables above 1 MiB only then.
bool wide_groups_supported(int elem_bytes, bool avx512);

/// "direct-blend-avx2", "direct-transpose-avx2", "direct-transpose-avx512" (4/8-byte groups of 64-byte
/// vectors), "direct-transpose-avx512vbmi-64" (2-byte groups of 64-byte vectors),
/// "direct-transpose-avx512vbmi" (1/2-byte groups of 32-byte vectors) or "direct-walk".
std::string direct_kernel_name(const DirectTables& t);

}  // namespace bmmc::cpu_detail
