// The push kernel (see push_source.hpp): the tile kernel's pieces (tile_emit.cpp) with a rank-local input and a
// table of destination buffers.
#include "bmmc/codegen/push_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bmmc/plan/block_order.hpp"
#include "tile_emit.hpp"

namespace bmmc {

using namespace codegen;

void check_push_pass(const TilePass& p, int m) {
  const int n = p.n(), g = n - m;
  if (m < 0 || g < 0) throw std::invalid_argument(fmt::format("push pass: {} local bits of an {}-bit pass", m, n));
  if (p.segment_bits() > m)
    throw std::invalid_argument(fmt::format(
        "push pass: warp rows of 2^{} elements do not fit ranks of 2^{} elements", p.segment_bits(), m));
  for (BitVec r : p.read_rows)
    if (r >> m)
      throw std::invalid_argument(fmt::format(
          "push pass: the tile reads along {:#x}, outside the {} local bits; the permutation does not keep "
          "output runs on one source rank (plan it with make_push_plan)",
          r, m));
  const int b = static_cast<int>(p.block_positions.size());
  for (int i = 0; i < g; ++i)
    if (b < g || p.block_positions[b - g + i] != m + i)
      throw std::invalid_argument("push pass: the rank bits are not the top block bits");
  if (!p.block_order.empty()) {
    // The launch order may re-number blocks within a rank, never move them to another rank.
    bool ok = static_cast<int>(p.block_order.size()) == b && is_block_order(p.block_order, b);
    for (int i = 0; ok && i < b; ++i)
      ok = i >= b - g ? p.block_order[i] == std::uint64_t{1} << i : (p.block_order[i] >> (b - g)) == 0;
    if (!ok)
      throw std::invalid_argument(
          "push pass: the launch order mixes the rank bits with the others (use push_launch_order)");
  }
  if ((p.blocks() >> g) > 0x7fffffffull)
    throw std::invalid_argument("push pass: more than 2^31-1 blocks per rank; n is too large");
}

KernelSource generate_push(const TilePass& p, int m, const CodegenOptions& opt) {
  check_push_pass(p, m);
  const int n = p.n(), g = n - m;
  const auto [idx, sfx] = index_type(n);
  KernelSource ks;
  ks.kernel_name = "bmmc_push";
  ks.block = static_cast<unsigned>(p.threads_per_block());
  ks.grid = p.blocks() >> g;
  ks.shared_bytes = p.shared_bytes();

  std::string o;
  o += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): push tile over ranks (docs/DESIGN.md §9.5)\n";
  o += matrix_comment(p.bmmc);
  o += launch_order_comment(p);
  o += fmt::format("// {} ranks of 2^{} elements of {} bytes; rank r runs blocks [r·{}, (r+1)·{}) over its own input (which\n"
                   "// holds x mod 2^{}) and writes each warp row of 2^{} output elements into out.p[y >> {}]\n",
                   1ull << g, m, p.elem_bytes, ks.grid, ks.grid, m, p.segment_bits(), m);
  o += fmt::format("// tile V': {} segment bits + {} rows; launch per rank: grid {} blocks x {} threads, dynamic shared {} bytes\n",
                   p.segment_bits(), p.row_bits, ks.grid, ks.block, ks.shared_bytes);
  o += fmt::format("typedef {} vec_t;\n", vector_type(p.vector_bytes()));
  o += fmt::format("struct bmmc_targets {{ vec_t* p[{}]; }};\n", 1ull << g);
  o += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_push(const vec_t* __restrict__ in, "
                   "const __grid_constant__ bmmc_targets out, {} block_base) {{\n",
                   ks.block, idx);
  // Under push_launch_order (dist/push_plan.hpp) the destinations cycle from launch to launch; the rank's own
  // buffer holds x mod 2^m.
  o += emit_tile_body(p, opt, "block_base", fmt::format("(x0 & {}{})", hex(low_mask(m)), sfx), -1, m);
  o += "}\n";
  ks.source = std::move(o);
  return ks;
}

KernelSource generate_rank_swap(const Bmmc& f, int m, int eb, int k, int owner_bit) {
  const int n = f.n(), g = n - m;
  if (m < 0 || g < 0 || k < 0 || k > m || (eb << k) > 16 || owner_bit < -1 || owner_bit >= n)
    throw std::invalid_argument(fmt::format(
        "rank swap kernel: {} local bits, {} vector bits of {}-byte elements, owner bit {} on {} bits", m, k, eb,
        owner_bit, n));
  const auto [idx, sfx] = index_type(n + 1);  // x >> m with m = 32 needs a 64-bit x
  const std::uint64_t vectors = std::uint64_t{1} << (m - k);
  KernelSource ks;
  ks.kernel_name = "bmmc_rank_swap";
  ks.block = 256;
  ks.grid = std::min<std::uint64_t>((vectors + 255) / 256, 65536);
  std::string o;
  o += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): in place across ranks (docs/DESIGN.md §9.6)\n";
  o += matrix_comment(f);
  const std::string owner =
      owner_bit >= 0 ? fmt::format("the thread of lo = min(x, f(x)) if bit {} of lo is 0, else the other one", owner_bit)
                     : std::string("the thread of the smaller index");
  o += fmt::format("// {} ranks of 2^{} elements of {} bytes; the vectors of 2^{} elements at x and f(x) swap, both loaded\n"
                   "// before either is stored, by {} (each pair once; fixed points stay);\n"
                   "// launch per rank: grid {} x {} threads, a grid-stride loop over the rank's {} vectors\n",
                   std::uint64_t{1} << g, m, eb, k, owner, ks.grid, ks.block, vectors);
  o += fmt::format("typedef {} vec_t;\n", vector_type(eb << k));
  o += fmt::format("struct bmmc_targets {{ vec_t* p[{}]; }};\n", std::uint64_t{1} << g);
  o += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_rank_swap(const __grid_constant__ bmmc_targets "
                   "data, {} rank_base) {{\n",
                   ks.block, idx);
  o += fmt::format("  for ({} v = ({})blockIdx.x * {}{} + threadIdx.x; v < {}{}; v += ({})gridDim.x * {}{}) {{\n", idx, idx,
                   ks.block, sfx, vectors, sfx, idx, ks.block, sfx);
  o += fmt::format("    const {} x = (rank_base | v) << {};\n", idx, k);
  o += fmt::format("    {} y = {}{};\n", idx, hex(f.complement()), sfx);
  o += matvec("y", "x", f.matrix().col_list(), idx, "    ");
  // The ownership test of rank_swap_owns (bmmc/dist/rank_swap_plan.hpp).
  if (owner_bit < 0) {
    o += "    if (y <= x) continue;  // the thread of the smaller index swaps the pair; fixed points stay\n";
  } else {
    o += "    if (y == x) continue;  // fixed points stay\n";
    o += fmt::format("    if ((x < y) == ((((x < y ? x : y) >> {}) & 1) != 0)) continue;  // the other thread owns the pair\n",
                     owner_bit);
  }
  const std::string lm = hex(low_mask(m)) + sfx;
  o += fmt::format("    vec_t* const px = data.p[x >> {}] + ((x & {}) >> {});\n", m, lm, k);
  o += fmt::format("    vec_t* const py = data.p[y >> {}] + ((y & {}) >> {});\n", m, lm, k);
  o += "    const vec_t a = *px, b = *py;\n    *px = b;\n    *py = a;\n  }\n}\n";
  ks.source = std::move(o);
  return ks;
}

}  // namespace bmmc
