// The CPU executor of in-place plans (see inplace.hpp).
#include "bmmc/cpu/inplace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/cpu/thread_pool.hpp"
#include "bmmc/plan/plan_consistency.hpp"

namespace bmmc {

namespace {

template <int B>
struct Elem {
  unsigned char b[B];
};

// Offsets of V' from a coset origin (in) and of A·V' (out): an involution pass moves origin ⊕ in[i] to
// z ⊕ out[i], with z = A·origin ⊕ c.
struct CosetTables {
  std::vector<std::uint64_t> in, out;
};

CosetTables coset_tables(const TilePass& t) {
  std::vector<BitVec> basis;
  for (int j = 0; j < t.segment_bits(); ++j) basis.push_back(BitVec{1} << j);
  basis.insert(basis.end(), t.read_rows.begin(), t.read_rows.end());
  CosetTables c;
  const std::uint64_t size = std::uint64_t{1} << basis.size();
  c.in.resize(size);
  c.out.resize(size);
  for (std::uint64_t i = 0; i < size; ++i) {
    c.in[i] = xor_of_columns(basis, i);
    c.out[i] = t.bmmc.matrix().apply(c.in[i]);
  }
  return c;
}

template <int B>
void run_involution(const InvolutionPass& p, const CosetTables& tab, void* data, int threads) {
  auto* a = static_cast<Elem<B>*>(data);
  const TilePass& t = p.tile;
  const std::uint64_t size = tab.in.size();
  auto body = [&](std::uint64_t begin, std::uint64_t end, int) {
    thread_local std::vector<Elem<B>> buffer;
    buffer.resize(2 * size);
    for (std::uint64_t b = begin; b < end; ++b) {
      const std::uint64_t pb = p.partner(b);
      if (pb < b) continue;
      const auto [x0, z] = block_origin(t, b);
      if ((x0 & p.mask_bits) != p.mask_value) continue;
      if (pb == b && p.tile_fixed && z == x0) continue;
      const bool pair = pb != b;
      const BlockOrigin po = block_origin(t, pb);
      // Read both cosets, then write both: the same order as the GPU block, which the checker proves safe.
      for (std::uint64_t i = 0; i < size; ++i) buffer[i] = a[x0 ^ tab.in[i]];
      if (pair)
        for (std::uint64_t i = 0; i < size; ++i) buffer[size + i] = a[po.x0 ^ tab.in[i]];
      for (std::uint64_t i = 0; i < size; ++i) a[z ^ tab.out[i]] = buffer[i];
      if (pair)
        for (std::uint64_t i = 0; i < size; ++i) a[po.z ^ tab.out[i]] = buffer[size + i];
    }
  };
  const std::uint64_t blocks = t.blocks();
  threads = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, blocks)));
  ThreadPool::shared().run(blocks, std::max<std::uint64_t>(1, blocks / (8 * static_cast<std::uint64_t>(threads))),
                           threads, body);
}

// Element-wise swaps of x and f(x) > x, done a run at a time: f carries the low r index bits (and the mask names
// none of them), so the run of 2^r elements at x lands in order on the run at f(x). A swap of two high bits
// thus swaps long runs; with r = 0 this is one element at a time.
template <int B>
void run_naive(const NaiveInvolutionPass& p, void* data, int threads) {
  auto* a = static_cast<Elem<B>*>(data);
  int r = carried_low_bits(p.bmmc);
  if (p.mask_bits) r = std::min(r, std::countr_zero(p.mask_bits));
  const std::uint64_t run = std::uint64_t{1} << r, runs = std::uint64_t{1} << (p.n() - r);
  auto body = [&](std::uint64_t begin, std::uint64_t end, int) {
    for (std::uint64_t u = begin; u < end; ++u) {
      const std::uint64_t x = u << r;
      if ((x & p.mask_bits) != p.mask_value) continue;
      const std::uint64_t y = p.bmmc.apply(x);
      if (y > x) std::swap_ranges(a + x, a + x + run, a + y);
    }
  };
  threads = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, runs)));
  ThreadPool::shared().run(runs, (runs - 1) / static_cast<std::uint64_t>(threads) + 1, threads, body);
}

template <template <int> class F, class... Args>
void by_size(int eb, Args&&... args) {
  switch (eb) {
    case 1: return F<1>::run(args...);
    case 2: return F<2>::run(args...);
    case 4: return F<4>::run(args...);
    case 8: return F<8>::run(args...);
    case 16: return F<16>::run(args...);
  }
  throw std::invalid_argument(fmt::format("unsupported element size {} bytes: expected 1, 2, 4, 8 or 16", eb));
}
template <int B>
struct InvolutionRunner {
  static void run(const InvolutionPass& p, const CosetTables& t, void* d, int th) { run_involution<B>(p, t, d, th); }
};
template <int B>
struct NaiveRunner {
  static void run(const NaiveInvolutionPass& p, void* d, int th) { run_naive<B>(p, d, th); }
};

}  // namespace

PlanOptions cpu_inplace_plan_options(const CpuPolicy& policy) {
  if (policy.tile_bits != -1 && (policy.tile_bits < 5 || policy.tile_bits > 20))
    throw std::invalid_argument(
        fmt::format("CPU tile bits must be -1 (choose) or 5..20, got {}", policy.tile_bits));
  PlanOptions o;
  o.tile_bits = policy.tile_bits >= 0 ? policy.tile_bits : 12;
  return o;
}

struct CpuInPlacePermuter::Prepared {
  InPlacePlan plan;
  std::vector<CosetTables> tables;
  int threads = 1;
};

CpuInPlacePermuter::CpuInPlacePermuter(InPlacePlan plan, const CpuPolicy& policy) : policy_(policy) {
  check_elem_bytes(plan.elem_bytes);
  require_consistent_plan(plan, "CpuInPlacePermuter");
  auto p = std::make_shared<Prepared>();
  for (const InPlacePass& pass : plan.passes) {
    const auto* t = std::get_if<InvolutionPass>(&pass);
    p->tables.push_back(t ? coset_tables(t->tile) : CosetTables{});
  }
  p->threads = resolve_cpu_threads(policy.threads, plan.n(), plan.elem_bytes);
  p->plan = std::move(plan);
  prepared_ = std::move(p);
}

CpuInPlacePermuter::CpuInPlacePermuter(const Bmmc& bmmc, int elem_bytes, const CpuPolicy& policy)
    : CpuInPlacePermuter(make_inplace_plan(bmmc, elem_bytes, cpu_inplace_plan_options(policy)), policy) {}

const InPlacePlan& CpuInPlacePermuter::plan() const noexcept { return prepared_->plan; }
int CpuInPlacePermuter::threads() const noexcept { return prepared_->threads; }

void CpuInPlacePermuter::operator()(void* data) const {
  const InPlacePlan& plan = prepared_->plan;
  check_inplace_buffer(data, plan.n(), plan.elem_bytes);
  for (std::size_t i = 0; i < plan.passes.size(); ++i) {
    if (const auto* t = std::get_if<InvolutionPass>(&plan.passes[i]))
      by_size<InvolutionRunner>(plan.elem_bytes, *t, prepared_->tables[i], data, prepared_->threads);
    else
      by_size<NaiveRunner>(plan.elem_bytes, std::get<NaiveInvolutionPass>(plan.passes[i]), data, prepared_->threads);
  }
}

}  // namespace bmmc
