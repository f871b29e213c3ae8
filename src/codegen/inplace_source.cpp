// In-place passes → CUDA source (see inplace_source.hpp). The tile phases are the out-of-place kernel's
// (tile_emit.cpp); what is new is the walk over cosets, the partner and the two tiles.
#include "bmmc/codegen/inplace_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bmmc/core/involution.hpp"
#include "tile_emit.hpp"
#include "tuning.hpp"

namespace bmmc {

namespace {

using namespace codegen;

KernelSource generate_naive(const NaiveInvolutionPass& p) {
  const int n = p.n(), k = p.vector_bits;
  const auto [idx, sfx] = index_type(n);
  KernelSource ks;
  ks.kernel_name = "bmmc_inplace";
  ks.block = static_cast<unsigned>(p.threads_per_block);
  const int unroll = vectors_per_step(p);
  const int per = chunks_per_thread(p);
  ks.grid = p.blocks() / unroll / per;
  if (ks.grid > 0x7fffffffull) throw std::invalid_argument("codegen: more than 2^31-1 blocks; n is too large");
  const std::uint64_t vectors = std::uint64_t{1} << (n - k);
  const std::uint64_t step = std::uint64_t{ks.block} * unroll;  // vectors a block moves per step
  std::string s;
  s += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): in place, ";
  s += k > 0 ? fmt::format("direct involution: the {} elements at x = v << {} swap with those at f(x) when f(x) > x "
                           "(f carries the low {} index bits)\n",
                           1 << k, k, carried_low_bits(p.bmmc))
             : std::string("naive involution: x and f(x) swap when f(x) > x\n");
  s += matrix_comment(p.bmmc);
  if (p.mask_bits) s += fmt::format("// only indices with (x & {:#x}) == {:#x} move\n", p.mask_bits, p.mask_value);
  s += fmt::format("// elements: {} bytes, {} per vector; launch: grid {} blocks x {} threads; a step moves {} consecutive "
                   "vectors per block ({} per thread, all loads before any store); {} step(s) per block, a grid apart; "
                   "no shared memory\n",
                   p.elem_bytes, 1 << k, ks.grid, ks.block, step, unroll, per);
  s += fmt::format("typedef {} vec_t;\n", vector_type(p.elem_bytes << k));
  s += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_inplace(vec_t* __restrict__ data) {{\n", ks.block);
  s += fmt::format("  for (unsigned j = 0; j < {}u; ++j) {{\n", per);
  s += fmt::format("  const {} base = (({})j * {}{} + blockIdx.x) * {}{} + threadIdx.x;\n", idx, idx, ks.grid, sfx, step, sfx);
  s += fmt::format("  {} v[{}], w[{}];\n  bool move[{}];\n  vec_t a[{}], b[{}];\n", idx, unroll, unroll, unroll, unroll, unroll);
  s += fmt::format("#pragma unroll\n  for (int u = 0; u < {}; ++u) {{\n", unroll);
  s += fmt::format("    v[u] = base + ({})u * {}{};\n", idx, ks.block, sfx);
  s += k > 0 ? fmt::format("    const {} x = v[u] << {};\n", idx, k) : fmt::format("    const {} x = v[u];\n", idx);
  s += fmt::format("    {} y = {}{};\n", idx, hex(p.bmmc.complement()), sfx);
  s += matvec("y", "x", p.bmmc.matrix().col_list(), idx, "    ");
  std::string cond = "y > x";  // f(x) < x: the thread of f(x) swaps; f(x) = x: fixed
  if (vectors % step) cond = fmt::format("v[u] < {}{} && ", vectors, sfx) + cond;
  if (p.mask_bits) cond += fmt::format(" && (x & {}{}) == {}{}", hex(p.mask_bits), sfx, hex(p.mask_value), sfx);
  s += fmt::format("    move[u] = {};\n", cond);
  s += k > 0 ? fmt::format("    w[u] = y >> {};\n", k) : "    w[u] = y;\n";
  s += "  }\n";
  s += fmt::format("#pragma unroll\n  for (int u = 0; u < {}; ++u)\n    if (move[u]) {{ a[u] = data[v[u]]; b[u] = data[w[u]]; }}\n", unroll);
  s += fmt::format("#pragma unroll\n  for (int u = 0; u < {}; ++u)\n    if (move[u]) {{ data[v[u]] = b[u]; data[w[u]] = a[u]; }}\n", unroll);
  s += "  }\n}\n";
  ks.source = std::move(s);
  return ks;
}

KernelSource generate_involution(const InvolutionPass& p, const CodegenOptions& opt) {
  const TilePass& t = p.tile;
  const auto [idx, sfx] = index_type(t.n());
  const int cpb = cosets_per_block(p);
  if (t.blocks() / cpb > 0x7fffffffull) throw std::invalid_argument("codegen: more than 2^31-1 blocks; n is too large");
  KernelSource ks;
  ks.kernel_name = "bmmc_inplace";
  ks.block = static_cast<unsigned>(t.threads_per_block());
  ks.grid = t.blocks() / cpb;
  ks.shared_bytes = p.shared_bytes();
  const std::uint64_t second = std::uint64_t{t.plane_words()} * t.planes();  // word offset of the partner's tile

  std::string o;
  o += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): in place, involution on coset pairs (docs/DESIGN.md §8)\n";
  o += matrix_comment(t.bmmc);
  o += fmt::format("// elements: {} bytes; each lane moves 2^{} element(s) = {} bytes per access, a warp 2^{} consecutive elements\n",
                   t.elem_bytes, t.vector_bits, t.vector_bytes(), t.segment_bits());
  o += fmt::format("// tile V' (A·V' = V'): {} segment bits + {} rows; {} by A; swizzle {}\n", t.segment_bits(), t.row_bits,
                   p.tile_fixed ? "fixed pointwise" : "moved", t.swizzle ? "xor" : "off");
  if (p.mask_bits) o += fmt::format("// only cosets with (x0 & {:#x}) == {:#x} move\n", p.mask_bits, p.mask_value);
  o += fmt::format("// launch: grid {} blocks x {} threads, {} coset(s) per block of {} blocks' worth, dynamic shared {} bytes (two tiles)\n",
                   ks.grid, ks.block, cpb, t.blocks(), ks.shared_bytes);
  o += fmt::format("typedef {} vec_t;\n", vector_type(t.vector_bytes()));
  o += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_inplace(vec_t* __restrict__ data) {{\n", ks.block);
  o += "  extern __shared__ unsigned int tile[];\n";
  o += emit_lane_warp();
  const char* skip = cpb > 1 ? "continue" : "return";
  if (cpb > 1) {
    o += fmt::format("  for (unsigned j = 0; j < {}u; ++j) {{\n", cpb);
    o += fmt::format("  const {} b = ({})blockIdx.x * {}{} + j;\n", idx, idx, cpb, sfx);
  } else {
    o += fmt::format("  const {} b = blockIdx.x;\n", idx);
  }
  o += "  // the partner coset f(x0 ^ V') = x0' ^ V': affine in b, an involution on block indices\n";
  o += fmt::format("  {} pb = {}{};\n", idx, hex(p.partner_base), sfx);
  o += matvec("pb", "b", p.partner_cols, idx);
  o += fmt::format("  if (pb < b) {};  // the partner moves both cosets\n", skip);
  o += emit_origin(t, "b", "x0", "z");
  if (p.mask_bits)
    o += fmt::format("  if ((x0 & {}{}) != {}{}) {};  // masked out\n", hex(p.mask_bits), sfx, hex(p.mask_value), sfx, skip);
  if (p.tile_fixed) o += fmt::format("  if (pb == b && z == x0) {};  // f fixes this coset pointwise\n", skip);
  o += emit_origin(t, "pb", "px0", "pz");
  o += emit_phase1_loads(t, opt, "data", "x0", "a");
  o += "  if (pb != b) {\n";
  o += emit_phase1_loads(t, opt, "data", "px0", "p");
  o += emit_phase1_stores(t, "a", "");
  o += emit_phase1_stores(t, "p", fmt::format("{}u", second));
  o += "  } else {\n";
  o += emit_phase1_stores(t, "a", "");
  o += "  }\n";
  o += "  __syncthreads();  // both cosets are read before either is written\n";
  o += emit_phase2(t, opt, "data", "z", "", "");
  o += "  if (pb != b) {\n";
  o += emit_phase2(t, opt, "data", "pz", fmt::format("{}u", second), "p");
  o += "  }\n";
  if (cpb > 1) o += "  __syncthreads();  // the tiles are free for the next coset\n  }\n";
  o += "}\n";
  ks.source = std::move(o);
  return ks;
}

}  // namespace

int cosets_per_block(const InvolutionPass& p) {
  // A tile that A fixes pointwise means some cosets may not move at all (bit swaps among block bits, masks);
  // there a CUDA block walks several consecutive cosets so that the ones that return early cost little, while
  // keeping enough CUDA blocks (tuning.hpp). Otherwise every coset moves.
  using namespace codegen_tuning;
  if (!p.tile_fixed && !p.mask_bits) return 1;
  const std::uint64_t by_size = std::max<std::uint64_t>(1, p.tile.blocks() / kInPlaceMinBlocks);
  return static_cast<int>(std::min<std::uint64_t>(
      {std::uint64_t{kInPlaceMaxCosetsPerBlock}, by_size, p.tile.blocks()}));
}

// The naive involution pass's geometry: tuning.hpp gives the values and the measurements behind them.
int vectors_per_step(const NaiveInvolutionPass& p) {
  return static_cast<int>(std::min<std::uint64_t>(codegen_tuning::kNaiveVectorsPerStep, p.blocks()));
}

int chunks_per_thread(const NaiveInvolutionPass& p) {
  using namespace codegen_tuning;
  const std::uint64_t steps = p.blocks() / vectors_per_step(p);
  return static_cast<int>(std::min<std::uint64_t>(
      {std::uint64_t{kNaiveMaxStepsPerThread}, std::max<std::uint64_t>(1, steps / kNaiveMinBlocks), steps}));
}

KernelSource generate_cuda(const InPlacePass& pass, const CodegenOptions& options) {
  if (const auto* t = std::get_if<InvolutionPass>(&pass)) return generate_involution(*t, options);
  return generate_naive(std::get<NaiveInvolutionPass>(pass));
}

std::vector<KernelSource> generate_cuda(const InPlacePlan& plan, const CodegenOptions& options) {
  std::vector<KernelSource> out;
  for (const InPlacePass& p : plan.passes) out.push_back(generate_cuda(p, options));
  return out;
}

}  // namespace bmmc
