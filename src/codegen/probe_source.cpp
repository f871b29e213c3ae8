// The DRAM probe of a tile pass (see probe_source.hpp).
#include "bmmc/codegen/probe_source.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "tile_emit.hpp"

namespace bmmc {

using namespace codegen;

KernelSource generate_access_probe(const TilePass& p, const CodegenOptions& opt, int split_bits) {
  const auto [idx, sfx] = index_type(p.n());
  const int s = p.segment_bits(), wb = p.warp_bits, k = p.vector_bits, C = split_bits;
  if (C < 0 || (1 << C) > p.iters())
    throw std::invalid_argument(fmt::format("codegen: a probe split into 2^{} blocks per tile needs at least that many "
                                            "rows per warp; the pass has {}",
                                            C, p.iters()));
  if ((p.blocks() << C) > 0x7fffffffull)
    throw std::invalid_argument("codegen: more than 2^31-1 blocks; n is too large");
  const int iters = p.iters() >> C;                   // rows per warp in one block of the split
  const int q_shift = p.row_bits - C;                 // the row index bit of q's bit 0
  KernelSource ks;
  ks.kernel_name = "bmmc_probe";
  ks.block = static_cast<unsigned>(p.threads_per_block());
  ks.grid = p.blocks() << C;
  std::string o;
  o += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): DRAM probe of a coset tile pass — its reads\n";
  o += "// and writes without the tile (warp row i read goes to warp row i written; NOT the permutation)\n";
  o += matrix_comment(p.bmmc);
  o += fmt::format("// launch: grid {} blocks x {} threads, {} rows per warp of 2^{} elements, no shared memory", ks.grid,
                   ks.block, iters, s);
  o += C ? fmt::format("; each tile split over 2^{} consecutive blocks\n", C) : "\n";
  o += launch_order_comment(p);
  o += fmt::format("typedef {} vec_t;\n", vector_type(p.vector_bytes()));
  o += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_probe(const vec_t* __restrict__ in, "
                   "vec_t* __restrict__ out) {{\n",
                   ks.block);
  o += emit_lane_warp();
  if (C == 0) {
    o += emit_block_index(p, "b");
  } else {
    // Launch i·2^C + q: the pass's launch i, rows of quarter (half, …) q. Both sides' row origins move by the
    // row columns of q's bits, which is linear in q, so the tile's own origins absorb them.
    o += fmt::format("  const unsigned q = blockIdx.x & {}u;\n", (1u << C) - 1);
    o += emit_block_index(p, "b", "", fmt::format("(blockIdx.x >> {})", C));
  }
  o += emit_origin(p, "b", "x0", "z");
  if (C) {
    std::vector<BitVec> rq(p.read_rows.begin() + q_shift, p.read_rows.end());
    std::vector<BitVec> wq(p.write_rows.begin() + q_shift, p.write_rows.end());
    o += matvec("x0", "q", rq, idx);
    o += matvec("z", "q", wq, idx);
  }
  TilePass per_block = p;  // the loads and stores of one block: the pass with 2^C fewer rows per warp
  per_block.row_bits -= C;
  o += emit_phase1_loads(per_block, opt, "in", "x0", "a");
  o += emit_write_row_origin(per_block, "z", "ry");
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t offset = xor_of_columns(p.write_rows, static_cast<std::uint64_t>(i) << wb);
    o += fmt::format("  out[{}] = a{};\n", vector_index("ry", offset, sfx, k), i);
  }
  o += "}\n";
  ks.source = std::move(o);
  return ks;
}

}  // namespace bmmc
