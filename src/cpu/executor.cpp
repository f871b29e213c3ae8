// The CPU executor (see executor.hpp): a TilePass becomes lookup tables, then every thread runs its range
// of blocks through a cache-resident tile. This file chooses the loop for each pass (the direct loops of
// direct_blocks.hpp for arrays that fit in cache, else the register transposes of transpose_blocks.hpp or the
// gathers of gather_blocks.hpp through the tile) and hands its blocks to the thread pool.
#include "bmmc/cpu/executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <stdexcept>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/thread_pool.hpp"
#include "bmmc/plan/plan_consistency.hpp"
#include "bmmc/plan/planner.hpp"
#include "direct_blocks.hpp"
#include "gather_blocks.hpp"
#include "loop_choice.hpp"
#include "tile_tables.hpp"
#include "transpose_blocks.hpp"
#include "tuning.hpp"

namespace bmmc {

namespace {

using cpu_detail::BlockKernel;
using cpu_detail::build_tables;
using cpu_detail::Elem;
using cpu_detail::TileTables;
using cpu_detail::TransposeTables;

constexpr std::size_t kLine = 64;
// The size rules and budgets of this file (tuning.hpp gives each one's reason and measurement).
using cpu_tuning::kBytesPerThread;
using cpu_tuning::kStreamingBytes;
using cpu_tuning::kTileBytesL1;
using cpu_tuning::kTileBytesL2;

// A buffer aligned to a cache line, freed with the matching aligned delete.
struct AlignedDelete {
  void operator()(unsigned char* p) const { ::operator delete[](p, std::align_val_t{kLine}); }
};
using AlignedBytes = std::unique_ptr<unsigned char[], AlignedDelete>;
AlignedBytes aligned_bytes(std::size_t bytes) {
  return AlignedBytes(static_cast<unsigned char*>(::operator new[](bytes, std::align_val_t{kLine})));
}


// This thread's tile, kept between calls (a pooled worker, or a caller permuting again, reuses it) up to
// kKeptScratch bytes, which covers the default tiles; a larger tile (an explicit tile_bits) is allocated per
// chunk. Keyed by the OS thread, not by pool slot: a caller that finds the pool busy runs on its own.
constexpr std::size_t kKeptScratch = std::size_t{256} << 10;
thread_local AlignedBytes t_scratch;

unsigned char* kept_scratch() {
  if (!t_scratch) t_scratch = aligned_bytes(kKeptScratch);
  return t_scratch.get();
}

// Everything a tile pass needs at run time, built before anything is written.
struct PassTables {
  TileTables tile;
  std::optional<TransposeTables> transpose;  // set when the register-transpose loop applies and is enabled
  std::optional<cpu_detail::DirectTables> direct;  // set when the direct loop runs instead of the tiles
};

// The gather loop of a pass, as execute_tile_pass picks it.
BlockKernel gather_kernel(const TilePass& p, const TileTables& t, bool stream) {
  return cpu_detail::gather_block_kernel(p.elem_bytes, p.elem_bytes << t.s, stream);
}

bool auto_transposes(int elem_bytes, bool bpc);

// transpose: the policy's register_transpose (nullopt = measured per CPU, loop_choice.hpp); avx512: its avx512.
PassTables pass_tables(const TilePass& p, std::optional<bool> transpose, bool avx512) {
  PassTables t{build_tables(p), std::nullopt, std::nullopt};
  gather_kernel(p, t.tile, false);  // throws for an unsupported shape
  if (transpose.value_or(true) && cpu_detail::transpose_blocks_supported(p.elem_bytes, avx512))
    t.transpose = cpu_detail::make_transpose_tables(t.tile, p.elem_bytes);
  if (t.transpose && !transpose && !auto_transposes(p.elem_bytes, p.bmmc.is_bpc()))
    t.transpose.reset();
  return t;
}

// A one-pass plan's tables: the direct loop's where the policy or, for the CPU's own plan (own_plan: made
// from a Bmmc, not handed in — a given plan runs as given), the size rule asks for it; else the tile loop's.
// The plan's tile tables are built either way, which checks a hand-made pass as for any other loop.
PassTables one_pass_tables(const TilePass& p, const CpuPolicy& policy, bool own_plan) {
  // An explicit tile size asks for the tile loop (the direct loop has no tile).
  if ((!own_plan && policy.direct != true) || (policy.direct != true && policy.tile_bits != -1))
    return pass_tables(p, policy.register_transpose, policy.avx512);
  std::optional<cpu_detail::DirectTables> d = cpu_detail::choose_direct(p.bmmc, p.elem_bytes, policy);
  if (!d) return pass_tables(p, policy.register_transpose, policy.avx512);
  return PassTables{build_tables(p), std::nullopt, std::move(d)};
}

// The stand-in of a class for loop_choice: arrays of 2^kLoopChoiceBytesBits bytes (in L2), bit-reverse or a
// fixed random BMMC, the default tile; each loop runs single-threaded over all blocks with plain stores.
bool auto_transposes(int elem_bytes, bool bpc) {
  constexpr bool stream = false;
  struct StandIn {
    Plan plan;
    PassTables tables;
    AlignedBytes in, out;
  };
  std::optional<StandIn> st;  // built on the first timing only: not at all once the class is known
  return cpu_detail::transposes_win(elem_bytes, bpc, [&](bool transpose) -> double {
    if (!st) {
      const int n = cpu_tuning::kLoopChoiceBytesBits - std::countr_zero(static_cast<unsigned>(elem_bytes));
      const std::size_t bytes = array_bytes(n, elem_bytes);
      CpuPolicy explicit_loops;
      explicit_loops.register_transpose = true;  // no recursion into the choice
      st.emplace(StandIn{make_cpu_plan(bpc ? bit_reverse(n) : random_bmmc(n, 1), elem_bytes, explicit_loops), {},
                         aligned_bytes(bytes), aligned_bytes(bytes)});
      if (const auto* tp = std::get_if<TilePass>(&st->plan.passes.front())) st->tables = pass_tables(*tp, true, true);
      std::memset(st->in.get(), 1, bytes);
    }
    const auto* tp = std::get_if<TilePass>(&st->plan.passes.front());
    if (tp == nullptr || !st->tables.transpose) return transpose ? 0.0 : 1.0;  // never seen: transposes then
    const TileTables& t = st->tables.tile;
    unsigned char* tile = kept_scratch();
    const auto t0 = std::chrono::steady_clock::now();
    if (transpose)
      cpu_detail::run_blocks_transpose(t, *st->tables.transpose, stream, st->in.get(), st->out.get(), 0, t.blocks,
                                       tile);
    else
      gather_kernel(*tp, t, stream)(t, st->in.get(), st->out.get(), 0, t.blocks, tile);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
}

// The tile loop's chunk of blocks: at least kTileMinChunkBlocks (where there are that many), so that the
// next-block prefetch is lost only at chunk edges; else kChunksPerThread chunks a thread.
std::uint64_t tile_chunk(std::uint64_t blocks, int threads) {
  return std::max<std::uint64_t>(std::min<std::uint64_t>(cpu_tuning::kTileMinChunkBlocks, blocks),
                                 blocks / (cpu_tuning::kChunksPerThread * static_cast<std::uint64_t>(threads)));
}

// A naive pass's chunk of elements: one equal slice a thread.
std::uint64_t naive_chunk(std::uint64_t count, int threads) {
  return (count - 1) / static_cast<std::uint64_t>(std::max(1, threads)) + 1;
}

// How many of `threads` participants a pool call over `count` units in chunks of `chunk` keeps busy.
int busy_threads(std::uint64_t count, std::uint64_t chunk, int threads) {
  return static_cast<int>(std::clamp<std::uint64_t>((count + chunk - 1) / chunk, 1, std::max(threads, 1)));
}

// The direct loop over its units, split over the pool like the tile blocks.
void execute_direct(const cpu_detail::DirectTables& d, const void* in, void* out, int threads) {
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  const std::uint64_t units = cpu_detail::direct_units(d);
  threads = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, units)));
  if (threads == 1) return cpu_detail::run_direct(d, src, dst, 0, units);
  ThreadPool::shared().run(units, cpu_detail::direct_chunk(d, threads), threads,
                           [&](std::uint64_t begin, std::uint64_t end, int) {
                             cpu_detail::run_direct(d, src, dst, begin, end);
                           });
}

// Blocks go to threads in chunks from a shared counter rather than in fixed slices: on a shared VM a vCPU
// can stall for milliseconds, and fixed slices then leave the other thread idle for that long (tile_chunk).
void execute_tile_pass(const TilePass& p, const PassTables& pt, const void* in, void* out, int threads) {
  if (pt.direct) return execute_direct(*pt.direct, in, out, threads);
  const TileTables& t = pt.tile;
  const int run_bytes = p.elem_bytes << t.s;
  const std::size_t bytes = array_bytes(p.n(), p.elem_bytes);
  const bool stream = bytes >= kStreamingBytes && reinterpret_cast<std::uintptr_t>(out) % kLine == 0;
  const BlockKernel kernel = pt.transpose ? nullptr : cpu_detail::gather_block_kernel(p.elem_bytes, run_bytes, stream);
  const std::size_t tile_bytes = std::max(kLine, std::size_t{static_cast<unsigned>(p.elem_bytes)} << (t.s + t.m));
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  // runs shorter than a cache line would stream partial lines: plain stores then
  const bool stream_transpose = stream && run_bytes >= static_cast<int>(kLine);
  auto blocks = [&](std::uint64_t begin, std::uint64_t end, int) {
    AlignedBytes own;
    unsigned char* tile = tile_bytes <= kKeptScratch ? kept_scratch() : (own = aligned_bytes(tile_bytes)).get();
    if (pt.transpose)
      cpu_detail::run_blocks_transpose(t, *pt.transpose, stream_transpose, src, dst, begin, end, tile);
    else
      kernel(t, src, dst, begin, end, tile);
  };
  threads = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, t.blocks)));
  if (threads == 1) return blocks(0, t.blocks, 0);
  ThreadPool::shared().run(t.blocks, tile_chunk(t.blocks, threads), threads, blocks);
}

