// Internal to the CPU backend: which phase loop runs when CpuPolicy::register_transpose is left to the
// library (std::nullopt) — the register transposes or the per-element gathers — decided per CPU by timing
// both, once per process and class of pass.
//
// Why measure: which loop wins depends on the CPU, not only on the permutation (the transposes win on some
// CPUs, vpgather on others), and a vendor rule would miss microcode changes (Intel's gather mitigation slows
// vpgather several-fold on some parts). So the first pass of each class — (element size, bit permutation or
// general) — times both loops single-threaded on a fixed stand-in of that class in L2 (bit-reverse, or
// random_bmmc(n, 1); the default tile; plain stores), interleaved, best of a few rounds, and keeps the answer
// for the process. The gathers must win by a margin to displace the transposes, so that noise does not flip a
// close call; when they are that close either is as good. The stand-in measures the loops' compute cost in
// cache — the regime of arrays below the streaming threshold — and the choice is applied to streamed arrays as
// well. The choice is deterministic within a process (cached); two processes may differ only where the loops
// are within the margin. tuning.hpp holds the margin, the rounds, the stand-in's size and the measurements.
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
