// Internal: an engine behind the distributed front door (bmmc/distributed.hpp: DistributedPermuter), not installed
// and not for callers outside the library; its own tests use it directly.
// The push pass of a PushPlan made ready to launch (docs/DESIGN.md §9.5): planned as one tile pass, renumbered
// in the push launch order, checked, generated and compiled — what every fused engine shares, whether its peer
// pointers come from CUDA peer access (PeerPermuter, one process) or from NCCL symmetric memory windows
// (NcclPushPermuter, one process per GPU).
//
// Rank r launches blocks [r·grid, (r+1)·grid) of the global grid over its own 2^m input elements; each warp row
// lands in targets[y >> m], the destination rank's buffer as this rank's device addresses it. Example: a random
// BMMC of 2^32 complex64 over 2 ranks — make_push_kernel plans F of make_gpu_push_plan (line bits ≥ the warp row),
// and launch_push(kernel, rank, in, {scratch of rank 0, scratch of rank 1}, stream) runs rank's share of it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/push_plan.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc {

struct PushKernel {
  TilePass pass;        ///< the push pass of F, in push_launch_order
  KernelSource source;  ///< generate_push(pass): grid = the blocks of ONE rank
};

/// The push plan of `global` over 2^rank_bits ranks with the vector width the GPU options' policy asks for.
PushPlan plan_push(const Bmmc& global, int rank_bits, int elem_bytes, const GpuOptions& gpu);

/// Plans, orders, checks and generates the push pass of `push` for ranks of 2^local_bits elements on the current
/// device. Throws std::invalid_argument saying why it cannot run (ranks below a warp row, a plan that is not one
/// tile pass, a tile that reaches outside the rank): the caller falls back to another engine or refuses.
PushKernel make_push_kernel(const PushPlan& push, int local_bits, int elem_bytes, const GpuOptions& gpu);

/// Enqueues rank `rank`'s blocks of the push pass on `stream` (the current device must be the rank's): `in` is
/// the rank's own 2^m elements, targets[d] the buffer of rank d as this device addresses it (2^g entries).
void launch_push(const Kernel& kernel, const PushKernel& push, std::size_t rank, const void* in,
                 const std::vector<void*>& targets, cudaStream_t stream);

}  // namespace bmmc
