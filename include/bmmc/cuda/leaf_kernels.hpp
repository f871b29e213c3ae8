// The GPU leaf pass: one precompiled kernel per element type that applies a pair leaf (compare-swap) to every
// chunk of a lowered program's stage, in place, through the stage's layout (lower.hpp, LeafGeometry).
//
// Thread t handles one pair: its representative x is t with a zero inserted at the pivot bit, its partner
// x ⊕ d. Because the pivot is the highest bit of d, 32 consecutive threads read 32 consecutive x (coalesced)
// whenever the pivot is at bit 5 or above, and otherwise stay inside one 64-element window (the two accesses
// of a warp then cover the same two 128-byte lines). So a leaf through any BMMC layout costs one coalesced
// pass; with the identity layout (d = 1) it is the plain compare-swap of pairs (2i, 2i+1). Chunks of more
// than two elements are not implemented on the GPU yet (std::invalid_argument).
#pragma once

#include <cuda_runtime_api.h>

#include "bmmc/combinators/dtype.hpp"
#include "bmmc/combinators/lower.hpp"

namespace bmmc {

/// Launches the leaf pass on 2^g.n elements at `data` (device memory). Asynchronous on `stream`; throws
/// CudaError when the launch fails and std::invalid_argument for a leaf the GPU does not run.
void launch_leaf_pass(const LeafGeometry& g, const Leaf& leaf, void* data, DType t, cudaStream_t stream);

}  // namespace bmmc
