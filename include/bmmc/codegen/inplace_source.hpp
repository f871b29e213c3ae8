// Code generation for in-place passes (plan/inplace_plan.hpp): one kernel `bmmc_inplace(T* data)` per pass.
//
// An involution pass's kernel walks `cosets_per_block` consecutive block indices per CUDA block. For each it
// computes the partner p = partner(b); if p < b the partner moves both cosets, a pointwise-fixed or unmasked
// coset is skipped, and otherwise it loads its coset (and the partner's) exactly as phase 1 of the tile kernel
// does, synchronises, and writes each tile to its image coset as phase 2 does. Every decision is uniform over
// the block, so the barriers are too. A naive (or direct) involution pass has one thread per vector of
// 2^vector_bits elements that swaps x and f(x) when f(x) > x; each thread takes `chunks_per_thread` steps a grid
// apart of `vectors_per_step` vectors each, so that warps whose vectors stay cost a test, not a block launch.
#pragma once

#include <vector>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/plan/inplace_plan.hpp"

namespace bmmc {

/// Consecutive coset indices one CUDA block walks: blocks whose cosets do not move return after a few
/// instructions, so for maps that leave most cosets in place (a swap of two high bits moves half the array)
/// fewer, longer-lived blocks waste less launch work. Chosen from the pass: 1 where every coset moves, else up
/// to 64 while at least 2048 CUDA blocks remain.
int cosets_per_block(const InvolutionPass& p);

/// Steps one thread of a naive/direct pass takes, gridDim.x steps apart (up to 4 while at least 2048 CUDA blocks
/// remain), so that warps whose vectors stay cost a test rather than a block launch.
int chunks_per_thread(const NaiveInvolutionPass& p);
/// Vectors one thread of a naive/direct pass moves per step (2), all loaded before any is stored; a block's step
/// covers 2 · blockDim consecutive vectors. src/codegen/tuning.hpp holds these numbers and their measurements.
int vectors_per_step(const NaiveInvolutionPass& p);

KernelSource generate_cuda(const InPlacePass& pass, const CodegenOptions& options = {});
std::vector<KernelSource> generate_cuda(const InPlacePlan& plan, const CodegenOptions& options = {});

}  // namespace bmmc
