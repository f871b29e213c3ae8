// GpuPolicy → PlanOptions (see gpu_policy.hpp).
#include "bmmc/plan/gpu_policy.hpp"

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/subspace.hpp"
#include "tuning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace bmmc {

namespace {

// The defaults a policy's zeros stand for, and the geometry rules' thresholds (tuning.hpp).
using plan_tuning::kByteLaneBlocksPerSm;
using plan_tuning::kByteMaxElemsPerThreadBits;
using plan_tuning::kByteTileBits;
using plan_tuning::kCopyGeometryLaneBytes;
using plan_tuning::kFillBlocksPerSm;
using plan_tuning::kInputOrderMinElemBytes;
using plan_tuning::kOnePassElemsPerThread;
constexpr int kDefaultThreads = plan_tuning::kThreadsPerBlock;

int threads_of(const GpuPolicy& policy) { return policy.threads_per_block ? policy.threads_per_block : kDefaultThreads; }

int log2_exact(int v, const char* what) {
  if (v <= 0 || !std::has_single_bit(static_cast<unsigned>(v)))
    throw std::invalid_argument(fmt::format("{} must be a power of two, got {}", what, v));
  return std::countr_zero(static_cast<unsigned>(v));
}

}  // namespace

PlanOptions gpu_plan_options(const GpuPolicy& policy, int n, const DeviceCaps& caps) {
  const int threads = threads_of(policy);
  const int thread_bits = log2_exact(threads, "threads per block");
  if (threads < 32 || threads > std::min(1024, caps.max_threads_per_block))
    throw std::invalid_argument(fmt::format("threads per block must be 32..{}, got {}",
                                            std::min(1024, caps.max_threads_per_block), threads));
  if (policy.elems_per_thread) log2_exact(policy.elems_per_thread, "elements per thread");

  PlanOptions o;
  o.variant = policy.variant;
  o.vector_bits = policy.vector_bits;  // only one-pass plans use it; the paper's kernels move one element
  o.swizzle = policy.swizzle;
  if (policy.block_order) o.block_order = *policy.block_order;
  o.longer_runs = policy.longer_runs;
  o.pack_bytes = true;  // the JIT kernels and the push/piece kernels read packed 1-byte tiles
  o.warp_bits = thread_bits - kLaneBits;
  // Several blocks per SM keep loads in flight while others are in phase 2: a tile takes at most half of
  // an SM's shared memory, and never more than one block may have.
  o.max_tile_bytes = std::min<std::int64_t>(caps.max_shared_per_block, caps.max_shared_per_sm / 2);
  const auto tile_bits = [&](int elems_default) {
    const int ept = policy.elems_per_thread ? policy.elems_per_thread : elems_default;
    return thread_bits + log2_exact(ept, "elements per thread");
  };
  switch (resolve_variant(policy.variant, n)) {
    case Variant::Naive: break;
    case Variant::Tiled:
    case Variant::TiledBanks:
      // The paper's kernels without "iters": one element per thread and phase, one warp per tile row.
      o.tile_bits = tile_bits(1);
      o.warp_bits = -1;
      break;
    case Variant::TiledBanksIters:
    case Variant::TwoPass: o.tile_bits = tile_bits(4); break;
    default: o.tile_bits = tile_bits(kOnePassElemsPerThread); break;
  }
  return o;
}

BlockOrder default_gpu_block_order(int elem_bytes) noexcept {
  return elem_bytes >= kInputOrderMinElemBytes ? BlockOrder::Input : BlockOrder::Coordinate;
}

bool keeps_low_bits(const Bmmc& bmmc, int s) noexcept {
  if (s > bmmc.n()) return false;
  for (int j = 0; j < s; ++j)
    if (bmmc.matrix().col(j) >> s) return false;
  return true;
}

