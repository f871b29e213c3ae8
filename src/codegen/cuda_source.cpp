// Plan → CUDA source (see cuda_source.hpp). Every helper returns text; nothing here knows CUDA APIs. The tile
// kernel's pieces live in tile_emit.cpp, shared with the in-place kernel (inplace_source.cpp).
#include "bmmc/codegen/cuda_source.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "tile_emit.hpp"

namespace bmmc {

namespace {

using namespace codegen;

KernelSource generate_naive(const NaivePass& p, const CodegenOptions&) {
  const int n = p.n();
  const auto [idx, sfx] = index_type(n);
  KernelSource k;
  k.block = static_cast<unsigned>(p.threads_per_block);
  k.grid = p.blocks();
  const std::uint64_t total = std::uint64_t{1} << n;
  std::string s;
  s += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): naive, one element per thread\n";
  s += matrix_comment(p.bmmc);
  s += fmt::format("// elements: {} bytes; launch: grid {} blocks x {} threads, no shared memory\n", p.elem_bytes,
                   k.grid, k.block);
  s += fmt::format("typedef {} elem_t;\n", vector_type(p.elem_bytes));
  s += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_kernel(const elem_t* __restrict__ in, "
                   "elem_t* __restrict__ out) {{\n",
                   k.block);
  s += fmt::format("  const {} x = ({})blockIdx.x * {}{} + threadIdx.x;\n", idx, idx, k.block, sfx);
  if (total % k.block) s += fmt::format("  if (x >= {}{}) return;\n", total, sfx);
  s += fmt::format("  {} y = {}{};\n", idx, hex(p.bmmc.complement()), sfx);
  s += matvec("y", "x", p.bmmc.matrix().col_list(), idx);
  s += "  out[y] = in[x];\n}\n";
  k.source = std::move(s);
  return k;
}

KernelSource generate_tile(const TilePass& p, const CodegenOptions& opt) {
  if (p.blocks() > 0x7fffffffull) throw std::invalid_argument("codegen: more than 2^31-1 blocks; n is too large");
  KernelSource ks;
  ks.block = static_cast<unsigned>(p.threads_per_block());
  ks.grid = p.blocks();
  ks.shared_bytes = p.shared_bytes();

  std::string o;
  o += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): coset tile (docs/DESIGN.md §4)\n";
  o += matrix_comment(p.bmmc);
  o += fmt::format("// elements: {} bytes; each lane moves 2^{} element(s) = {} bytes per access, a warp 2^{} consecutive elements\n",
                   p.elem_bytes, p.vector_bits, p.vector_bytes(), p.segment_bits());
  o += fmt::format("// tile V': {} segment bits + {} rows (q = {} from A, {} iters rows); swizzle {}{}\n", p.segment_bits(),
                   p.row_bits, p.q, p.row_bits - p.q, p.swizzle ? "xor" : "off",
                   p.packed_bytes ? "; 1-byte elements four to a shared word (byte addresses)" : "");
  o += fmt::format("// launch: grid {} blocks x {} threads ({} rows per warp, {} elements per thread), dynamic shared {} bytes\n",
                   ks.grid, ks.block, p.iters(), p.elems_per_thread(), ks.shared_bytes);
  o += launch_order_comment(p);
  o += fmt::format("typedef {} vec_t;\n", vector_type(p.vector_bytes()));
  o += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_kernel(const vec_t* __restrict__ in, "
                   "vec_t* __restrict__ out) {{\n",
                   ks.block);
  o += emit_tile_body(p, opt, "", "x0");
  o += "}\n";
  ks.source = std::move(o);
  return ks;
}

}  // namespace

KernelSource generate_cuda(const Pass& pass, const CodegenOptions& options) {
  return std::visit(
      [&](const auto& p) {
        if constexpr (std::is_same_v<std::decay_t<decltype(p)>, NaivePass>)
          return generate_naive(p, options);
        else
          return generate_tile(p, options);
      },
      pass);
}

std::vector<KernelSource> generate_cuda(const Plan& plan, const CodegenOptions& options) {
  std::vector<KernelSource> out;
  for (const Pass& p : plan.passes) out.push_back(generate_cuda(p, options));
  return out;
}

}  // namespace bmmc
