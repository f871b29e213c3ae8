// Internal to the combinators layer: the tuned constants of the GPU executor's fusion cut (schedule.cpp's
// gpu_fusion_options and fused_pass_cost), apart from the API that uses them. Each constant has the reason it has
// this value, what was measured (H100 80GB HBM3; the section of docs/history/benchmarks-log.md with the full
// table) and the command that reproduces it; re-run that command on a new GPU before changing a value.
#pragma once

namespace bmmc::combinators_tuning {

// Tiles of the fused sorting-network passes: 4-byte keys take tiles of 2^kFusionTileBitsSmall keys up to
// n = kFusionSmallMaxN (two blocks per SM) and of 2^kFusionTileBitsLarge above it (one block per SM, fewer
// passes); wider keys always 2^kFusionTileBitsSmall (64 KiB for 8-byte keys). Reason: at n ≤ 24 two blocks per
// SM hide the barriers better than the larger tile's saved passes; above, the saved passes win.
// Measured: H100, 2^13 against 2^14 tiles: n = 24 1.417 against 1.489 ms, n = 26 6.904 against 6.595 ms, n = 28
// 34.76 against 30.78 ms ("The relayout: 17 passes instead of 22").
// Reproduce: bmmc sort --n N --random 1 --backend cuda --stats --reps 20 --tile-bits 13|14 --check
inline constexpr int kFusionTileBitsSmall = 13;
inline constexpr int kFusionTileBitsLarge = 14;
inline constexpr int kFusionSmallMaxN = 24;

// The runs the cut makes: 2^kFusionLineBits keys of 4 bytes, 2^kFusionLineBitsWide keys of 8 bytes — 32 bytes,
// a whole DRAM sector. Reproduce: bmmc sort --n 24 --random 1 --backend cuda --stats --check
inline constexpr int kFusionLineBits = 3;
inline constexpr int kFusionLineBitsWide = 2;

// The cost-aware cut's relative cost of a fused pass (integer units of about 1 µs of a 64 MiB pass): per
// register window (each a shared-memory round trip), and for tile runs of only 32, 64 or 128 bytes. Reason:
// among the cuts with the fewest passes, the one of least summed cost runs fastest. Measured: H100, passes with
// 32-byte runs 63–83 µs against 56–60 µs with runs of 2^6 keys or more, a fourth round trip ~6 µs; the cut
// against the greedy one: n = 22 0.288 against 0.294 ms, n = 26 6.325 against 6.579 ms, n = 24 0.3–0.8% slower
// ("Pass by pass"). Reproduce: bmmc sort --n N --random 1 --backend cuda --stats --check (against --greedy-cut)
inline constexpr int kCostPerWindow = 7;
inline constexpr int kCostRuns32 = 10;
inline constexpr int kCostRuns64 = 6;
inline constexpr int kCostRuns128 = 3;

}  // namespace bmmc::combinators_tuning
