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
///
/// With split_bits = C > 0 each tile's rows are shared by 2^C consecutive blocks, as a thread-block cluster of
/// 2^C blocks holding one tile in distributed shared memory would share them: launch i·2^C + q runs the pass's
/// block of launch i, rows ρ with ρ >> (row_bits − C) = q, reading and writing the same lines the whole tile
/// would. The pass need not fit one block's shared memory (the probe has none), so this measures what DRAM
/// would charge a tile of 2^16 elements (1 KiB runs of int32 on both sides) before anyone builds the kernel.
/// Example: a 2^16-element int32 tile of 1024 threads × 32 vectors split with C = 2: 4 blocks of 1024 threads
/// × 8 vectors per tile. Throws std::invalid_argument when 2^C exceeds the rows per warp.
KernelSource generate_access_probe(const TilePass& pass, const CodegenOptions& options = {}, int split_bits = 0);

}  // namespace bmmc
