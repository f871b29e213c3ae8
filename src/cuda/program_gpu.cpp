// GPU execution of lowered programs (see program_gpu.hpp).
#include "bmmc/cuda/program_gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <exception>
#include <future>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>

#include "bmmc/combinators/schedule.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/core/subspace.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/cuda/leaf_kernels.hpp"
#include "bmmc/cuda/memory.hpp"

namespace bmmc {

const char* cuda_key_type(DType t) {
  switch (t) {
    case DType::Int32: return "int";
    case DType::UInt32: return "unsigned int";
    case DType::Float32: return "float";
    case DType::Int64: return "long long";
    case DType::UInt64: return "unsigned long long";
    case DType::Float64: return "double";
  }
  throw std::invalid_argument("cuda_key_type: unknown DType");
}

FusedTileSpec fused_tile_spec(const FusedLeafPass& pass, int n) {
  if (Subspace::span(n, pass.tile).basis() != pass.tile)
    throw std::invalid_argument("fused pass: the tile basis is not in Subspace's reduced echelon form");
  std::vector<int> pivots;
  for (BitVec v : pass.tile) pivots.push_back(std::countr_zero(v));
  FusedTileSpec s;
  s.n = n;
  s.tile = pass.tile;
  for (const LeafPass& l : pass.leaves) {
    if (leaf_bits(l.leaf) != 1)
      throw std::invalid_argument(fmt::format("fused pass: leaf {} has chunks of 2^{}; only pairs fuse",
                                              to_string(l.leaf.kind), leaf_bits(l.leaf)));
    FusedColumn c;
    c.dir = l.layout.inverse().matrix().col(0);
    c.row = l.layout.matrix().row(0);
    c.c0 = static_cast<int>(l.layout.complement() & 1);
    c.descending = l.leaf.kind == LeafKind::CompareSwapDesc;
    BitVec delta = 0;  // the direction's tile coordinates, as the CPU executor computes them
    for (std::size_t k = 0; k < pivots.size(); ++k) delta |= ((c.dir >> pivots[k]) & 1) << k;
    if (delta == 0 || xor_of_columns(pass.tile, delta) != c.dir)
      throw std::invalid_argument(fmt::format("fused pass: a pair along {:#x} leaves its tile", c.dir));
    c.first_bit = pivots[63 - std::countl_zero(delta)];
    s.columns.push_back(c);
  }
  return s;
}

std::optional<FusedTileSpec> fused_then_permute(const FusedLeafPass& pass, const Bmmc& then, int n,
                                                const FusedCodegenOptions& codegen, int line_bits) {
  FusedTileSpec spec = fused_tile_spec(pass, n);
  // The shared kernel (asked for, or where the tile is too small for registers) cannot fold a permutation.
  if (plan_fused_kernel(spec, codegen).kind == FusedKernelKind::Shared) return std::nullopt;
  for (int j = 0; j < n; ++j) spec.out_cols.push_back(then.matrix().col(j));
  spec.out_xor = then.complement();
  FusedCodegenOptions cg = codegen;
  cg.out_of_place = true;
  const FusedKernelPlan p = plan_fused_kernel(spec, cg);
  if (p.kind == FusedKernelKind::Shared || p.store_runs < std::min(line_bits, n)) return std::nullopt;
  return spec;
}

FusionOptions fusion_options(const GpuProgramOptions& o, DType t, int n) {
  FusionOptions f = with_exec_options(gpu_fusion_options(dtype_bytes(t), n), o);
  f.cost_aware_cut = o.cost_aware_cut;
  // The kernel's register windows (plan_fused_kernel): R = max(reg_bits, T − 10) keys a thread, the shared kernel
  // (none) below 2^(R+5) keys or above R = 6.
  const int r = std::max(o.reg_bits, f.tile_bits - 10);
  f.window_bits = o.fused_kernel == FusedKernelKind::Shared || f.tile_bits < r + 5 || r > 6 ? 0 : r;
  return f;
}

FusedCodegenOptions fused_codegen_options(const GpuProgramOptions& o, DType t, int n) {
  FusedCodegenOptions c;
  c.tile_bits = fusion_options(o, t, n).tile_bits;
  c.reg_bits = o.reg_bits;
  c.kind = o.fused_kernel;
  c.key_bytes = dtype_bytes(t);
  c.floating_keys = t == DType::Float32 || t == DType::Float64;
  c.run_bits = o.run_bits >= 0 ? o.run_bits : std::bit_width(64u / static_cast<unsigned>(c.key_bytes)) - 1;
  const bool wide_integers = c.key_bytes == 8 && t != DType::Float64;
  c.fixed_orientation = o.fixed_orientation.value_or(!wide_integers);
  return c;
}

namespace {

int sm_count() {
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute(MultiProcessorCount)");
  return std::max(sms, 1);
}

}  // namespace

GpuProgram::GpuProgram(const LoweredProgram& lp, DType t, const GpuProgramOptions& options) : n_(lp.n), type_(t) {
  check_dtype(t);
  // Stage permutations repeat (the network's levels reuse them), so one CudaPermuter per distinct BMMC, built
  // (with JIT, compiled) below, together with the fused kernels.
  std::unordered_map<Bmmc, std::shared_ptr<const CudaPermuter>> permuters;
  std::vector<std::pair<Bmmc, std::size_t>> permute_ops;  // (permutation, index in ops_)
  auto add_permute = [&](const Bmmc& b) {
    permuters.try_emplace(b);
    permute_ops.emplace_back(b, ops_.size());
    ops_.emplace_back();
    ++permutation_passes_;
  };
  auto add_leaf = [&](const Bmmc& layout, const Leaf& leaf) {
    if (leaf_bits(leaf) != 1)
      throw std::invalid_argument(fmt::format("GPU: leaf {} has chunks of 2^{}; only pairs run on the GPU yet",
                                              to_string(leaf.kind), leaf_bits(leaf)));
    Op op;
    op.geometry = leaf_geometry(layout, 1);
    op.leaf = leaf;
    ops_.push_back(std::move(op));
    ++leaf_passes_;
  };
  const FusionOptions fusion = fusion_options(options, t, lp.n);
  if (options.strategy == ExecStrategy::Fused && fusion.tile_bits + (dtype_bytes(t) == 8) > 15)
    throw std::invalid_argument(fmt::format(
        "GPU fused pass: a tile of 2^{} keys of {} bytes exceeds the 128 KiB of shared memory a block may use here",
        fusion.tile_bits, dtype_bytes(t)));
  const FusedCodegenOptions codegen = fused_codegen_options(options, t, lp.n);
  const std::vector<ScheduledPass> passes = schedule(lp, options.strategy, fusion);
  // A fused pass followed by a permutation that folds into its store (fused_then_permute) runs as one pass
  // that writes into the other buffer.
  std::vector<std::optional<FusedTileSpec>> folded(passes.size());
  for (std::size_t i = 0; i + 1 < passes.size(); ++i)
    if (const auto* f = std::get_if<FusedLeafPass>(&passes[i]))
      if (const auto* p = std::get_if<PermutePass>(&passes[i + 1]))
        folded[i] = fused_then_permute(*f, p->perm, lp.n, codegen, fusion.line_bits);
  // Permutations ping-pong between data and temp. With an odd count of moves between the buffers (permutations
  // and folded passes), the first other fused pass also moves the keys across (read from one buffer, written at
  // the same positions of the other), so that the last pass ends in data: no copy back.
  std::size_t moves = 0;
  for (std::size_t i = 0; i < passes.size(); ++i)
    moves += folded[i].has_value() || (std::holds_alternative<PermutePass>(passes[i]) && !(i > 0 && folded[i - 1]));
  const bool odd = moves % 2 == 1;
  bool cross = odd;  // the first fused pass that does not fold is still to take the keys across
  for (std::size_t i = 0; i < passes.size(); ++i) {
    const ScheduledPass& pass = passes[i];
    if (i > 0 && folded[i - 1]) continue;  // folded into the pass before
    if (const auto* p = std::get_if<PermutePass>(&pass)) {
      add_permute(p->perm);
    } else if (const auto* f = std::get_if<FusedLeafPass>(&pass)) {
      const FusedTileSpec spec = folded[i] ? *folded[i] : fused_tile_spec(*f, lp.n);
      Op op;
      FusedCodegenOptions cg = codegen;
      cg.out_of_place = op.out_of_place = folded[i] || std::exchange(cross, false);
      op.fused = std::make_shared<const KernelSource>(generate_fused(spec, cuda_key_type(t), cg));
      op.grid = op.fused->grid;
      if (const FusedKernelPlan kp = plan_fused_kernel(spec, cg); kp.kind == FusedKernelKind::Pipelined)  // persistent
        op.grid = std::min<std::uint64_t>(
            op.grid, static_cast<std::uint64_t>(sm_count()) *
                         fused_blocks_per_sm(op.fused->block, op.fused->shared_bytes,
                                             fused_registers_per_thread(kp, dtype_bytes(t))));
      op.folded = folded[i].has_value();
      if (op.folded) ++folded_permutations_;
      ops_.push_back(std::move(op));
      ++leaf_passes_;
      ++fused_passes_;
    } else {
      add_leaf(std::get<LeafPass>(pass).layout, std::get<LeafPass>(pass).leaf);
    }
  }
  // Kernels are independent: the CudaPermuters (their NVRTC compiles, with JIT) and the fused kernels are made on
  // every core, each worker on the caller's device (the kernel cache compiles each key once).
  KernelCache& cache = options.gpu.cache ? *options.gpu.cache : default_kernel_cache();
  const int arch = device_arch();
  std::vector<std::function<void()>> todo;
  for (auto& [b, p] : permuters)
    todo.emplace_back([&, &b = b, &p = p] { p = std::make_shared<const CudaPermuter>(b, dtype_bytes(t), options.gpu); });
  for (Op& op : ops_)
    if (op.fused) todo.emplace_back([&, o = &op] { o->kernel = cache.get(o->fused->source, o->fused->kernel_name, arch); });
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next++) < todo.size();) todo[i]();
  };
  std::vector<std::future<void>> running;
  for (std::size_t w = 1; w < std::min(workers, todo.size()); ++w)
    running.push_back(std::async(std::launch::async, [&] {
      check(cudaSetDevice(device), "cudaSetDevice(compile worker)");  // the caller's device, not device 0
      work();
    }));
  std::exception_ptr failed;
  try {
    work();
  } catch (...) {
    failed = std::current_exception();
  }
  for (auto& r : running) try {
      r.get();  // a compile error of a worker
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  if (failed) std::rethrow_exception(failed);
  for (const auto& [b, i] : permute_ops) ops_[i].permute = permuters.at(b);
  // Moves between the buffers: the permutations, the folded passes and the fused pass that crossed (if one did);
  // an odd count leaves the result in temp, copied back: only an odd number of moves with no other fused pass.
  const bool crossed = odd && !cross;
  passes_ = permutation_passes_ + leaf_passes_ + ((moves + crossed) % 2);
}

