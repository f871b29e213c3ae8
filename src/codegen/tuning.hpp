// Internal to the codegen layer: its tuned constants — the register budget of the fused sorting-network
// kernels (fused_plan.cpp) and the geometry of the in-place kernels (inplace_source.cpp) — apart from the code
// that uses them, each with the reason, what was measured (H100 80GB HBM3; the section of
// docs/history/benchmarks-log.md with the full table) and the command that reproduces it; re-run that command
// on a new GPU before changing a value. Times in units of a cudaMemcpy of the same bytes (× memcpy).
#pragma once

namespace bmmc::codegen_tuning {

// Registers a thread of a register-window kernel is given: kFusedRegistersPerWord per 32-bit word of the keys
// it holds, at least kFusedMinRegisters (also what a shared-memory kernel gets); the blocks per SM (the launch
// bound) follow from it. Reason: the keys, their partners and masks need about four registers per word; a
// tighter bound makes ptxas squeeze them. Measured: H100, n = 24 int32, 2^13 tiles and 32 keys a thread (ncu:
// 128 registers): a launch bound of 3 blocks per SM (85 registers) 1.868 ms, of 2 (128 registers) 1.417 ms
// ("The relayout: 17 passes instead of 22"). Reproduce: bmmc sort --n 24 --random 1 --backend cuda --stats
// --reps 20 --tile-bits 13
inline constexpr unsigned kFusedRegistersPerWord = 4;
inline constexpr unsigned kFusedMinRegisters = 64;

// An involution pass whose tile A fixes pointwise (bit swaps among block bits, masks: some cosets do not move)
// lets a CUDA block walk up to kInPlaceMaxCosetsPerBlock consecutive cosets, keeping at least
// kInPlaceMinBlocks blocks. Reason: cosets that return early then cost little. Measured: H100, swap:28,29 at
// n = 30 complex64, 4 cosets per block 0.601×, 16: 0.583×, 64: 0.578× ("In place").
// Reproduce: bmmc bench --in-place --n 30 -b 8 --spec swap:28,29
inline constexpr int kInPlaceMaxCosetsPerBlock = 64;
inline constexpr int kInPlaceMinBlocks = 2048;

// The naive involution pass: kNaiveVectorsPerStep vectors per step, up to kNaiveMaxStepsPerThread steps a
// thread while at least kNaiveMinBlocks CUDA blocks remain. Measured: H100, swap:28,29 at n = 30 int32 / complex64:
// vectors per step (64 steps a thread) 1: 0.71 / 0.74×, 2: 0.56 / 0.55×, 4: 0.73 / 0.72×, 8: 0.66 / 0.64× (why
// 4 is worse than 2 and 8 is not understood); steps a thread (2 vectors a step) 256: 0.61 / 0.58×, 64: 0.56 /
// 0.55×, 16: 0.53 / 0.54×, 8: 0.53 / 0.53×, 4: 0.52 / 0.52×; one vector, one step (2^20 blocks, three quarters
// with nothing to move) 0.94 / 0.71× ("In place"). Reproduce: bmmc bench --in-place --n 30 -b 4|8 --spec swap:28,29
inline constexpr int kNaiveVectorsPerStep = 2;
inline constexpr int kNaiveMaxStepsPerThread = 4;
inline constexpr int kNaiveMinBlocks = 2048;

}  // namespace bmmc::codegen_tuning
