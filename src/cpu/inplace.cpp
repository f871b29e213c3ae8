// The CPU executor of in-place plans (see inplace.hpp).
#include "bmmc/cpu/inplace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <stdexcept>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/thread_pool.hpp"
#include "bmmc/plan/plan_consistency.hpp"
#include "direct_blocks.hpp"
#include "gather_blocks.hpp"
#include "tile_tables.hpp"
#include "transpose_blocks.hpp"
#include "tuning.hpp"

namespace bmmc {

namespace {

using cpu_detail::Elem;
using cpu_detail::TileTables;

// The out-of-place tile loop of an involution pass (executor.hpp), built once: the pass's own tables, and the
// same tile read from a staged copy of a coset (`staged`: input row ρ at ρ·2^s of the copy, one block at
// origin 0, whose image origin z is set per call), plus the loop that runs them.
struct TileLoop {
  TileTables tile;
  TileTables staged;
  std::optional<cpu_detail::TransposeTables> transpose;  // the register transposes, where they apply
  cpu_detail::BlockKernel gather = nullptr;              // else the gather loop (plain stores) ...
  cpu_detail::BlockKernel gather_stream = nullptr;       // ... or streaming stores (arrays in DRAM)
  std::size_t tile_bytes = 0;                            // one tile, rounded up to a cache line
  int run_bytes = 0;
};

TileLoop tile_loop(const InvolutionPass& p, const CpuPolicy& policy) {
  TileLoop l;
  l.tile = cpu_detail::build_tables(p.tile);
  l.staged = l.tile;
  l.staged.block_positions.clear();
  l.staged.block_images.clear();
  l.staged.blocks = 1;
  for (std::size_t rho = 0; rho < l.staged.rtab.size(); ++rho) l.staged.rtab[rho] = BitVec{rho} << l.tile.s;
  const int eb = p.tile.elem_bytes;
  l.gather = cpu_detail::gather_block_kernel(eb, eb << l.tile.s, false);  // throws for an unsupported shape
  l.gather_stream = cpu_detail::gather_block_kernel(eb, eb << l.tile.s, true);
  if (policy.register_transpose != false && cpu_detail::transpose_blocks_supported(eb, policy.avx512))
    l.transpose = cpu_detail::make_transpose_tables(l.tile, eb);
  l.run_bytes = eb << l.tile.s;
  l.tile_bytes = std::max<std::size_t>(64, ((std::size_t{static_cast<unsigned>(eb)} << (l.tile.s + l.tile.m)) + 63) / 64 * 64);
  return l;
}

// One block of the tile loop, from `in` to `out` (which may be the same array: a block reads its whole coset
// into the tile before it writes anything). Stream: non-temporal stores, whole lines (the out-of-place rule:
// the block's lines were read into the cache, and a streaming store of a whole line writes it back without
// keeping it, as out of place; runs shorter than a line keep plain stores).
void run_block(const TileLoop& l, const TileTables& t, const unsigned char* in, unsigned char* out, std::uint64_t b,
               unsigned char* tile, bool stream) {
  if (l.transpose)
    cpu_detail::run_blocks_transpose(t, *l.transpose, stream && l.run_bytes >= 64, in, out, b, b + 1, tile);
  else
    (stream ? l.gather_stream : l.gather)(t, in, out, b, b + 1, tile);
}

// This thread's scratch (the tile and the staged coset), kept between calls and grown when a pass needs more.
struct AlignedDelete {
  void operator()(unsigned char* p) const { ::operator delete[](p, std::align_val_t{64}); }
};
thread_local std::unique_ptr<unsigned char[], AlignedDelete> t_scratch;
thread_local std::size_t t_scratch_bytes = 0;

unsigned char* scratch(std::size_t bytes) {
  if (bytes > t_scratch_bytes) {
    t_scratch.reset(static_cast<unsigned char*>(::operator new[](bytes, std::align_val_t{64})));
    t_scratch_bytes = bytes;
  }
  return t_scratch.get();
}

// An involution pass through the out-of-place tile loop. The block b that owns a pair of cosets {C, f(C)}
// (partner(b) ≥ b) copies the partner's coset, whole runs, into a staged tile; runs the tile loop on block b
// from the array into the array (it reads C, then writes f(C), whose old contents are staged); then runs it
// on the staged copy into C. A coset that f maps onto itself is one block of the tile loop in place. So every
// element is read once from the array and written once, as out of place, plus one copy inside the cache.
void run_involution(const InvolutionPass& p, const TileLoop& l, void* data, int threads) {
  auto* a = static_cast<unsigned char*>(data);
  const TileTables& t = l.tile;
  const std::size_t eb = static_cast<std::size_t>(p.tile.elem_bytes);
  const std::size_t run_bytes = eb << t.s;
  const std::uint64_t rows = std::uint64_t{1} << t.m;
  const bool stream = array_bytes(p.n(), p.tile.elem_bytes) >= cpu_tuning::kInPlaceStreamingBytes &&
                      reinterpret_cast<std::uintptr_t>(data) % 64 == 0;
  // Whether block b runs (it owns its pair, its mask matches, its coset moves), and its origins.
  struct Owned {
    BlockOrigin o, po;
    bool pair;
  };
  auto owned = [&](std::uint64_t b, Owned& w) {
    const std::uint64_t pb = p.partner(b);
    if (pb < b) return false;
    w.o = t.origin(b);
    if ((w.o.x0 & p.mask_bits) != p.mask_value) return false;
    w.pair = pb != b;
    if (!w.pair) return !(p.tile_fixed && w.o.z == w.o.x0);
    w.po = t.origin(pb);
    return true;
  };
  // Input row ρ of the coset at x0 into L2 (the tile loop prefetches its next block the same way).
  auto prefetch_row = [&](std::uint64_t x0, std::uint64_t rho) {
    const unsigned char* run = a + (x0 ^ t.rtab[rho]) * eb;
    for (std::size_t at = 0; at < run_bytes; at += 64) __builtin_prefetch(run + at, 0, 1);
  };
  // The next pair's cosets come into L2 while this pair runs, spread over its work: the partner's rows one
  // per staged row, the block's own rows by the tile loop itself (prefetch_after), one per output row.
  auto body = [&](std::uint64_t begin, std::uint64_t end, int) {
    unsigned char* tile = scratch(2 * l.tile_bytes);
    unsigned char* staged_coset = tile + l.tile_bytes;
    std::optional<TileTables> own, staged;  // copied once a chunk: prefetch_after and the staged z change per pair
    Owned w{}, next{};
    std::uint64_t b = begin;
    while (b < end && !owned(b, w)) ++b;
    if (b < end) {  // the first pair of the chunk has no predecessor to prefetch it
      for (std::uint64_t rho = 0; rho < rows; ++rho) prefetch_row(w.o.x0, rho);
      if (w.pair)
        for (std::uint64_t rho = 0; rho < rows; ++rho) prefetch_row(w.po.x0, rho);
      own.emplace(t);
    }
    while (b < end) {
      std::uint64_t nb = b + 1;
      while (nb < end && !owned(nb, next)) ++nb;
      const bool has_next = nb < end;
      own->prefetch_after = has_next ? std::optional<BitVec>(next.o.x0) : std::nullopt;
      if (!w.pair) {
        if (has_next && next.pair)
          for (std::uint64_t rho = 0; rho < rows; ++rho) prefetch_row(next.po.x0, rho);
        run_block(l, *own, a, a, b, tile, stream);
      } else {
        for (std::uint64_t rho = 0; rho < rows; ++rho) {
          std::memcpy(staged_coset + rho * run_bytes, a + (w.po.x0 ^ t.rtab[rho]) * eb, run_bytes);
          if (has_next && next.pair) prefetch_row(next.po.x0, rho);
        }
        run_block(l, *own, a, a, b, tile, stream);
        if (!staged) staged.emplace(l.staged);
        staged->complement = w.po.z;
        run_block(l, *staged, staged_coset, a, 0, tile, stream);
      }
      b = nb;
      w = next;
    }
  };
  const std::uint64_t blocks = t.blocks;
  threads = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, blocks)));
  if (threads == 1) return body(0, blocks, 0);
  ThreadPool::shared().run(blocks, std::max<std::uint64_t>(1, blocks / (8 * static_cast<std::uint64_t>(threads))),
                           threads, body);
}