std::vector<KernelSource> GpuProgram::fused_sources() const {
  std::vector<KernelSource> out;
  for (const Op& op : ops_)
    if (op.fused) out.push_back(*op.fused);
  return out;
}

std::size_t GpuProgram::temp_bytes() const noexcept {
  return permutation_passes_ + folded_permutations_ ? array_bytes(n_, dtype_bytes(type_)) : 0;
}

void GpuProgram::operator()(void* data, cudaStream_t stream, void* temp) const {
  enqueue(data, stream, temp, [](std::size_t) {});
}

void GpuProgram::enqueue(void* data, cudaStream_t stream, void* temp,
                         const std::function<void(std::size_t)>& between) const {
  const std::size_t bytes = array_bytes(n_, dtype_bytes(type_));
  void* scratch = temp;
  bool owned = false;
  if (temp_bytes() && !scratch) {
    check(cudaMallocAsync(&scratch, bytes, stream), "cudaMallocAsync(program temp)");
    owned = true;
  }
  struct FreeOnThrow {  // a launch or an event that throws must not leak the stream-ordered temp
    void*& p;
    bool& owned;
    cudaStream_t s;
    ~FreeOnThrow() {
      if (owned && std::uncaught_exceptions() > 0) cudaFreeAsync(p, s);
    }
  } guard{scratch, owned, stream};
  void* cur = data;
  void* other = scratch;
  std::size_t pass = 0;
  for (const Op& op : ops_) {
    between(pass++);
    if (op.permute) {
      (*op.permute)(cur, other, stream);
      std::swap(cur, other);
    } else if (op.fused && op.out_of_place) {
      void* args[] = {&cur, &other};
      launch(op.kernel, dim3(static_cast<unsigned>(op.grid)), dim3(op.fused->block), op.fused->shared_bytes,
             stream, args);
      std::swap(cur, other);
    } else if (op.fused) {
      void* args[] = {&cur};
      launch(op.kernel, dim3(static_cast<unsigned>(op.grid)), dim3(op.fused->block), op.fused->shared_bytes,
             stream, args);
    } else {
      launch_leaf_pass(op.geometry, op.leaf, cur, type_, stream);
    }
  }
  if (cur != data) {
    between(pass++);
    check(cudaMemcpyAsync(data, cur, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync(copy back)");
  }
  between(pass);
  if (owned) check(cudaFreeAsync(scratch, stream), "cudaFreeAsync(program temp)");
}

std::vector<double> GpuProgram::pass_ms(void* data, cudaStream_t stream, void* temp) const {
  std::vector<Event> events;
  events.reserve(passes_ + 1);
  enqueue(data, stream, temp, [&](std::size_t) { events.emplace_back().record(stream); });
  events.back().synchronize();
  std::vector<double> ms;
  for (std::size_t i = 1; i < events.size(); ++i) ms.push_back(events[i].elapsed_ms_since(events[i - 1]));
  return ms;
}

std::vector<std::string> GpuProgram::pass_names() const {
  std::vector<std::string> names;
  for (const Op& op : ops_)
    names.emplace_back(op.permute  ? "permute"
                       : op.folded ? "fused + permute"
                       : op.fused  ? (op.out_of_place ? "fused (out of place)" : "fused")
                                   : "leaf");
  if (names.size() < passes_) names.emplace_back("copy back");
  return names;
}

}  // namespace bmmc
