// CPU execution of lowered programs (see execute_cpu.hpp).
#include "bmmc/combinators/execute_cpu.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <memory>
#include <span>
#include <unordered_map>
#include <stdexcept>
#include <vector>

#include "bmmc/core/subspace.hpp"
#include "bmmc/cpu/thread_pool.hpp"
#include "index_bits.hpp"
#include "pair_simd.hpp"

namespace bmmc {

namespace {

int thread_count(int requested, std::uint64_t work) {
  check_cpu_threads(requested);
  int t = requested > 0 ? requested : cpu_cores();
  // Below ~64K chunks a thread start costs more than the work.
  const std::uint64_t cap = std::max<std::uint64_t>(1, work >> 16);
  return static_cast<int>(std::min<std::uint64_t>(t, cap));
}

// Pairs (the compare-swap leaves): branch-free min/max, because on random keys the comparison is a coin toss
// and a mispredicted branch per pair costs more than the memory traffic. `low_first`: the min goes to `a`.
template <class T>
inline void compare_swap(T& a, T& b, bool low_first) {
  const T x = a, y = b;
  const T mn = y < x ? y : x, mx = y < x ? x : y;
  a = low_first ? mn : mx;
  b = low_first ? mx : mn;
}

template <class T>
void pair_range(const LeafGeometry& g, bool descending, T* data, std::uint64_t begin, std::uint64_t end) {
  const BitVec d = g.dirs[0], row = g.rows[0];
  const int pivot = g.pivots[0];
  for (std::uint64_t t = begin; t < end; ++t) {
    const BitVec x = (t & low_mask(pivot)) | ((t >> pivot) << (pivot + 1));
    const bool low_first = (parity(row & x) ^ static_cast<int>(g.low_c)) == static_cast<int>(descending);
    compare_swap(data[x], data[x ^ d], low_first);
  }
}

template <class T>
void leaf_range(const LeafGeometry& g, const Leaf& leaf, T* data, std::uint64_t begin, std::uint64_t end) {
  if (leaf.kind == LeafKind::CompareSwap || leaf.kind == LeafKind::CompareSwapDesc)
    return pair_range(g, leaf.kind == LeafKind::CompareSwapDesc, data, begin, end);
  const int size = 1 << g.bits;
  BitVec offs[256];
  for (int k = 0; k < size; ++k) offs[k] = xor_of_columns(std::span(g.dirs, g.bits), k);
  T p[256], v[256];
  for (std::uint64_t t = begin; t < end; ++t) {
    const BitVec x = deposit_around(t, g.pivots, g.bits);
    BitVec low = g.low_c;
    for (int i = 0; i < g.bits; ++i) low ^= BitVec(parity(g.rows[i] & x)) << i;
    for (int k = 0; k < size; ++k) p[k] = data[x ^ offs[k]];
    for (int j = 0; j < size; ++j) v[j] = p[low ^ j];
    apply_leaf(leaf, v);
    for (int j = 0; j < size; ++j) data[x ^ offs[low ^ j]] = v[j];
  }
}

template <class T>
void leaf_pass(const Bmmc& layout, const Leaf& leaf, T* data, int threads) {
  const LeafGeometry g = leaf_geometry(layout, leaf_bits(leaf));
  const std::uint64_t reps = std::uint64_t{1} << (g.n - g.bits);
  const int nt = thread_count(threads, reps);
  // The CPU backend's persistent workers, in nt chunks (leaf groups cost the same everywhere).
  ThreadPool::shared().run(reps, (reps - 1) / static_cast<std::uint64_t>(nt) + 1, nt,
                           [&](std::uint64_t begin, std::uint64_t end, int) { leaf_range(g, leaf, data, begin, end); });
}

// Copies the runs i = 0, run, 2·run, … < size of run_bytes each from src(i) to dst(i). Runs of 64 and 128 bytes
// (the CPU's default lines of 4- and 8-byte keys) are fixed-size copies the compiler inlines: a libc memcpy
// call per run cost about as much as a tile's columns.
template <class Dst, class Src>
void copy_runs(std::uint64_t size, std::uint64_t run, std::uint64_t run_bytes, Dst dst, Src src) {
  if (run_bytes == 64)
    for (std::uint64_t i = 0; i < size; i += run) std::memcpy(dst(i), src(i), 64);
  else if (run_bytes == 128)
    for (std::uint64_t i = 0; i < size; i += run) std::memcpy(dst(i), src(i), 128);
  else
    for (std::uint64_t i = 0; i < size; i += run) std::memcpy(dst(i), src(i), run_bytes);
}

// One fused pass (schedule.hpp, FusedLeafPass): per coset of V', gather the 2^t elements into a buffer (whole
// runs of 2^line_bits at a time), apply every leaf of the run on the buffer, scatter back. Buffer index i holds
// global index x0 ⊕ off[i], off[i] = Σ i_k·tile[k]; a leaf's pair direction d ∈ V' has coordinates δ (d's bits
// at the basis pivots, the basis being reduced), so the pairs are (i, i ⊕ δ); which member is the chunk's
// position 0 is the low bit of the logical index M·x ⊕ c, as in pair_range.
template <class T>
void fused_pass(const FusedLeafPass& p, int n, T* data, DType t_key, int threads) {
  const Subspace tile = Subspace::span(n, p.tile);
  if (tile.basis() != p.tile) throw std::logic_error("fused pass: the tile basis is not in Subspace's reduced form");
  const int t = tile.dim();
  std::vector<int> pivots;  // pivot of basis vector k = its lowest set bit
  for (BitVec b : p.tile) pivots.push_back(std::countr_zero(b));
  int run_bits = 0;  // leading basis vectors e_0, e_1, ...: contiguous runs
  while (run_bits < t && p.tile[run_bits] == BitVec{1} << run_bits) ++run_bits;
  const std::vector<int> outside = tile.coordinate_complement();  // coset index bits go to the non-pivot positions
  const std::uint64_t size = std::uint64_t{1} << t, run = std::uint64_t{1} << run_bits, run_bytes = run * sizeof(T);
  std::vector<BitVec> off(size);
  for (std::uint64_t i = 0; i < size; ++i) off[i] = xor_of_columns(p.tile, i);
  struct PairLeaf {
    std::uint64_t delta = 0;
    int high = 0;
    BitVec row = 0;
    std::uint64_t orient = 0;  // parity(row & off[i]) = parity(orient & i): the row on buffer indices
    int c0 = 0;
    bool descending = false;
  };
  std::vector<PairLeaf> leaves;
  for (const LeafPass& l : p.leaves) {
    const BitVec d = l.layout.inverse().matrix().col(0);
    PairLeaf q;
    for (int k = 0; k < t; ++k) q.delta |= ((d >> pivots[k]) & 1) << k;
    if (xor_of_columns(p.tile, q.delta) != d) throw std::logic_error("fused pass: a leaf's pair leaves its tile");
    q.high = 63 - std::countl_zero(q.delta);
    q.row = l.layout.matrix().row(0);
    for (int k = 0; k < t; ++k) q.orient |= std::uint64_t(parity(q.row & p.tile[k])) << k;
    q.c0 = static_cast<int>(l.layout.complement() & 1);
    q.descending = l.leaf.kind == LeafKind::CompareSwapDesc;
    leaves.push_back(q);
  }
  const std::uint64_t cosets = std::uint64_t{1} << (n - t);
  auto body = [&](std::uint64_t begin, std::uint64_t end, int) {
    thread_local std::vector<T> buffer;
    buffer.resize(size);
    for (std::uint64_t c = begin; c < end; ++c) {
      BitVec x0 = 0;
      for (std::size_t i = 0; i < outside.size(); ++i) x0 |= ((c >> i) & 1) << outside[i];
      copy_runs(size, run, run_bytes, [&](std::uint64_t i) { return &buffer[i]; },
                [&](std::uint64_t i) { return data + (x0 ^ off[i]); });
      for (const PairLeaf& q : leaves) {
        const int base = parity(q.row & x0) ^ q.c0;
        if (compare_swap_pairs_avx2(buffer.data(), t_key, size, q.delta, q.orient, base ^ static_cast<int>(q.descending)))
          continue;
        const std::uint64_t below = (std::uint64_t{1} << q.high) - 1;
        for (std::uint64_t h = 0; h < size / 2; ++h) {
          const std::uint64_t i = (h & below) | ((h & ~below) << 1), k = i ^ q.delta;
          compare_swap(buffer[i], buffer[k], (base ^ parity(q.row & off[i])) == static_cast<int>(q.descending));
        }
      }
      copy_runs(size, run, run_bytes, [&](std::uint64_t i) { return data + (x0 ^ off[i]); },
                [&](std::uint64_t i) { return &buffer[i]; });
    }
  };
  const int nt = thread_count(threads, std::uint64_t{1} << n);
  ThreadPool::shared().run(cosets, (cosets - 1) / static_cast<std::uint64_t>(nt) + 1, nt, body);
}

}  // namespace

void fused_leaf_pass_cpu(const FusedLeafPass& pass, int n, void* data, DType t, int threads) {
  if (!data) throw std::invalid_argument("fused_leaf_pass_cpu: data is null");
  for (const LeafPass& l : pass.leaves) check_leaf(l.leaf);  // a hand-made pass: before anything moves
  visit_dtype(t, [&](auto v) { fused_pass(pass, n, static_cast<decltype(v)*>(data), t, threads); });
}

void leaf_pass_cpu(const Bmmc& layout, const Leaf& leaf, void* data, DType t, int threads) {
  if (!data) throw std::invalid_argument("leaf_pass_cpu: data is null");
  check_leaf(leaf);
  visit_dtype(t, [&](auto v) { leaf_pass(layout, leaf, static_cast<decltype(v)*>(data), threads); });
}

FusionOptions cpu_fusion_options() noexcept { return {14, 4}; }

CpuProgram::CpuProgram(const LoweredProgram& lp, DType t, ExecStrategy s, const CpuPolicy& options,
                       const FusionOptions& fusion)
    : n_(lp.n), type_(t), threads_(options.threads), fusion_(fusion) {
  check_dtype(t);  // before anything is prepared or moved
  check_cpu_threads(options.threads);
  passes_ = bmmc::schedule(lp, s, fusion);
  for (const ScheduledPass& pass : passes_)
    if (const auto* p = std::get_if<PermutePass>(&pass)) {
      ++permutations_;
      if (!permuters_.contains(p->perm)) permuters_.emplace(p->perm, CpuPermuter(p->perm, dtype_bytes(t), options));
    }
}

std::size_t CpuProgram::passes() const noexcept { return passes_.size() + permutations_ % 2; }

std::size_t CpuProgram::fused_passes() const noexcept {
  std::size_t k = 0;
  for (const ScheduledPass& pass : passes_) k += std::holds_alternative<FusedLeafPass>(pass);
  return k;
}

std::size_t CpuProgram::temp_bytes() const noexcept {
  return permutations_ ? (std::size_t{1} << n_) * static_cast<std::size_t>(dtype_bytes(type_)) : 0;
}

std::vector<std::string> CpuProgram::pass_names() const {
  std::vector<std::string> names;
  for (const ScheduledPass& pass : passes_)
    names.emplace_back(std::holds_alternative<PermutePass>(pass)     ? "permute"
                       : std::holds_alternative<FusedLeafPass>(pass) ? "fused"
                                                                     : "leaf");
  if (permutations_ % 2) names.emplace_back("copy back");
  return names;
}

ExecStats CpuProgram::operator()(void* data, void* scratch, const std::function<void(std::size_t)>& between) const {
  if (!data) throw std::invalid_argument("CpuProgram: data is null");
  const auto start = std::chrono::steady_clock::now();
  const std::size_t bytes = (std::size_t{1} << n_) * static_cast<std::size_t>(dtype_bytes(type_));
  std::unique_ptr<unsigned char[]> owned;
  if (permutations_ && !scratch) {
    owned.reset(new unsigned char[bytes]);
    scratch = owned.get();
  }
  void* cur = data;
  void* other = scratch;
  ExecStats st;
  for (const ScheduledPass& pass : passes_) {
    if (between) between(st.passes);
    if (const auto* p = std::get_if<PermutePass>(&pass)) {
      permuters_.at(p->perm)(cur, other);
      std::swap(cur, other);
      ++st.permutations;
    } else if (const auto* f = std::get_if<FusedLeafPass>(&pass)) {
      fused_leaf_pass_cpu(*f, n_, cur, type_, threads_);
      ++st.leaf_passes;
    } else {
      const auto& l = std::get<LeafPass>(pass);
      leaf_pass_cpu(l.layout, l.leaf, cur, type_, threads_);
      ++st.leaf_passes;
    }
    ++st.passes;
  }
  if (cur != data) {
    if (between) between(st.passes);
    std::memcpy(data, cur, bytes);
    ++st.passes;
  }
  if (between) between(st.passes);
  st.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return st;
}

ExecStats execute_cpu(const LoweredProgram& lp, void* data, DType t, ExecStrategy s, const CpuPolicy& options,
                      const FusionOptions& fusion) {
  if (!data) throw std::invalid_argument("execute_cpu: data is null");
  return CpuProgram(lp, t, s, options, fusion)(data);
}

}  // namespace bmmc
