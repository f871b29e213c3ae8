// The fast CPU backend: executes the same coset-tile plans as the GPU, with a cache-resident tile in the
// role of shared memory, on std::threads. It is the embedded default when there is no GPU.
//
// How a TilePass runs on a CPU (plan.hpp gives the formulas; DESIGN.md §4 the algebra). Blocks of the coset
// tiling go to the threads in chunks of consecutive blocks, taken from a shared counter. For block b the thread computes x0 and
// z = A·x0 ⊕ c once, then
//   phase 1: for each tile row ρ copies the 2^s consecutive input elements at x0 ⊕ R·ρ into tile row ρ
//            (a whole run, ≥ 128 bytes once n ≥ 9: two or more full cache lines, read sequentially);
//   phase 2: for each output row σ gathers the 2^s elements of y0 ⊕ U·σ ⊕ (0..2^s−1) from the tile and
//            writes them as one run (non-temporal stores for arrays of 8 MiB and more; with AVX2, detected
//            at run time, 4- and 8-byte elements are gathered 8 or 4 at a time by vpgather).
// Nothing is a per-element mat-vec: R·ρ and U·σ come from tables built once per pass (Gray-code XOR
// prefix), and the tile position of output element j of row σ is Nσ[σ] ⊕ Nτ[δ] ⊕ Nτ[j], two table
// lookups and an XOR (N = the plan's shared-memory maps G composed with the inverse of its store map Λ:
// a CPU has no banks, so the executor relabels the tile to the natural row-major order and phase 1
// becomes a straight copy; which elements a block reads and writes is exactly the plan's). While a block
// is in phase 2 the thread prefetches the input rows of its next block into L2 (prefetcht2: L1 prefetches
// of scattered rows stall on the L1 miss buffers: 4 KiB pieces read at 13 GB/s with T0, 26 with T2).
//
// Register transposes (src/cpu/transpose_blocks.hpp has the algebra). Per-element loads cost ~1.3 cycles
// each on the CI's AMD EPYC, which kept the loops above at ~40% of memcpy for general BMMCs. Instead, phase
// 1 takes a group of 2^W input vectors of 2^W elements (32-byte vectors: 8×8 for 4-byte, 4×4 for 8-byte
// elements with AVX2; 16×16 for 2-byte and 32×32 for 1-byte elements with AVX-512 VBMI), permutes their
// lanes, exchanges some or all lane bits with vector bits (a full or partial transpose) and permutes lanes
// again, so that the tile holds the block's output in output order; phase 2 copies whole vectors. A few
// shuffles per vector instead of a load per element. Every BMMC fits once the tile holds one group; how
// many lane bits are exchanged is read off the plan. 16-byte elements keep the gather loop (a gather moves
// 16 bytes per load already). cpu_kernel_name(plan) says which loop runs; CpuOptions::register_transpose =
// false forces the gathers.
//
// Run and tile size (make_cpu_plan). Runs are 2^s elements, s = vector_bits + 5, with vector_bits chosen
// so a run is 128 bytes for 1..4-byte elements (two whole 64-byte lines on both sides) and 32 elements
// (256 / 512 bytes) for 8 / 16 bytes. The tile is 2^(s+m) elements; m ≥ q rows are forced by the
// permutation, the other rows are the planner's extra input directions, which lengthen the contiguous
// input stretches a block reads (2^(s + m − q) elements). Measured (n = 26, int32, 2 threads, tiles of
// 2^10..2^17 elements; BENCHMARKS.md "CPU backend") on the 2-core AMD EPYC CI VM (32 KiB L1d, 1 MiB L2)
// and on 2 cores of an Intel Xeon: general BMMCs are fastest with an L2 tile (128 KiB: register
// transposes 80% of memcpy on the EPYC, whose gather loop fell to ~31% with 16 KiB), because their input
// otherwise arrives in 128–512-byte pieces from scattered pages; bit permutations (BPC) are as fast or
// faster with the tile in L1 (16 KiB: on the EPYC bit-reverse 84% vs 77% with 128 KiB, random BPC about
// equal; on the Xeon BPCs 94–114% vs 77–80%), and the gather loop needs it (random BPC 80% vs 24%). So the
// default is 16 KiB for BPCs and 128 KiB otherwise (never below 2^(s+q)). CpuOptions::tile_elems_log2
// overrides it.
#pragma once

#include <string>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc {

struct CpuOptions {
  int threads = 0;           ///< 0 = std::thread::hardware_concurrency() (fewer for small arrays)
  int tile_elems_log2 = -1;  ///< -1 = choose (see the header comment); else log2 of the tile's elements
  bool register_transpose = true;  ///< register transposes where the CPU has them (AVX2 / AVX-512 VBMI)
};

/// The plan the CPU executes for this permutation: a one-pass TilePass built by make_plan with CPU-sized
/// runs and tile (or a NaivePass for n < 5). Throws std::invalid_argument for an unsupported elem_bytes
/// or a tile_elems_log2 outside 5..20.
Plan make_cpu_plan(const Bmmc& bmmc, int elem_bytes, const CpuOptions& options = {});

/// out[A·x ⊕ c] = in[x] for all 2^n indices, multi-threaded. `in` and `out` are host buffers of
/// 2^n · elem_bytes bytes, disjoint and aligned to elem_bytes (checked first with check_buffers: on bad
/// arguments it throws std::invalid_argument and writes nothing). elem_bytes ∈ {1, 2, 4, 8, 16}.
void permute_cpu(const Bmmc& bmmc, const void* in, void* out, int elem_bytes, const CpuOptions& options = {});

/// Executes any Plan (one-pass, the paper's tiled variants, two-pass, naive — CPU or GPU geometry) on the
/// CPU. Pass i reads the previous pass's output; buffers alternate so the last pass writes `out`. `temp`
/// (same size as `in`, disjoint from both) is needed when plan.needs_temp() and may be null otherwise.
/// threads ≤ 0 means hardware_concurrency(). All buffers are checked before anything is written.
void execute_plan_cpu(const Plan& plan, const void* in, void* out, void* temp, int threads);
/// The same with options: threads, and whether the register-transpose loop may be used.
void execute_plan_cpu(const Plan& plan, const void* in, void* out, void* temp, const CpuOptions& options);

/// The inner loop(s) execute_plan_cpu runs for this plan on this CPU, one name per pass joined by " + ":
/// "transpose-avx2" (4/8-byte elements), "transpose-avx512vbmi" (1/2-byte elements) — register transposes —
/// "gather" (per-element loads; vpgather for 4/8-byte elements on arrays that are streamed)
/// (scalar), "scatter" (a naive pass). For tests and benchmark reports.
std::string cpu_kernel_name(const Plan& plan, const CpuOptions& options = {});

}  // namespace bmmc
