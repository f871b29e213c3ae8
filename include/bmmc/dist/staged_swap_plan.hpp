// In place across ranks in chunks (docs/DESIGN.md §9.6): a BMMC f of an array split over G = 2^g ranks that
// fixes the top local bits runs chunk by chunk through the push plan of the smaller map f_c, each chunk pushed
// into a bounded staging buffer and finished back into its own place. Plain data from a pure function;
// simulate.hpp runs it on the CPU, PeerSwapPermuter on GPUs.
//
// f fixes local bit b when A·e_b = e_b, row b of A is e_b and c_b = 0: then bit b of f(x) is bit b of x, so chunk
// c of every rank (the local elements whose top t bits are c, contiguous) maps onto chunk c of the ranks, and f
// restricted to a chunk is f_c, f with the t chunk bits deleted (N − t bits, the rank bits still on top). A
// chunk's push reads only its own rank's chunk and writes only staging; its finish writes the chunk back from
// staging after every rank's push — so the output may be the input (PeerPermuter::permute_in_place), and the
// array needs only two chunks of staging per rank (two chunks in flight: one pushing, one finishing).
// Worked example (m = 31, g = 1, f swaps the rank bit 31 with local bit 0, 8-byte elements, chunks of at most
// 1 GiB): local bits 30 … 1 are fixed, so t = 4 chunk bits (2^27 elements = 1 GiB per chunk, 16 chunks) and f_c
// on 28 bits swaps its rank bit 27 with bit 0 — a push + finish plan; staging 2 GiB per rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/dist/tuning.hpp"

namespace bmmc {

struct StagedSwapPlan {
  Bmmc bmmc;            ///< f on N = local_bits + rank_bits bits
  int rank_bits = 0;
  int local_bits = 0;
  int elem_bytes = 4;
  int chunk_bits = 0;   ///< t ≥ 1: the top t local bits, which f fixes; chunk c = local elements c·2^(m−t) …
  Bmmc chunk_map;       ///< f_c: f without the chunk bits, on N − t bits (local m − t, then the rank bits)

  int n() const { return bmmc.n(); }
  std::uint64_t ranks() const { return std::uint64_t{1} << rank_bits; }
  std::uint64_t chunks() const { return std::uint64_t{1} << chunk_bits; }
  std::uint64_t chunk_elems() const { return std::uint64_t{1} << (local_bits - chunk_bits); }
  std::size_t chunk_bytes() const { return static_cast<std::size_t>(chunk_elems()) * static_cast<std::size_t>(elem_bytes); }

  friend bool operator==(const StagedSwapPlan&, const StagedSwapPlan&) = default;
};

/// The number of top local bits f fixes (0 … m).
int fixed_top_local_bits(const Bmmc& f, int rank_bits);

/// The staged plan with the fewest chunk bits whose chunks hold at most max_chunk_bytes (at least one chunk bit,
/// at most fixed_top_local_bits, and chunks of at least 2^min_chunk_bits elements); nullopt when f fixes no top
/// local bit or the chunks would be smaller than that. Throws std::invalid_argument for a bad geometry (as every
/// distributed planner).
std::optional<StagedSwapPlan> make_staged_swap_plan(const Bmmc& f, int rank_bits, int elem_bytes,
                                                    std::size_t max_chunk_bytes = kMaxStagingChunkBytes,
                                                    int min_chunk_bits = kMinStagingChunkBits);

std::string describe(const StagedSwapPlan& plan);

}  // namespace bmmc
