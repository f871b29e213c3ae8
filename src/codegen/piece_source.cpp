// The piece kernel (see piece_source.hpp): the tile kernel's pieces (tile_emit.cpp) between tables of buffers.
#include "bmmc/codegen/piece_source.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "tile_emit.hpp"

namespace bmmc {

using namespace codegen;

KernelSource generate_piece(const TilePass& p, int in_split, int out_split, const CodegenOptions& opt) {
  const int n = p.n(), s = p.segment_bits();
  if (in_split < s || out_split < s || in_split > n || out_split > n || n - in_split > kMaxPieceTableBits ||
      n - out_split > kMaxPieceTableBits)
    throw std::invalid_argument(fmt::format(
        "piece kernel: buffers of 2^{} input and 2^{} output elements on {} bits (each must hold a warp row of 2^{} "
        "elements, at most 2^{} buffers a side)",
        in_split, out_split, n, s, kMaxPieceTableBits));
  const auto [idx, sfx] = index_type(n);
  KernelSource ks;
  ks.kernel_name = "bmmc_piece";
  ks.block = static_cast<unsigned>(p.threads_per_block());
  ks.grid = p.blocks();  // the whole pass; a launch runs a range of it
  ks.shared_bytes = p.shared_bytes();

  std::string o;
  o += "// bmmc generated kernel (" + std::string(kCodegenVersion) +
       "): one piece of a pipelined exchange's local pass (docs/DESIGN.md §9.4)\n";
  o += matrix_comment(p.bmmc);
  o += launch_order_comment(p);
  o += fmt::format("// input x from in.p[x >> {}] ({} buffers), output y to out.p[y >> {}] ({} buffers), {}-byte elements;\n",
                   in_split, 1ull << (n - in_split), out_split, 1ull << (n - out_split), p.elem_bytes);
  o += fmt::format("// tile V': {} segment bits + {} rows; a launch runs blocks block_base … of {} x {} threads, dynamic "
                   "shared {} bytes\n",
                   s, p.row_bits, ks.grid, ks.block, ks.shared_bytes);
  o += fmt::format("typedef {} vec_t;\n", vector_type(p.vector_bytes()));
  o += fmt::format("struct bmmc_sources {{ const vec_t* p[{}]; }};\n", 1ull << (n - in_split));
  o += fmt::format("struct bmmc_targets {{ vec_t* p[{}]; }};\n", 1ull << (n - out_split));
  o += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_piece(const __grid_constant__ bmmc_sources in, "
                   "const __grid_constant__ bmmc_targets out, {} block_base) {{\n",
                   ks.block, idx);
  // Under piece_launch_order an atom is one range of launches, starting at block_base.
  o += emit_tile_body(p, opt, "block_base", "x0", in_split, out_split);
  o += "}\n";
  ks.source = std::move(o);
  return ks;
}

}  // namespace bmmc