// out[A·x ⊕ c] = in[x] for x in [begin, end), keeping y = A·x ⊕ c incrementally as the reference does.
template <int B>
void direct_range(const Bmmc& bmmc, const void* in_raw, void* out_raw, std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return;
  const auto* in = static_cast<const Elem<B>*>(in_raw);
  auto* out = static_cast<Elem<B>*>(out_raw);
  BitVec flip[64];
  BitVec acc = 0;
  for (int k = 0; k < bmmc.n(); ++k) flip[k] = acc ^= bmmc.matrix().col(k);
  BitVec y = bmmc.apply(begin);
  for (std::uint64_t x = begin;; ++x) {
    out[y] = in[x];
    if (x + 1 == end) break;
    y ^= flip[__builtin_ctzll(x + 1)];
  }
}

void execute_naive_pass(const Bmmc& bmmc, int elem_bytes, const void* in, void* out, int threads) {
  const std::uint64_t count = std::uint64_t{1} << bmmc.n();
  auto range = [&](std::uint64_t begin, std::uint64_t end, int) {
    switch (elem_bytes) {
      case 1: return direct_range<1>(bmmc, in, out, begin, end);
      case 2: return direct_range<2>(bmmc, in, out, begin, end);
      case 4: return direct_range<4>(bmmc, in, out, begin, end);
      case 8: return direct_range<8>(bmmc, in, out, begin, end);
      case 16: return direct_range<16>(bmmc, in, out, begin, end);
    }
  };
  threads = std::max(1, threads);
  ThreadPool::shared().run(count, naive_chunk(count, threads), threads, range);
}