// The direct loop of an involution pass on pairs of units (direct_blocks.hpp), where the out-of-place
// executor would run a direct loop for this map and array (choose_direct: the policy and the size rule; an
// explicit tile asks for the tile loop) and the units pair up (make_direct_pairs); else nothing. Not for a
// masked pass (the mask selects cosets of the tile loop). The caller leaves a plan handed in to its tile loop
// unless policy.direct is true, as the out-of-place executor does.
std::optional<cpu_detail::DirectTables> direct_pairs(const InvolutionPass& p, const CpuPolicy& policy) {
  if (p.mask_bits != 0 || (policy.direct != true && policy.tile_bits != -1)) return std::nullopt;
  std::optional<cpu_detail::DirectTables> d = cpu_detail::choose_direct(p.bmmc(), p.tile.elem_bytes, policy, true);
  if (d && !cpu_detail::make_direct_pairs(p.bmmc(), *d)) d.reset();
  return d;
}

// The units of a direct involution in chunks over the pool, as the out-of-place direct loop splits them.
void run_direct_involution(const cpu_detail::DirectTables& d, void* data, int threads) {
  auto* a = static_cast<unsigned char*>(data);
  ThreadPool::shared().run(cpu_detail::direct_units(d), cpu_detail::direct_chunk(d, threads), threads,
                           [&](std::uint64_t begin, std::uint64_t end, int) {
                             cpu_detail::run_direct_pairs(d, a, begin, end);
                           });
}

