// Tuning of the distributed engines (docs/DESIGN.md §9), apart from the API: each constant with the reason it has
// its value and the `bmmc bench` command that reproduces the measurement behind it (results in bench/results/,
// discussion in BENCHMARKS.md). The engines and planners read them from here; their headers say what, not how much.
#pragma once

#include <cstddef>

namespace bmmc {

/// Pieces = 0 takes the fewest pieces whose scratch fits 1/kPieceScratchDivisor of a rank's array: fewer, larger
/// pieces are faster (every exchange group has a fixed cost), and 1/8 keeps the scratch small beside the array.
/// Reproduce: bmmc bench --gpus 2 --spec random --n 32 -b 4   (the pieces and exchange rows)
inline constexpr int kPieceScratchDivisor = 8;

/// Auto takes the copy engines in pieces instead of push + finish only where each rank sends to at most
/// 2^kAutoPiecesMaxK other ranks: with several destinations the copy engines were slower than push + finish on
/// four H200s. Reproduce: bmmc bench --gpus 4 --spec random --n 33 -b 4
inline constexpr int kAutoPiecesMaxK = 1;

/// In place, the staged path's chunks hold at most this many bytes (2 or 4 of them staged per device): large
/// enough that a chunk's copies run at link speed, small enough that the staging stays a few GiB.
/// Reproduce: bmmc bench --gpus 2 --in-place --spec swap:0,30 --n 31 -b 8
inline constexpr std::size_t kMaxStagingChunkBytes = std::size_t{1} << 30;

/// ... and at least 2^kMinStagingChunkBits elements: smaller chunks leave the copy engines idle between launches,
/// and the three passes of the rank-swap plan run instead.
/// Reproduce: bmmc bench --devices 0,0 --in-place --spec swap:0,12 --n 13 -b 8
inline constexpr int kMinStagingChunkBits = 10;

/// The NCCL exchange alternates its groups between this many communicators by default: two overlap one group's
/// drain with the next one's start but their kernels take SMs from the packs and unpacks — faster for some maps,
/// slower for others on two H200s, so one.
/// Reproduce: bmmc_nccl_bench random-bmmc:1 33 8 5   (rows nccl-engine and nccl-engine-2-comms)
inline constexpr int kDefaultExchangeComms = 1;

}  // namespace bmmc
