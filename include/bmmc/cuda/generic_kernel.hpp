// The precompiled, table-driven kernels: the same plans as the JIT path, with the plan's tables passed
// as a kernel argument instead of folded into the code.
//
// They serve when JIT is disabled (GpuOptions::jit = false) or unavailable, for one-element lane
// accesses (vector_bits = 0) and every element size. Being generic, they spend a few more instructions
// per element (loops over rows, table lookups); BENCHMARKS.md measures the difference.
#pragma once

#include <cuda_runtime_api.h>

#include "bmmc/plan/inplace_plan.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc {

/// Launches one pass with the generic kernels. A TilePass must have vector_bits == 0 and at most
/// kGenericMaxRows rows. Asynchronous on `stream`.
void launch_generic(const Pass& pass, const void* in, void* out, cudaStream_t stream);

inline constexpr int kGenericMaxRows = 16;

/// The precompiled in-place kernel: one thread per index swaps x and f(x) when f(x) > x. It serves every
/// in-place pass when JIT is off (the CUDA in-place permuter then plans naive passes only).
void launch_generic_inplace(const NaiveInvolutionPass& pass, void* data, cudaStream_t stream);

}  // namespace bmmc