const Bmmc& pass_bmmc(const Pass& p) {
  return std::visit([](const auto& q) -> const Bmmc& { return q.bmmc; }, p);
}

}  // namespace

void check_cpu_threads(int threads) {
  if (threads < 0)
    throw std::invalid_argument(
        fmt::format("CPU threads = {}: expected 0 (as many as the array is worth, up to the cores) or a positive count",
                    threads));
}

int resolve_cpu_threads(int threads, int n, int elem_bytes) {
  check_cpu_threads(threads);
  if (threads > 0) return threads;
  const std::size_t bytes = array_bytes(n, elem_bytes);
  return static_cast<int>(std::clamp<std::size_t>(bytes / kBytesPerThread, 1, ThreadPool::shared().size()));
}

PlanOptions cpu_plan_options(const CpuPolicy& policy, const Bmmc& bmmc, int elem_bytes) {
  check_elem_bytes(elem_bytes);
  if (policy.tile_bits != -1 && (policy.tile_bits < 5 || policy.tile_bits > 20))
    throw std::invalid_argument(fmt::format(
        "CPU tile of 2^{} elements is out of range: tile_bits must be -1 (choose) or 5..20", policy.tile_bits));
  PlanOptions po;
  if (bmmc.n() < kLaneBits) {  // fewer than 32 elements: a tile would be pure overhead
    po.variant = Variant::Naive;
    return po;
  }
  po.variant = Variant::OnePass;
  // Runs of 128 bytes (two cache lines) where 32 elements are smaller; 32 elements otherwise.
  const int eb_bits = std::countr_zero(static_cast<unsigned>(elem_bytes));
  po.vector_bits = std::max(0, cpu_tuning::kRunBytesBits - kLaneBits - eb_bits);
  const int s = po.vector_bits + kLaneBits;
  const int tile = policy.tile_bits >= 0
                       ? policy.tile_bits
                       : std::countr_zero(bmmc.is_bpc() ? kTileBytesL1 : kTileBytesL2) - eb_bits;
  po.tile_bits = std::max(tile, s);
  // A CPU thread runs whole blocks, so the warp split only shapes the plan's printout; keep it a GPU-like
  // 2^10-thread block so the plan stays a valid GPU plan too (the plan checker proves both).
  po.warp_bits = std::min(po.tile_bits, 10) - kLaneBits;
  return po;
}

