// The pipelined exchange's pack and unpack kernels of one rank (see piece_kernels.hpp).
#include "piece_kernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <variant>
#include <vector>

#include "bmmc/codegen/piece_source.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/dist/piece_pass.hpp"
#include "bmmc/plan/gpu_policy.hpp"

namespace bmmc {

PieceKernels make_piece_kernels(const DistPlan& plan, const PieceSchedule& ps, BitVec rank, int device,
                                const GpuOptions& gpu) {
  const int m = plan.local_bits, k = plan.k, eb = plan.elem_bytes;
  if (ps.pieces < 2)
    throw std::invalid_argument(
        plan.piece_bits == 0
            ? fmt::format("chunks of 2^{} elements have no piece rows to cut along", plan.chunk_bits())
            : fmt::format("{} piece: a pipeline needs at least 2 (ask for 0, the default, or more)", ps.pieces));
  if (k > kMaxPieceTableBits)
    throw std::invalid_argument(
        fmt::format("k = {} destinations per rank exceed the piece kernel's 2^{}", k, kMaxPieceTableBits));
  if (ps.atom_elems * static_cast<std::uint64_t>(eb) % 256 != 0)
    throw std::invalid_argument(fmt::format("atoms of {} elements are below 256 bytes", ps.atom_elems));
  ScopedDevice on(device);
  const GpuPolicy policy = piece_policy(gpu.policy, eb);  // a piece's tiles stay inside one atom
  const DeviceCaps caps = device_caps(device);
  const auto tile_pass_of = [&](const Bmmc& b, const std::vector<BitVec>& rows) {
    const Plan p = make_plan(b, eb, caps, policy);
    if (p.passes.size() != 1 || !std::holds_alternative<TilePass>(p.passes[0]))
      throw std::invalid_argument("the local pass is not one tile pass");
    TilePass pass = std::get<TilePass>(p.passes[0]);
    pass.block_order = piece_launch_order(pass, rows);
    return pass;
  };
  const TilePass pack_pass = tile_pass_of(plan.pre, pack_atom_rows(plan));
  const TilePass unpack_pass = tile_pass_of(post_for_rank(plan, rank), unpack_atom_rows(plan));
  PieceKernels out;
  out.pack_src = generate_piece(pack_pass, m, m - k, gpu.codegen);
  out.unpack_src = generate_piece(unpack_pass, m - k, m, gpu.codegen);
  out.blocks_per_atom_pack = pack_pass.blocks() >> ps.atom_bits;
  out.blocks_per_atom_unpack = unpack_pass.blocks() >> ps.atom_bits;
  out.wide = needs_64bit_index(m);
  out.elem_bytes = eb;
  out.alignment = static_cast<std::size_t>(std::max(pack_pass.vector_bytes(), unpack_pass.vector_bytes()));
  KernelCache& cache = gpu.cache ? *gpu.cache : default_kernel_cache();
  const int arch = device_arch(device);
  out.pack = cache.get(out.pack_src.source, out.pack_src.kernel_name, arch);
  out.unpack = cache.get(out.unpack_src.source, out.unpack_src.kernel_name, arch);
  prepare_launch(out.pack, out.pack_src.shared_bytes);  // no lazy load between collectives (launch.hpp)
  prepare_launch(out.unpack, out.unpack_src.shared_bytes);
  return out;
}

namespace {

// The atoms of piece i as one range of launches: blocks [a0·per_atom, a1·per_atom) of the renumbered pass.
void launch_atoms(const Kernel& kernel, const KernelSource& src, bool wide, std::uint64_t per_atom,
                  const PieceSchedule& ps, int i, void* sources, void* targets, cudaStream_t stream) {
  const std::uint64_t a0 = ps.bounds[i] / ps.atom_elems, a1 = ps.bounds[i + 1] / ps.atom_elems;
  std::uint64_t first64 = a0 * per_atom;
  unsigned first32 = static_cast<unsigned>(first64);
  void* first = wide ? static_cast<void*>(&first64) : static_cast<void*>(&first32);
  void* args[] = {sources, targets, first};
  launch(kernel, dim3(static_cast<unsigned>((a1 - a0) * per_atom)), dim3(src.block), src.shared_bytes, stream, args);
}

}  // namespace

// The tables point at each segment shifted back by the piece's first offset lo: the kernel adds the element's own
// offset within its chunk, which starts at lo.
void launch_pack(const PieceKernels& k, const PieceSchedule& ps, const PieceLayout& at, int i, const void* in,
                 void* scratch, cudaStream_t stream) {
  const std::size_t eb = static_cast<std::size_t>(k.elem_bytes);
  const std::uint64_t lo = ps.bounds[i];
  auto* base = static_cast<unsigned char*>(scratch);
  const void* sources[1] = {in};
  const std::vector<std::uint64_t>& pack_at = at.pack_at[static_cast<std::size_t>(i % ps.depth)];
  std::vector<void*> targets(pack_at.size());
  for (std::size_t t = 0; t < targets.size(); ++t) targets[t] = base + (pack_at[t] - lo) * eb;
  launch_atoms(k.pack, k.pack_src, k.wide, k.blocks_per_atom_pack, ps, i, sources, targets.data(), stream);
}

void launch_unpack(const PieceKernels& k, const PieceSchedule& ps, const PieceLayout& at, int i, const void* scratch,
                   void* out, cudaStream_t stream) {
  const std::size_t eb = static_cast<std::size_t>(k.elem_bytes);
  const std::uint64_t lo = ps.bounds[i];
  const auto* base = static_cast<const unsigned char*>(scratch);
  const std::vector<std::uint64_t>& recv_at = at.recv_at[static_cast<std::size_t>(i % ps.depth)];
  std::vector<const void*> sources(recv_at.size());
  for (std::size_t j = 0; j < sources.size(); ++j) sources[j] = base + (recv_at[j] - lo) * eb;
  void* targets[1] = {out};
  launch_atoms(k.unpack, k.unpack_src, k.wide, k.blocks_per_atom_unpack, ps, i, sources.data(), targets, stream);
}

}  // namespace bmmc
