// Internal to the plan layer: the tuned constants of the GPU launch geometry (gpu_policy.cpp), apart from the
// API that uses them. Each constant has the reason it has this value, what was measured (machine, figures,
// the section of docs/history/benchmarks-log.md that holds the full table) and the `bmmc bench` command that
// reproduces the measurement; re-run that command on a new GPU before changing a value. Figures are % of
// cudaMemcpy D2D of the same bytes in the same process (BENCHMARKS.md, "What each metric means").
#pragma once

namespace bmmc::plan_tuning {

// Threads per block and elements per thread of a one-pass tile where a GpuPolicy leaves them 0 (int32: tiles
// of 2^12 elements). Reason: the one pass is not latency- or occupancy-bound, so the smallest block that keeps
// every load in flight before the barrier wins on JIT time and on SM fill for small arrays.
// Measured: H100 80GB HBM3, n = 30, random-bmmc:1, threads {128, 256, 512, 1024} × elements {4, 8, 16, 32} ×
// lanes {8, 16 bytes} all within 91.0–93.9%; 32 elements per thread no better than 16 ("Issue 4 goals").
// Reproduce: bmmc bench --n 30 --spec random-bmmc:1 --variant one-pass --threads T --elems-per-thread E --vector-bits K
inline constexpr int kThreadsPerBlock = 256;
inline constexpr int kOnePassElemsPerThread = 16;

// Launch order where a policy names none: Input from this element size up, Coordinate below it. Reason: input
// order keeps consecutive blocks' reads in neighbouring runs, which DRAM rewards for 4- to 16-byte elements;
// 1- and 2-byte tiles read runs long enough already, and input order lost there.
// Measured: H100 80GB HBM3, n = 30 int32 random-bmmc:1..20, median / min 93.5 / 91.5% coordinate against
// 94.2 / 93.2% input; n = 28 1-byte 87.3 against 86.0%, 2-byte 95.1 against 94.3% ("The copy limit").
// Reproduce: bmmc bench --n 30 --variant one-pass --block-order coordinate input --spec random-bmmc:1 …
// random-bmmc:20 (and -b 1 / -b 2 with --n 28)
inline constexpr int kInputOrderMinElemBytes = 4;

// Lane width of the copy geometry: a map that keeps the low runs (of ≥ 512 bytes) whole gets lanes of this
// many bytes and one vector per thread, blocks of 4 KiB that read one contiguous piece, as the plain copy
// kernel that reaches cudaMemcpy does. Reason: such a map needs no tile rows; the copy's own geometry wins.
// Measured: H100 80GB HBM3, int32 axes:1024x1024x1024:1,0,2 95.8 → 97.2%, int64 axes:256x2x32x8192:1,2,0,3
// 97.3 → 98.2%, identity 99.1 → 100.5% ("Maps that keep the low bits: the copy kernel's geometry").
// Reproduce: bmmc bench --variant one-pass --no-probe --spec axes:1024x1024x1024:1,0,2 (against the same with
// --vector-bits 1 --elems-per-thread 16, the geometry before)
inline constexpr int kCopyGeometryLaneBytes = 16;

// 1-byte maps whose packed tile (L_s + A⁻¹L_s, s = 8 with 8-byte lanes) exceeds 2^kByteTileBits elements get
// threads for at most 2^kByteMaxElemsPerThreadBits elements each (a random map's 2^16: 1024 threads).
// Reason: with 256 threads a thread holds 256 elements and the kernel takes seconds to JIT; smaller tiles keep
// 256 threads because BPCs ran slower with 1024.
// Measured: H100 80GB HBM3, random-bmmc:77 at n = 24 with 256 threads took 1.9 s to JIT (first_use_ms); BPCs
// 6–8% slower with 1024 threads ("Tiles beyond one block").
// Reproduce: bmmc bench -b 1 --n 24 --threads 256 --spec random-bmmc:77 --variant one-pass --no-probe
inline constexpr int kByteTileBits = 14;
inline constexpr int kByteMaxElemsPerThreadBits = 6;

// Small 1-byte arrays: where the 8-byte lanes' tile exceeds 2^kByteTileBits elements and gives fewer than this
// many blocks per SM, 4-byte lanes instead (tiles of at most 2^14, 4× the blocks). Reason: a 2^16 tile leaves
// SMs idle (a 4 MiB array: 64 blocks for 132 SMs).
// Measured: H100 80GB HBM3, n = 24 1-byte random maps, bit-reverse, transposes 10.5–11.0 µs with 4-byte lanes
// against 11.2–13.1 µs with 8-byte lanes; cudaMemcpy 9.9–10.1 µs ("Small 1-byte arrays").
// Reproduce: bmmc bench -b 1 --n 24 --variant one-pass --reps 30 --no-probe --spec random-bmmc:1 bit-reverse
// transpose:12 (against the same with --vector-bits 3 --threads 1024)
inline constexpr int kByteLaneBlocksPerSm = 2;

// fill_the_device halves the elements per thread of a one-pass tile until every SM has this many blocks.
// Reason: the default tile leaves SMs idle below n ≈ 21 (n = 18: 64 blocks for an H100's 132 SMs); a target
// of two blocks per SM also narrowed bit-reverse at n = 20, which then ran slower.
// Measured: H100 80GB HBM3, the 2 MiB int64 shape 2x16x4x1024x2, axes (0,4,2,1,3): 64 blocks, 52.5% of the copy
// with 16 elements per thread (torch 75%), 75.2% with one block per SM; bit-reverse at n = 20 with two blocks
// per SM 20% slower in one run ("Issue 17, session 7").
// Reproduce: bmmc bench --spec "axes:2x16x4x1024x2:0,4,2,1,3" -b 8 --variant one-pass --reps 300 --elems-per-thread 0
// (against the same with --elems-per-thread 16)
inline constexpr int kFillBlocksPerSm = 1;

}  // namespace bmmc::plan_tuning

namespace bmmc::plan_tuning {

// The digit planner's tile (plan/digit_plan.hpp) where a DigitPolicy leaves it 0. Reason: the same bytes per
// tile and per thread as the one-pass BMMC tile above (2^12 int32 = 16 KiB over 256 threads), whose runs of
// 256 bytes on each side reach the copy limit; a tile up to twice that lets the rank-18 extent-3 reversal take
// 3^4 × 3^4 elements. No min_blocks: forcing 8 blocks per SM (fewer registers, spills) cost 5–37 points on
// every slow case of the suite but one, 6 blocks up to 14 on most. Reproduce: bmmc bench --backend cuda --shape S --spec X -b E --digit-tune
// tile=T,run=R,threads=N,min-blocks=M (bench/results/h200/digit_tune.csv)
inline constexpr int kDigitRunBytes = 256;
inline constexpr int kDigitTileBytes = 16 * 1024;
inline constexpr int kDigitMaxTileBytes = 32 * 1024;
inline constexpr int kDigitThreadsPerBlock = 256;
inline constexpr int kDigitMinBlocks = 0;
// Covering read vectors (DigitPlan::read_cover) where a read row is at least this many vectors long: a row of c
// elements then takes at most ⌈c / vector⌉ + 1 vectors, under 1.5× the lanes of an aligned row. Covering writes
// are off by default (DigitPolicy::cover 1 turns them on): never faster than scalar writes, slower on three cases.
// Reproduce: bmmc bench --backend cuda --shape S --spec X -b E --digit-tune cover=0 --digit-tune cover=1
// (bench/results/h200/any_shape.csv)
inline constexpr int kDigitCoverRowVectors = 4;

}  // namespace bmmc::plan_tuning
