// GpuPolicy: how a GPU launch wants a permutation planned, in launch terms (threads per block, elements per
// thread), and its mapping onto the planner's PlanOptions for a given device.
//
// The planner speaks of tiles (vector bits, tile bits, warp bits); a CUDA programmer speaks of threads and
// elements per thread, and the device bounds the tile by its shared memory. gpu_plan_options() is the one
// place that translates: tile_bits = log2(threads · elements per thread), warp_bits = log2(threads / 32)
// (the paper's plain "tiled" kernels keep one warp per row), max_tile_bytes = half of an SM's shared
// memory, never more than a block may take. Example: the defaults (256 threads, 16 elements per thread,
// 8-byte lane accesses) give int32 one-pass tiles of 2^12 elements: 64 rows of 64 for bit-reverse at n = 30.
#pragma once

#include <optional>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/plan/device_caps.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {

struct GpuPolicy {
  Variant variant = Variant::Auto;
  int elems_per_thread = 0;   ///< 0: the variant's default (one-pass 16, tiled-banks-iters and two-pass 4, tiled 1)
  int threads_per_block = 0;  ///< 0: 256 (more for 1-byte maps with large tiles: default_gpu_geometry); else a
                              ///< power of two from 32 to 1024 (and at most the device's limit)
  int vector_bits = -1;       ///< -1: default (8-byte lane accesses); else 2^k elements per lane access
  std::optional<bool> swizzle;  ///< default: on, except for the paper's plain "tiled" variant
  /// Launch order of the blocks (plan/block_order.hpp); default: default_gpu_block_order(elem_bytes). The
  /// precompiled generic kernel launches in coordinate order whatever this says (the order never changes what
  /// a block moves).
  std::optional<BlockOrder> block_order;
  /// Which runs the tile rows beyond the forced ones lengthen (PlanOptions::longer_runs); default: Read.
  RunSide longer_runs = RunSide::Read;
  /// 1-byte arrays too small for two blocks of 2^16-element tiles per SM get 4-byte lanes (default_gpu_geometry).
  /// Off for the multi-GPU push pass, whose plan sizes its runs for the default lanes before this is known.
  bool small_byte_lanes = true;

  friend bool operator==(const GpuPolicy&, const GpuPolicy&) = default;
};

/// The PlanOptions that realise `policy` for arrays of 2^n elements on a device with `caps`.
/// Throws std::invalid_argument for threads or elements per thread that are not powers of two in range.
PlanOptions gpu_plan_options(const GpuPolicy& policy, int n, const DeviceCaps& caps);

/// The launch order a GPU plan gets when the policy names none: Input for elements of 4 bytes or more,
/// Coordinate for 1- and 2-byte elements (src/plan/tuning.hpp gives the measurements).
BlockOrder default_gpu_block_order(int elem_bytes) noexcept;

/// True when A maps the low s index bits among themselves (A·e_j has no bit ≥ s for j < s): then
/// L + A⁻¹L = L, the permutation forces no tile rows (q = 0) and every run of 2^s elements moves whole.
bool keeps_low_bits(const Bmmc& bmmc, int s) noexcept;

/// The one-pass geometry a GPU plan gets where the policy leaves it open (vector_bits −1 and
/// elems_per_thread 0): a map that keeps the low s = 5 + log2(16 / elem_bytes) bits (q = 0: permutations of the
/// outer axes, any map of whole runs of ≥ 512 bytes) gets 16-byte lanes and ONE vector per thread — blocks of
/// 4 KiB that read (and, when the map keeps the low 8 + log2(16 / elem_bytes) bits, write) one contiguous piece,
/// the shape of the plain copy kernel. Every other map keeps the planner's default (8-byte lane accesses, 16
/// elements per thread), and so does a policy that sets either knob; 1-byte elements whose packed tile
/// L_s + A⁻¹L_s (s = 8) exceeds 2^14 get threads for at most 64 elements each, unless the policy names a count
/// (a random map's 2^16: 1024 threads). With `sm_count` (> 0) and policy.small_byte_lanes, 1-byte maps whose
/// 8-byte lanes' tile exceeds 2^14 elements and gives fewer than 2 × sm_count blocks get 4-byte lanes instead
/// (vector_bits 2: tiles of at most 2^14, 4× the blocks). A policy whose lanes are set to 8 bytes or more for
/// 1-byte elements (vector_bits ≥ 3: the front door sets 3 for views aligned to 8 but not 16 bytes) still gets
/// the 1-byte thread count, but keeps its lane width. src/plan/tuning.hpp holds these thresholds and the
/// measurements behind them.
GpuPolicy default_gpu_geometry(const Bmmc& bmmc, int elem_bytes, const GpuPolicy& policy, int sm_count = 0);

/// For a one-pass policy that leaves elems_per_thread 0: fewer elements per thread (16, 8, … 1) until the array
/// of 2^n elements has at least one block per SM (caps.sm_count); `policy` unchanged otherwise. Example: n = 18
/// on 132 SMs, 256 threads: 4 elements per thread, tiles of 2^10, 256 blocks instead of 64.
GpuPolicy fill_the_device(const GpuPolicy& policy, int n, const DeviceCaps& caps);

/// make_plan(bmmc, elem_bytes, gpu_plan_options(fill_the_device(default_gpu_geometry(...)), bmmc.n(), caps))
/// with the launch order policy.block_order, else default_gpu_block_order(elem_bytes).
Plan make_plan(const Bmmc& bmmc, int elem_bytes, const DeviceCaps& caps, const GpuPolicy& policy = {});

}  // namespace bmmc