// Swaps two disjoint byte ranges 64 bytes at a time through registers (std::swap_ranges of Elem<B> went a
// byte at a time: twice the out-of-place time for a high-bit swap of 2^14 4-byte elements).
void swap_bytes(unsigned char* x, unsigned char* y, std::size_t bytes) {
  std::size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    unsigned char t[64], u[64];
    std::memcpy(t, x + i, 64);
    std::memcpy(u, y + i, 64);
    std::memcpy(x + i, u, 64);
    std::memcpy(y + i, t, 64);
  }
  std::swap_ranges(x + i, x + bytes, y + i);
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
      if (y <= x) continue;
      if (run == 1)
        std::swap(a[x], a[y]);
      else
        swap_bytes(reinterpret_cast<unsigned char*>(a + x), reinterpret_cast<unsigned char*>(a + y), B * run);
    }
  };
  // Equal slices a thread, each at least kDirectMinChunkBytes of the array (as the direct loops: a small array
  // stays on the caller's thread rather than wake a worker for a few microseconds of swaps).
  threads = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, runs)));
  const std::uint64_t min_chunk =
      std::max<std::uint64_t>(1, cpu_tuning::kDirectMinChunkBytes / (std::uint64_t{B} << r));
  ThreadPool::shared().run(runs, std::max(min_chunk, (runs - 1) / static_cast<std::uint64_t>(threads) + 1), threads,
                           body);
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
struct NaiveRunner {
  static void run(const NaiveInvolutionPass& p, void* d, int th) { run_naive<B>(p, d, th); }
};

}  // namespace

