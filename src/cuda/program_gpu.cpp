// GPU execution of lowered programs (see program_gpu.hpp).
#include "bmmc/cuda/program_gpu.hpp"

#include <fmt/format.h>

#include <unordered_map>
#include <stdexcept>

#include "bmmc/combinators/schedule.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/leaf_kernels.hpp"

namespace bmmc {

GpuProgram::GpuProgram(const LoweredProgram& lp, DType t, const GpuProgramOptions& options) : n_(lp.n), type_(t) {
  GpuOptions go;
  go.jit = options.jit;
  // Stage permutations repeat (the network's levels reuse them), so one CudaPermuter per distinct BMMC.
  std::unordered_map<Bmmc, std::shared_ptr<const CudaPermuter>> permuters;
  auto add_permute = [&](const Bmmc& b) {
    auto& p = permuters[b];
    if (!p) p = std::make_shared<const CudaPermuter>(b, dtype_bytes(t), go);
    ops_.push_back(Op{p, {}, {}});
    ++permutation_passes_;
  };
  auto add_leaf = [&](const Bmmc& layout, const Leaf& leaf) {
    if (leaf_bits(leaf) != 1)
      throw std::invalid_argument(fmt::format("GPU: leaf {} has chunks of 2^{}; only pairs run on the GPU yet",
                                              to_string(leaf.kind), leaf_bits(leaf)));
    ops_.push_back(Op{nullptr, leaf_geometry(layout, 1), leaf});
    ++leaf_passes_;
  };
  if (options.strategy == ExecStrategy::Fused)
    throw std::invalid_argument(
        "GPU: the fused strategy (several leaves per tile pass) runs on the CPU only so far; use folded on the GPU");
  for (const ScheduledPass& pass : schedule(lp, options.strategy)) {
    if (const auto* p = std::get_if<PermutePass>(&pass))
      add_permute(p->perm);
    else
      add_leaf(std::get<LeafPass>(pass).layout, std::get<LeafPass>(pass).leaf);
  }
  // Permutations ping-pong between data and temp; an odd count leaves the result in temp: one copy back.
  passes_ = permutation_passes_ + leaf_passes_ + (permutation_passes_ % 2);
}

std::size_t GpuProgram::temp_bytes() const noexcept {
  return permutation_passes_ ? array_bytes(n_, dtype_bytes(type_)) : 0;
}

void GpuProgram::operator()(void* data, cudaStream_t stream, void* temp) const {
  const std::size_t bytes = array_bytes(n_, dtype_bytes(type_));
  void* scratch = temp;
  bool owned = false;
  if (permutation_passes_ && !scratch) {
    check(cudaMallocAsync(&scratch, bytes, stream), "cudaMallocAsync(program temp)");
    owned = true;
  }
  void* cur = data;
  void* other = scratch;
  for (const Op& op : ops_) {
    if (op.permute) {
      (*op.permute)(cur, other, stream);
      std::swap(cur, other);
    } else {
      launch_leaf_pass(op.geometry, op.leaf, cur, type_, stream);
    }
  }
  if (cur != data) check(cudaMemcpyAsync(data, cur, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync(copy back)");
  if (owned) check(cudaFreeAsync(scratch, stream), "cudaFreeAsync(program temp)");
}

}  // namespace bmmc