GpuPolicy default_gpu_geometry(const Bmmc& bmmc, int elem_bytes, const GpuPolicy& policy, int sm_count) {
  check_elem_bytes(elem_bytes);  // before kCopyGeometryLaneBytes / elem_bytes below
  GpuPolicy p = policy;
  const int n = bmmc.n();
  // 1-byte elements with lanes set to 8 bytes or more (the front door sets 8 for views aligned to 8 but not 16
  // bytes; a caller may name 8 or 16) still get the 1-byte thread count below, not 256 threads with 256 elements
  // each — but not the small-array 4-byte lanes, which would override the width the policy names.
  const bool default_lanes = policy.vector_bits < 0;
  if (resolve_variant(policy.variant, n) != Variant::OnePass ||
      !(default_lanes || (elem_bytes == 1 && policy.vector_bits >= 3)))
    return p;
  const int wide = std::countr_zero(static_cast<unsigned>(kCopyGeometryLaneBytes / elem_bytes));  // wide lanes
  const int threads = threads_of(policy);
  const int thread_bits = std::countr_zero(static_cast<unsigned>(threads));
  if (default_lanes && policy.elems_per_thread == 0 && n >= wide + kLaneBits + thread_bits &&
      keeps_low_bits(bmmc, wide + kLaneBits)) {
    p.vector_bits = wide;  // whole wide vectors, one per thread: the copy's own geometry
    p.elems_per_thread = 1 << wide;
  } else if (elem_bytes == 1 && policy.threads_per_block == 0 && n >= kLaneBits) {
    // Packed 1-byte tiles hold L_s + A⁻¹L_s (s = 8 with 8-byte lanes): 2^16 elements for a random map. Tiles
    // above 2^kByteTileBits get threads for at most 2^kByteMaxElemsPerThreadBits elements each (1024 for a
    // random map); smaller tiles keep the default threads.
    //
    // Small arrays: where the 8-byte lanes' tile is above 2^kByteTileBits (so 4-byte lanes, whose tile is at
    // most 2^14, give more blocks) and its blocks are fewer than kByteLaneBlocksPerSm per SM, 4-byte lanes
    // (runs of 128 bytes). tuning.hpp gives the measurements behind both rules.
    int lane_bits = std::min(3, n - kLaneBits);
    int d = forced_tile_space(bmmc, lane_bits + kLaneBits).dim();
    if (default_lanes && policy.small_byte_lanes && lane_bits == 3 && d > kByteTileBits && sm_count > 0 &&
        (std::uint64_t{1} << (n - d)) < kByteLaneBlocksPerSm * static_cast<std::uint64_t>(sm_count)) {
      lane_bits = 2;
      p.vector_bits = lane_bits;
      d = forced_tile_space(bmmc, lane_bits + kLaneBits).dim();
    }
    if (d > kByteTileBits) p.threads_per_block = 1 << std::min(10, d - kByteMaxElemsPerThreadBits);
  }
  return p;
}

GpuPolicy fill_the_device(const GpuPolicy& policy, int n, const DeviceCaps& caps) {
  // Small arrays: the one-pass default tile leaves SMs idle. Halve the elements per thread until every SM has
  // kFillBlocksPerSm blocks or a thread moves one element; the planner still widens a tile the map needs wider.
  GpuPolicy p = policy;
  if (policy.elems_per_thread != 0 || resolve_variant(policy.variant, n) != Variant::OnePass) return p;
  const int threads = threads_of(policy);
  int ept = kOnePassElemsPerThread;
  int tile_bits = std::countr_zero(static_cast<unsigned>(threads)) + std::countr_zero(static_cast<unsigned>(ept));
  const std::uint64_t want = static_cast<std::uint64_t>(std::max(caps.sm_count, 1)) * kFillBlocksPerSm;
  while (ept > 1 && n > tile_bits && (std::uint64_t{1} << (n - tile_bits)) < want) {
    ept /= 2;
    --tile_bits;
  }
  if (ept != kOnePassElemsPerThread) p.elems_per_thread = ept;
  return p;
}

Plan make_plan(const Bmmc& bmmc, int elem_bytes, const DeviceCaps& caps, const GpuPolicy& policy) {
  // A policy that names neither knob gets the geometry for maps that keep the low bits, or else the default
  // tile narrowed until it fills the device.
  const GpuPolicy p = fill_the_device(default_gpu_geometry(bmmc, elem_bytes, policy, caps.sm_count), bmmc.n(), caps);
  PlanOptions o = gpu_plan_options(p, bmmc.n(), caps);
  o.block_order = policy.block_order.value_or(default_gpu_block_order(elem_bytes));
  return make_plan(bmmc, elem_bytes, o);
}

}  // namespace bmmc
