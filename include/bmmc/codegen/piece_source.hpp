// Code generation for the pipelined exchange's local passes (bmmc/dist/schedule.hpp, docs/DESIGN.md §9.4): the
// one-pass tile kernel of a pre- or post-pass run over a range of launches, reading from and writing into tables
// of buffers instead of single arrays.
//
// The pack of a piece runs the pre-pass over the launches of its atoms and writes chunk t's part of the piece
// into send segment t (out.p[t] = that segment, shifted back by the piece's first offset); the unpack runs the
// post-pass over the same atoms, reading the part from sender slot j in receive segment j (in.p[j]). So a
// `bmmc_piece(const bmmc_sources in, const bmmc_targets out, block_base)` kernel reads input index x from
// in.p[x >> in_split][x mod 2^in_split] and writes output index y to out.p[y >> out_split][y mod 2^out_split];
// launch i of the range runs block M·(block_base + i) under the pass's launch order M (dist/piece_pass.hpp
// puts the atom on the top launch bits). Example: a pre-pass on m = 31 bits with k = 1 chunk bit: in_split = 31
// (one source, the rank's input), out_split = 30 (two targets, one per destination).
#pragma once

#include "bmmc/codegen/cuda_source.hpp"

namespace bmmc {

/// The piece kernel of a one-pass tile pass. Throws std::invalid_argument unless 0 ≤ splits ≤ n, a warp row
/// (2^s elements) fits below both splits, and the tables have at most 2^kMaxPieceTableBits entries.
KernelSource generate_piece(const TilePass& pass, int in_split, int out_split, const CodegenOptions& options = {});

/// Buffers per table: at most 2^8 (the destinations of one rank in a pipelined exchange, k ≤ 8).
inline constexpr int kMaxPieceTableBits = 8;

}  // namespace bmmc