Plan make_cpu_plan(const Bmmc& bmmc, int elem_bytes, const CpuPolicy& policy) {
  return make_plan(bmmc, elem_bytes, cpu_plan_options(policy, bmmc, elem_bytes));
}

// A plan with its per-pass tables, ready to run any number of times.
struct CpuPermuter::Prepared {
  Plan plan;
  std::vector<PassTables> tables;
  int threads = 1;
};

CpuPermuter::CpuPermuter(Plan plan, const CpuPolicy& policy) : CpuPermuter(std::move(plan), policy, false) {}

CpuPermuter::CpuPermuter(Plan plan, const CpuPolicy& policy, bool own_plan) : policy_(policy) {
  require_consistent_plan(plan, "execute_plan_cpu");
  auto p = std::make_shared<Prepared>();
  p->tables.resize(plan.passes.size());
  // Tables are built (and a malformed hand-made pass refused) here, before anything is written.
  for (std::size_t i = 0; i < plan.passes.size(); ++i)
    if (const auto* tp = std::get_if<TilePass>(&plan.passes[i]))
      p->tables[i] = plan.passes.size() == 1 ? one_pass_tables(*tp, policy, own_plan)
                                             : pass_tables(*tp, policy.register_transpose, policy.avx512);
  p->threads = resolve_cpu_threads(policy.threads, plan.n(), plan.elem_bytes);
  p->plan = std::move(plan);
  prepared_ = std::move(p);
}

CpuPermuter::CpuPermuter(const Bmmc& bmmc, int elem_bytes, const CpuPolicy& policy)
    : CpuPermuter(make_cpu_plan(bmmc, elem_bytes, policy), policy, true) {}

const Plan& CpuPermuter::plan() const noexcept { return prepared_->plan; }
int CpuPermuter::threads() const noexcept { return prepared_->threads; }

