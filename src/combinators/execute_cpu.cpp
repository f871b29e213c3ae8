// CPU execution of lowered programs (see execute_cpu.hpp).
#include "bmmc/combinators/execute_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <unordered_map>
#include <stdexcept>
#include <vector>

#include "bmmc/cpu/thread_pool.hpp"
#include "index_bits.hpp"

namespace bmmc {

namespace {

int thread_count(int requested, std::uint64_t work) {
  int t = requested > 0 ? requested : cpu_cores();
  // Below ~64K chunks a thread start costs more than the work.
  const std::uint64_t cap = std::max<std::uint64_t>(1, work >> 16);
  return static_cast<int>(std::min<std::uint64_t>(t, cap));
}

// Pairs (the compare-swap leaves): branch-free min/max, because on random keys the comparison is a coin toss
// and a mispredicted branch per pair costs more than the memory traffic.
template <class T>
void pair_range(const LeafGeometry& g, bool descending, T* data, std::uint64_t begin, std::uint64_t end) {
  const BitVec d = g.dirs[0], row = g.rows[0];
  const int pivot = g.pivots[0];
  for (std::uint64_t t = begin; t < end; ++t) {
    const BitVec x = (t & low_mask(pivot)) | ((t >> pivot) << (pivot + 1));
    const bool low_first = (parity(row & x) ^ static_cast<int>(g.low_c)) == static_cast<int>(descending);
    const T a = data[x], b = data[x ^ d];
    const T mn = b < a ? b : a, mx = b < a ? a : b;
    data[x] = low_first ? mn : mx;
    data[x ^ d] = low_first ? mx : mn;
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

}  // namespace

void leaf_pass_cpu(const Bmmc& layout, const Leaf& leaf, void* data, DType t, int threads) {
  if (!data) throw std::invalid_argument("leaf_pass_cpu: data is null");
  visit_dtype(t, [&](auto v) { leaf_pass(layout, leaf, static_cast<decltype(v)*>(data), threads); });
}

ExecStats execute_cpu(const LoweredProgram& lp, void* data, DType t, ExecStrategy s, const CpuPolicy& options) {
  if (!data) throw std::invalid_argument("execute_cpu: data is null");
  const auto start = std::chrono::steady_clock::now();
  const std::size_t bytes = (std::size_t{1} << lp.n) * static_cast<std::size_t>(dtype_bytes(t));
  std::unique_ptr<unsigned char[]> scratch;
  void* cur = data;
  void* other = nullptr;
  ExecStats st;
  // Stage permutations repeat (the sorting network's levels reuse them): prepare each distinct one once.
  std::unordered_map<Bmmc, CpuPermuter> permuters;
  auto permute_step = [&](const Bmmc& p) {
    if (!scratch) scratch.reset(new unsigned char[bytes]);
    if (!other) other = scratch.get();
    auto it = permuters.find(p);
    if (it == permuters.end()) it = permuters.emplace(p, CpuPermuter(p, dtype_bytes(t), options)).first;
    it->second(cur, other);
    std::swap(cur, other);
    ++st.passes;
    ++st.permutations;
  };
  for (const ScheduledPass& pass : schedule(lp, s)) {
    if (const auto* p = std::get_if<PermutePass>(&pass)) {
      permute_step(p->perm);
    } else {
      const auto& l = std::get<LeafPass>(pass);
      leaf_pass_cpu(l.layout, l.leaf, cur, t, options.threads);
      ++st.passes;
      ++st.leaf_passes;
    }
  }
  if (cur != data) {
    std::memcpy(data, cur, bytes);
    ++st.passes;
  }
  st.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return st;
}

}  // namespace bmmc
