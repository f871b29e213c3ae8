// The DRAM probe of a tile pass: the same global reads and writes as the pass's kernel, without the tile.
//
// A one-pass kernel costs what DRAM charges for its access pattern (whole lines of 2^s elements, a coset of
// lines per block, the blocks in their launch order) plus what the tile adds (shared memory, the barrier,
// index arithmetic). The probe kernel keeps the first and drops the second: block b reads exactly the lines
// the pass's block b reads (phase 1) and stores them, unchanged and in the same registers, to exactly the
// lines the pass's block b writes (phase 2: warp row i of phase 1 goes to warp row i of phase 2). Its output
// is not the permutation — only every output vector is written once — but its time is the limit of that
// plan's access pattern on the GPU, measured beside the kernel in every `bmmc bench` run ("probe" rows). The
// gap between kernel and probe is the tile's; the gap between probe and cudaMemcpy is DRAM's.
#pragma once

#include "bmmc/codegen/cuda_source.hpp"

namespace bmmc {

/// The probe kernel `bmmc_probe(const vec_t* in, vec_t* out)` of `pass`, with the pass's launch geometry and no
/// shared memory.
KernelSource generate_access_probe(const TilePass& pass, const CodegenOptions& options = {});

}  // namespace bmmc