int CpuPermuter::threads_used() const noexcept {
  const Plan& plan = prepared_->plan;
  const int threads = std::min(prepared_->threads, ThreadPool::kMaxThreads);  // the pool starts no more
  int used = 1;
  for (std::size_t i = 0; i < plan.passes.size(); ++i) {
    const PassTables& pt = prepared_->tables[i];
    int pass = 1;
    if (!std::holds_alternative<TilePass>(plan.passes[i])) {
      const std::uint64_t count = std::uint64_t{1} << plan.n();
      pass = busy_threads(count, naive_chunk(count, threads), threads);
    } else if (pt.direct)
      pass = busy_threads(cpu_detail::direct_units(*pt.direct), cpu_detail::direct_chunk(*pt.direct, threads), threads);
    else
      pass = busy_threads(pt.tile.blocks, tile_chunk(pt.tile.blocks, threads), threads);
    used = std::max(used, pass);
  }
  return used;
}

std::size_t CpuPermuter::temp_bytes() const noexcept { return prepared_->plan.temp_bytes(); }

void CpuPermuter::operator()(const void* in, void* out, void* temp) const {
  const Plan& plan = prepared_->plan;
  const std::size_t passes = plan.passes.size();
  check_buffers(in, out, plan.n(), plan.elem_bytes);
  if (passes > 1) {
    if (temp == nullptr)
      throw std::invalid_argument(fmt::format(
          "execute_plan_cpu: this plan has {} passes and needs a temporary buffer of 2^{} elements; temp is null",
          passes, plan.n()));
    // The shared buffer checks speak of an input and an output: say which pair is the temporary one.
    const auto check_temp = [&](const void* a, void* b, const char* pair) {
      try {
        check_buffers(a, b, plan.n(), plan.elem_bytes);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("execute_plan_cpu: the temporary buffer ({}): {}", pair, e.what()));
      }
    };
    check_temp(in, temp, "input -> temporary");
    check_temp(temp, out, "temporary -> output");
  }
  const int threads = prepared_->threads;
  const void* src = in;
  for (std::size_t i = 0; i < passes; ++i) {
    void* dst = (passes - 1 - i) % 2 == 0 ? out : temp;  // the last pass lands in out
    if (const auto* tp = std::get_if<TilePass>(&plan.passes[i]))
      execute_tile_pass(*tp, prepared_->tables[i], src, dst, threads);
    else
      execute_naive_pass(pass_bmmc(plan.passes[i]), plan.elem_bytes, src, dst, threads);
    src = dst;
  }
}

std::string CpuPermuter::kernel_name() const {
  std::string name;
  for (std::size_t i = 0; i < prepared_->plan.passes.size(); ++i) {
    if (!name.empty()) name += " + ";
    const auto* tp = std::get_if<TilePass>(&prepared_->plan.passes[i]);
    if (tp == nullptr)
      name += "scatter";
    else if (prepared_->tables[i].direct)
      name += cpu_detail::direct_kernel_name(*prepared_->tables[i].direct);
    else if (prepared_->tables[i].transpose)
      name += tp->elem_bytes >= 4 ? "transpose-avx2" : "transpose-avx512vbmi";
    else
      name += "gather";  // vpgather for 4/8-byte elements when the output is streamed, else scalar loads
  }
  return name;
}

void execute_plan_cpu(const Plan& plan, const void* in, void* out, void* temp, const CpuPolicy& policy) {
  check_buffers(in, out, plan.n(), plan.elem_bytes);
  CpuPermuter(plan, policy)(in, out, temp);
}

std::string cpu_kernel_name(const Plan& plan, const CpuPolicy& policy) { return CpuPermuter(plan, policy).kernel_name(); }

void permute_cpu(const Bmmc& bmmc, const void* in, void* out, int elem_bytes, const CpuPolicy& policy) {
  check_buffers(in, out, bmmc.n(), elem_bytes);
  CpuPermuter(bmmc, elem_bytes, policy)(in, out);
}

}  // namespace bmmc
