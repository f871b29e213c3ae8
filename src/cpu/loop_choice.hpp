// Internal to the CPU backend: which phase loop runs when CpuPolicy::register_transpose is left to the
// library (std::nullopt) — the register transposes or the per-element gathers — decided per CPU by timing
// both, once per process and class of pass.
//
// Why measure. Which loop wins depends on the CPU, not only on the permutation: on the CI's AMD EPYC the
// transposes are ~2× faster than the gathers for general BMMCs at n = 26 (81% against 38–45% of memcpy),
// while on the H100 host's Intel Xeon the gathers (fast vpgather) beat them for bit-reverse (72% against
// 55%) and random-bmmc:1 (89% against 79%) (BENCHMARKS.md "CPU backend" and its Xeon subsection). A vendor
// rule would also miss microcode changes (Intel's gather mitigation slows vpgather several-fold on some
// parts). So the first pass of each class — (element size, bit permutation or general) — times both loops
// single-threaded on a fixed 256 KiB stand-in of that class (bit-reverse, or random_bmmc(n, 1); the
// default tile; plain stores), interleaved, best of five, and keeps the answer for the process: well under
// a millisecond once. The gathers must win by kGatherMargin to displace the transposes, so that noise does
// not flip a close call; when they are that close either is as good.
//
// What the stand-in measures is the loops' compute cost in cache — exactly the regime of arrays below the
// streaming threshold (8 MiB), and the cost that made the gathers lose at n = 26 on the EPYC (BENCHMARKS.md:
// compute-bound at 1.3 cycles per element). The choice is applied to streamed arrays as well. Measured
// alternatives, on the EPYC (BENCHMARKS.md "CPU small arrays"): a 1 MiB stand-in with streaming stores
// picked the gathers for bit-reverse (148 against 188 µs), the opposite of n = 26; a 16 MiB one agreed with
// n = 26 but cost 100–260 ms and flipped between runs for 8-byte maps. The choice is deterministic within a
// process (cached); two processes may differ only where the loops are within the margin.
#pragma once

#include <functional>

namespace bmmc::cpu_detail {

/// Runs the class's stand-in once through one loop (the transposes when `transpose`) and returns the time it
/// took, in any unit. Supplied by the executor, which owns the loops.
using LoopTimer = std::function<double(bool transpose)>;

/// Whether the register transposes run for passes of this class: decided on first use by timing both loops
/// through `time` (called only then), cached for the process. Thread-safe.
bool transposes_win(int elem_bytes, bool bpc, const LoopTimer& time);

}  // namespace bmmc::cpu_detail
