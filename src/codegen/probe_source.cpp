// The DRAM probe of a tile pass (see probe_source.hpp).
#include "bmmc/codegen/probe_source.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "tile_emit.hpp"

namespace bmmc {

using namespace codegen;

KernelSource generate_access_probe(const TilePass& p, const CodegenOptions& opt) {
  const auto [idx, sfx] = index_type(p.n());
  if (p.blocks() > 0x7fffffffull) throw std::invalid_argument("codegen: more than 2^31-1 blocks; n is too large");
  const int s = p.segment_bits(), wb = p.warp_bits, k = p.vector_bits;
  KernelSource ks;
  ks.kernel_name = "bmmc_probe";
  ks.block = static_cast<unsigned>(p.threads_per_block());
  ks.grid = p.blocks();
  std::string o;
  o += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): DRAM probe of a coset tile pass — its reads\n";
  o += "// and writes without the tile (warp row i read goes to warp row i written; NOT the permutation)\n";
  o += matrix_comment(p.bmmc);
  o += fmt::format("// launch: grid {} blocks x {} threads, {} rows per warp of 2^{} elements, no shared memory\n", ks.grid,
                   ks.block, p.iters(), s);
  o += launch_order_comment(p);
  o += fmt::format("typedef {} vec_t;\n", vector_type(p.vector_bytes()));
  o += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_probe(const vec_t* __restrict__ in, "
                   "vec_t* __restrict__ out) {{\n",
                   ks.block);
  o += emit_lane_warp();
  o += emit_block_index(p, "b");
  o += emit_origin(p, "b", "x0", "z");
  o += emit_phase1_loads(p, opt, "in", "x0", "a");
  o += emit_write_row_origin(p, "z", "ry");
  for (int i = 0; i < p.iters(); ++i) {
    const std::uint64_t offset = xor_of_columns(p.write_rows, static_cast<std::uint64_t>(i) << wb);
    o += fmt::format("  out[{}] = a{};\n", vector_index("ry", offset, sfx, k), i);
  }
  o += "}\n";
  ks.source = std::move(o);
  return ks;
}

}  // namespace bmmc
