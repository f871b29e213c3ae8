// The pieces of a coset-tile kernel as text (internal to the code generator): the block origin, phase 1
// (read lines, store to the tile) and phase 2 (load from the tile, write lines), each emitted from a TilePass
// exactly as plan.hpp states the formulas. The out-of-place kernel (cuda_source.cpp) runs them once per block;
// the in-place kernel (inplace_source.cpp) runs them on a block's coset and its partner's, into two tiles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc::codegen {

// C type moving `bytes` bytes in one access.
const char* vector_type(int bytes);
std::string hex(std::uint64_t v);
// The header comment with the permutation's matrix.
std::string matrix_comment(const Bmmc& b);
// "acc ^= (0 - ((v >> i) & 1)) & col_i" for each non-zero column: a branch-free F2 mat-vec of v in `type`, one
// line each, `indent` first.
std::string matvec(const std::string& acc, const std::string& v, const std::vector<BitVec>& cols, const char* type,
                   const char* indent = "  ");
std::string matvec(const std::string& acc, const std::string& v, const std::vector<std::uint32_t>& cols,
                   const char* type, const char* indent = "  ");

// Index type of a pass on n bits: "unsigned int" or "unsigned long long", and its literal suffix.
struct IndexType {
  const char* type;
  const char* suffix;
};
IndexType index_type(int n);

// Vector index of a warp access: ((base ^ offset) >> k) | lane.
std::string vector_index(const std::string& base, std::uint64_t offset, const char* sfx, int k);
// Declares `ry`, the first output index of this warp's row 0 in phase 2: z with its low s bits cleared, plus the
// write rows of the warp bits.
std::string emit_write_row_origin(const TilePass& p, const std::string& z, const std::string& ry);
// Declares `x0` and `z` (block_origin of plan.hpp) for the block index expression `b`, straight-line.
std::string emit_origin(const TilePass& p, const std::string& b, const std::string& x0, const std::string& z);
// Declares the block index `b` of this launch: i = `launch_index` (blockIdx.x; plus `base`, a kernel parameter, when
// a launch runs a range of the pass's blocks), or M·i under a launch order M (TilePass::block_order).
std::string emit_block_index(const TilePass& p, const std::string& b, const std::string& base = "",
                             const std::string& launch_index = "blockIdx.x");
// "// launch order: ..." for a header comment ("" without one).
std::string launch_order_comment(const TilePass& p);
// The lane/warp preamble: `lane`, `warp` (once per kernel).
std::string emit_lane_warp();
// Phase 1 loads: vec_t <prefix>0..iters-1 from `in` at the rows of the coset with origin `x0`. With
// source_local_bits = m ≥ 0, `in` is a table of 2^(n−m) source buffers (the piece kernel): input index x comes
// from in.p[x >> m][x mod 2^m].
std::string emit_phase1_loads(const TilePass& p, const CodegenOptions& opt, const std::string& in, const std::string& x0,
                              const std::string& prefix, int source_local_bits = -1);
// Phase 1 stores of <prefix>i into the tile that starts at word `tile_base` (a C expression).
std::string emit_phase1_stores(const TilePass& p, const std::string& prefix, const std::string& tile_base);
// Phase 2: the tile at `tile_base` to `out`, for the image origin `z`. `tag` keeps local names apart. With
// dest_local_bits = m ≥ 0, `out` is a table of 2^(n−m) rank buffers (the push kernel): output index y goes to
// out.p[y >> m][y mod 2^m].
std::string emit_phase2(const TilePass& p, const CodegenOptions& opt, const std::string& out, const std::string& z,
                        const std::string& tile_base, const std::string& tag, int dest_local_bits = -1);
// The one-pass tile kernel's body, shared by the plain, piece and push kernels: the dynamic shared tile, the
// lane/warp preamble, the block index `b` (launch base `base`, as emit_block_index), its origin x0/z, phase 1
// (loads of `in` at `in_index`, a C expression of x0, from a table when source_local_bits ≥ 0; stores into the
// tile), the barrier and phase 2 into `out` (a table when dest_local_bits ≥ 0). The caller closes the kernel.
std::string emit_tile_body(const TilePass& p, const CodegenOptions& opt, const std::string& base,
                           const std::string& in_index, int source_local_bits = -1, int dest_local_bits = -1);

}  // namespace bmmc::codegen
