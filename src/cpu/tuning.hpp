// Internal to the CPU backend: its tuned constants (executor.cpp, loop_choice.cpp, thread_pool.cpp), apart from
// the code that uses them. Each constant has the reason it has this value, what was measured (CPU, figures, the
// section of docs/history/benchmarks-log.md with the full table) and the `bmmc bench` command that reproduces
// the measurement; re-run that command on a new CPU before changing a value. "EPYC" is the 2-core AMD EPYC
// (Zen 4) VM of the CI (32 KiB 8-way L1d, 1 MiB L2 a core); times are µs per call, medians.
#pragma once

#include <chrono>
#include <cstddef>

namespace bmmc::cpu_tuning {

// ---- Threads and stores ----------------------------------------------------------------------------------

// Arrays at least this large are written with non-temporal stores. Reason: they cannot stay in any cache, and
// streaming stores skip the read-for-ownership of each output line (a third of a plain store loop's traffic);
// smaller arrays keep normal stores so the result stays cached for whoever reads it next.
// Reproduce: bmmc bench --backend cpu --n 21..23 --spec random-bmmc:1 bit-reverse --variant one-pass --cpu-tiled
// (streams from 8 MiB; no option turns streaming off, so an A/B needs a build with another value)
inline constexpr std::size_t kStreamingBytes = std::size_t{8} << 20;

// In place (the tile loop on pairs of cosets, cpu/inplace.cpp), arrays at least this large are written with
// non-temporal stores. Reason: in place touches one array where out of place touches two, so arrays up to the
// L3 (32 MiB on the EPYC) stay cached and plain stores keep them there; beyond it a streaming store writes a
// line the pair has read without keeping it, as out of place. Measured: EPYC, one thread, a conjugated
// bit-reverse in place per out-of-place time, streamed against plain: 4-byte elements n = 22 (16 MiB) 1.05
// against 0.87, n = 23 1.30 against 1.42, n = 24 1.18 against 1.36; 8-byte n = 20 2.08 against 1.60 (medians
// of 4-5 alternating runs). Reproduce: bmmc bench --backend cpu --in-place --variant one-pass --threads 1
// --spec 'inv(random-bmmc:3)*bit-reverse*random-bmmc:3' --n 22..24 (builds with this value and with 8 MiB)
inline constexpr std::size_t kInPlaceStreamingBytes = std::size_t{32} << 20;

// With automatic thread counts every thread gets at least this many bytes. Reason: waking or starting a
// thread costs tens of microseconds on a VM, the time to permute a few hundred KiB.
// Reproduce: bmmc bench --backend cpu --spec bit-reverse random-bmmc:1 --n 17 --reps 60 --variant one-pass
// --threads 1 (against --threads 2)
inline constexpr std::size_t kBytesPerThread = std::size_t{512} << 10;

// How long an idle pool worker (and a caller waiting for the workers) spins before it sleeps in a futex wait.
// Reason: calls that follow each other closely find the workers awake (a hand-off well under a microsecond),
// where a futex wake-up costs 5–60 µs on a VM; an idle pool burns no CPU after it.
// Measured: EPYC, the pool with this spin and the chunks below against the pool before them, 1 MiB int32
// calls on 2 threads: bit-reverse 86.4 → 43.4 µs, random-bmmc:1 42.8 → 23.8 µs ("The pool spins before it
// sleeps"). Reproduce: bmmc bench --backend cpu --spec bit-reverse random-bmmc:1 --n 18..22 --reps 60
// --variant one-pass --csv (builds before and after, alternating processes)
inline constexpr auto kPoolSpin = std::chrono::microseconds(50);

// The pool's chunk: the direct loop hands out at least kDirectMinChunkBytes of the array at a time, the tile
// loop at least kTileMinChunkBlocks blocks, and both at most kChunksPerThread chunks a thread otherwise.
// Reason: a chunk per 1 KiB group made the shared counter's line travel between the cores once per group; the
// tile loop's next-block prefetch is lost only at chunk edges; 32 chunks a thread keep a stalled vCPU from
// holding up more than a little of the call.
// Measured: with kPoolSpin, in the same A/B.
// Reproduce: bmmc bench --backend cpu --spec bit-reverse random-bmmc:1 --n 18 --reps 60 --variant one-pass
inline constexpr std::size_t kDirectMinChunkBytes = std::size_t{128} << 10;
inline constexpr int kTileMinChunkBlocks = 16;
inline constexpr int kChunksPerThread = 32;

// ---- The digit executor (any-shape maps) -------------------------------------------------------------------

// A full digit tile whose innermost output axis takes fewer than kDigitGatherBelow elements is written as gathered
// output runs of at least kDigitGatherRun elements (the innermost output axes whose images are contiguous) through
// one offset table, instead of 2-D blocks that short. Reason: a block of 3 × 3 elements costs a call and its
// loop set-up per 9 elements; a gather costs a table load per element.
// Reproduce: python3 bench/any_shape_cpu.py --bmmc build/bin/bmmc --only reversal
inline constexpr long kDigitGatherBelow = 16;
inline constexpr long kDigitGatherRun = 64;

// Rows copied whole (the innermost axis stays innermost) into an output of at least kStreamingBytes are stored
// past the caches when a row has at least kDigitStreamRowBytes. Reason: the lines are then written whole, with no
// read for ownership; shorter runs leave partial lines, and the gathers (runs of 324 bytes on a 3^15 reversal)
// became twice as slow when streamed.
// Reproduce: python3 bench/any_shape_cpu.py --bmmc build/bin/bmmc --only "fp16"
inline constexpr long kDigitStreamRowBytes = 256;

// ---- The tile loop -----------------------------------------------------------------------------------------

// Runs of 2^kRunBytesBits bytes (two cache lines) where 32 elements are smaller. Reason: whole lines on both
// sides, and the adjacent-line prefetcher's pair.
// Reproduce: bmmc bench --backend cpu --n 26 --spec random-bmmc:1 bit-reverse --variant one-pass (and
// bmmc plan SPEC --n 26 --backend cpu to see the runs)
inline constexpr int kRunBytesBits = 7;

// Default tile budgets: bit permutations keep the tile in L1 (half of a 32 KiB L1d), general BMMCs take an
// L2-sized tile whose extra rows make each block read 4 KiB input stretches instead of 128-byte runs.
// Measured: EPYC and Xeon, n = 26 int32, 2 threads, tiles of 2^11 … 2^16 for random-bmmc:1, bit-reverse,
// transpose:13, random-bpc:1 (bench/results/cpu/epyc_tiles.csv; "CPU backend").
// Reproduce: PARTS=tiles scripts/bench-cpu.sh (bmmc bench --backend cpu --n 26 --variant one-pass --cpu-tile K)
inline constexpr std::size_t kTileBytesL1 = std::size_t{16} << 10;
inline constexpr std::size_t kTileBytesL2 = std::size_t{128} << 10;

// The register transposes against the gathers, chosen per CPU (loop_choice.hpp): the gathers must take less
// than kGatherMargin of the transposes' time to be chosen, the best of kLoopChoiceRounds interleaved rounds of
// each, on a stand-in array of 2^kLoopChoiceBytesBits bytes (in L2). Reason: noise must not flip a close call;
// the stand-in measures the loops' compute cost in cache, which decided n = 26 on the EPYC, in well under a
// millisecond once per process. Measured: EPYC, n = 26, transposes 81% against gathers 38–45% of memcpy for
// general BMMCs; Xeon gathers ahead for bit-reverse (72 against 55%); a 1 MiB streamed stand-in picked the
// gathers for bit-reverse on the EPYC, the opposite of n = 26; a 16 MiB one cost 100–260 ms ("CPU backend",
// "CPU small arrays").
// Reproduce: bmmc bench --backend cpu --n 26 --spec random-bmmc:1 bit-reverse --variant one-pass --cpu-transpose
// (against --cpu-gather)
inline constexpr double kGatherMargin = 0.9;
inline constexpr int kLoopChoiceRounds = 5;
inline constexpr int kLoopChoiceBytesBits = 18;

// ---- The direct loops (no tile): the size rule of docs/DESIGN.md §4.2 ---------------------------------------

// The direct loops replace the tile loop of a one-pass plan on arrays up to this size: the register transposes
// for 4/8-byte elements (AVX2) and the walk for the others. Reason: below it the direct loop is as fast or
// faster for every map measured. Measured: EPYC ("CPU small arrays: the direct loops").
// Reproduce: bmmc bench --backend cpu -b B --spec bit-reverse random-bmmc:1 random-bpc:1 transpose:7 --n N
// --reps 200 --variant one-pass --cpu-direct (against --cpu-tiled)
inline constexpr std::size_t kDirectTransposeBytes = std::size_t{1} << 20;
inline constexpr std::size_t kDirectWalkBytes = std::size_t{1} << 20;

// ... and up to this size only for maps whose groups pile more than half their input vectors and more than half
// their output vectors into one L1 set each (DirectTables::set_pile; bit-reverse). Reason: above it the tile
// loop is as fast or faster for them. Measured: EPYC, 4-byte bit-reverse 14.0 µs direct against 13.5 tiled at
// 128 KiB, 34.5 against 26.9 at 256 KiB, 131 against 91 at 1 MiB ("CPU small arrays: the direct loops").
// Reproduce: bmmc bench --backend cpu -b 4 --spec bit-reverse --n 15..18 --reps 200 --variant one-pass --cpu-direct
// (against --cpu-tiled)
inline constexpr std::size_t kDirectPiledBytes = std::size_t{128} << 10;

// The walk reads the 2^5 sources of an output line (1- and 2-byte elements); when more of them share one L1
// set than it has ways (kL1Ways), the lines thrash once the array leaves L1: direct only up to this size then.
// Measured: EPYC, 1-byte bit-reverse at 64 KiB 96 µs walk against 38 µs tiled ("CPU small arrays: the direct
// loops", a CPU without AVX-512). Reproduce: bmmc bench --backend cpu -b 1 --spec bit-reverse --n 16
// --variant one-pass --cpu-avx2 --cpu-direct (against --cpu-avx2 --cpu-tiled)
inline constexpr std::size_t kDirectPiledWalkBytes = std::size_t{32} << 10;
// The L1d associativity the set-pile rules assume (the EPYC's; the Xeon's is 12).
inline constexpr int kL1Ways = 8;

// The byte-permuting groups of 32-byte vectors (1-byte elements, AVX-512 VBMI) up to this size. Reason: at
// 1 MiB the tile loop was as fast or faster for several maps. Measured: EPYC, 2-byte random-bmmc:1 at 1 MiB
// 195 µs direct against 152 tiled, at 512 KiB 43 against 66 (while 2-byte elements used these groups; "Byte
// groups without a tile"). Reproduce: bmmc bench --backend cpu -b 1 --spec bit-reverse random-bmmc:1
// random-bpc:1 transpose:7 --n 19..20 --reps 300 --variant one-pass --cpu-direct (against --cpu-tiled)
inline constexpr std::size_t kDirectByteGroupBytes = std::size_t{512} << 10;

// The groups of whole 64-byte lines (AVX-512: 4/8-byte elements, 2-byte with VBMI) up to this size, piled or
// not. Reason: a group reads and writes whole lines, so crowded sets cost no second fetch and the direct loop
// stays ahead into L3; at 8 MiB, where arrays reach DRAM, the tile loop's streaming stores win. Measured: EPYC,
// 2 threads, 4 MiB 4-byte bit-reverse 432 µs direct against 698 tiled, random-bmmc:1 460 against 683; 2-byte
// 415 against 504, 228 against 327; at 8 MiB 4-byte 1336 against 707, 667 against 524; 2-byte 1621 against 909
// ("Groups of whole lines"). Reproduce: bmmc bench --backend cpu -b 4 --spec bit-reverse random-bmmc:1
// --n 20..21 --reps 300 --variant one-pass --cpu-direct (against --cpu-tiled)
inline constexpr std::size_t kDirectWideBytes = std::size_t{4} << 20;

}  // namespace bmmc::cpu_tuning