PlanOptions cpu_inplace_plan_options(const CpuPolicy& policy, int elem_bytes) {
  check_elem_bytes(elem_bytes);
  if (policy.tile_bits != -1 && (policy.tile_bits < 5 || policy.tile_bits > 20))
    throw std::invalid_argument(
        fmt::format("CPU tile bits must be -1 (choose) or 5..20, got {}", policy.tile_bits));
  // The runs and tile of the out-of-place CPU plan of a bit permutation (cpu_plan_options: 128-byte runs, a
  // 16 KiB tile), since the same tile loop runs them. General maps too keep the small tile: a thread holds
  // the tile, the staged coset and two pairs of cosets (this one and the prefetched next) in L2.
  const PlanOptions one_pass = cpu_plan_options(policy, bit_reverse(kLaneBits), elem_bytes);
  PlanOptions o;
  o.vector_bits = one_pass.vector_bits;
  o.tile_bits = one_pass.tile_bits;
  return o;
}

struct CpuInPlacePermuter::Prepared {
  InPlacePlan plan;
  std::vector<std::optional<TileLoop>> loops;  // one per involution pass that runs the tile loop
  std::vector<std::optional<cpu_detail::DirectTables>> direct;  // one per involution pass that runs a direct loop
  int threads = 1;
};

CpuInPlacePermuter::CpuInPlacePermuter(InPlacePlan plan, const CpuPolicy& policy)
    : CpuInPlacePermuter(std::move(plan), policy, false) {}

CpuInPlacePermuter::CpuInPlacePermuter(InPlacePlan plan, const CpuPolicy& policy, bool own_plan)
    : policy_(policy) {
  check_elem_bytes(plan.elem_bytes);
  require_consistent_plan(plan, "CpuInPlacePermuter");
  auto p = std::make_shared<Prepared>();
  for (const InPlacePass& pass : plan.passes) {
    const auto* t = std::get_if<InvolutionPass>(&pass);
    std::optional<cpu_detail::DirectTables> direct =
        t && (own_plan || policy.direct == true) ? direct_pairs(*t, policy) : std::nullopt;
    p->loops.push_back(t && !direct ? std::optional<TileLoop>(tile_loop(*t, policy)) : std::nullopt);
    p->direct.push_back(std::move(direct));
  }
  p->threads = resolve_cpu_threads(policy.threads, plan.n(), plan.elem_bytes);
  p->plan = std::move(plan);
  prepared_ = std::move(p);
}

CpuInPlacePermuter::CpuInPlacePermuter(const Bmmc& bmmc, int elem_bytes, const CpuPolicy& policy)
    : CpuInPlacePermuter(make_inplace_plan(bmmc, elem_bytes, cpu_inplace_plan_options(policy, elem_bytes)), policy,
                         true) {}

const InPlacePlan& CpuInPlacePermuter::plan() const noexcept { return prepared_->plan; }

std::string CpuInPlacePermuter::kernel_name() const {
  std::string name;
  for (std::size_t i = 0; i < prepared_->plan.passes.size(); ++i) {
    if (!name.empty()) name += " + ";
    const std::optional<TileLoop>& l = prepared_->loops[i];
    if (const auto& d = prepared_->direct[i]) {
      name += "pairs-" + cpu_detail::direct_kernel_name(*d);
      continue;
    }
    name += !l            ? "swap"
            : l->transpose ? (prepared_->plan.elem_bytes >= 4 ? "pairs-transpose-avx2" : "pairs-transpose-avx512vbmi")
                           : "pairs-gather";
  }
  return name;
}
int CpuInPlacePermuter::threads() const noexcept { return prepared_->threads; }

void CpuInPlacePermuter::operator()(void* data) const {
  const InPlacePlan& plan = prepared_->plan;
  check_inplace_buffer(data, plan.n(), plan.elem_bytes);
  for (std::size_t i = 0; i < plan.passes.size(); ++i) {
    if (const auto& d = prepared_->direct[i])
      run_direct_involution(*d, data, prepared_->threads);
    else if (const auto* t = std::get_if<InvolutionPass>(&plan.passes[i]))
      run_involution(*t, *prepared_->loops[i], data, prepared_->threads);
    else
      by_size<NaiveRunner>(plan.elem_bytes, std::get<NaiveInvolutionPass>(plan.passes[i]), data, prepared_->threads);
  }
}

}  // namespace bmmc
