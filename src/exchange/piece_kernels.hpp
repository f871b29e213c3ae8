// Internal: an engine behind the distributed front door (bmmc/distributed.hpp: DistributedPermuter), not installed
// and not for callers outside the library; its own tests use it directly.
// The pipelined exchange's two kernels for one rank on one device (docs/DESIGN.md §9.4): the pack — the pre-pass
// over a piece's atoms, from the rank's input into the places of its chunks in the scratch — and the unpack — the
// post-pass over the same atoms, from the receive slots into the output — planned, renumbered so that every atom
// is one range of launches (dist/piece_pass.hpp), generated (codegen/piece_source.hpp), compiled and loaded once;
// and their launch for piece i with the tables of buffers of the scratch layout (dist/schedule.hpp PieceLayout).
// Whoever moves the chunks between the pack and the unpack — NCCL's grouped send/receive (DistPermuter) or the copy
// engines (PeerPermuter's CopyPieces engine) — the kernels and the layout are these.
//
// Example: for two ranks of 2^31 complex64, PieceSchedule ps = make_piece_schedule(plan, 0) (26 pieces),
// PieceLayout at = piece_layout(plan, ps, rank); per piece i: launch_pack(k, ps, at, i, in, scratch, stream), move
// the chunks that leave the rank to their receivers' slots, then launch_unpack(k, ps, at, i, scratch, out, stream).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/schedule.hpp"

namespace bmmc {

struct PieceKernels {
  KernelSource pack_src, unpack_src;
  Kernel pack, unpack;  ///< loaded on the device they were made for (no lazy load between collectives)
  std::uint64_t blocks_per_atom_pack = 0, blocks_per_atom_unpack = 0;
  bool wide = false;    ///< 64-bit indices (2^32 local elements or more)
  int elem_bytes = 0;
  std::size_t alignment = 1;  ///< of the input and output: the widest vector the pack reads and the unpack writes
};

/// The pack and unpack of `rank` for the pieces of `ps`, compiled for and loaded on `device` (made current for the
/// call). Throws std::invalid_argument where the pieces cannot be cut along whole tiles — fewer than 2 pieces,
/// k above the piece kernel's table, atoms under 256 bytes, a local pass that is not one tile pass — saying why.
PieceKernels make_piece_kernels(const DistPlan& plan, const PieceSchedule& ps, BitVec rank, int device,
                                const GpuOptions& gpu);

/// Enqueues the pack of piece i (ring buffer i mod depth) on `stream` (the current device must be the kernels'):
/// every chunk's elements [bounds[i], bounds[i+1]) from `in` to at.pack_at in `scratch`.
void launch_pack(const PieceKernels& k, const PieceSchedule& ps, const PieceLayout& at, int piece, const void* in,
                 void* scratch, cudaStream_t stream);
/// Enqueues the unpack of piece i: every receive slot's elements of the piece from at.recv_at in `scratch` to `out`.
void launch_unpack(const PieceKernels& k, const PieceSchedule& ps, const PieceLayout& at, int piece,
                   const void* scratch, void* out, cudaStream_t stream);

}  // namespace bmmc
