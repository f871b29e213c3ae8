// The CUDA source of a digit plan's kernel (bmmc/plan/digit_plan.hpp), specialised by the JIT.
//
// Every extent, stride, chunk, flip and roll is baked in as a constant, so the per-block decomposition of the tile
// index and the per-element decomposition of the tile offset become multiplications by the compiler; the kernel
// executes exactly the formulas of digit_plan.hpp (read phase in input order into shared memory in output
// order, write phase in output order), with edge tiles predicated. 32-bit offsets inside a tile, 64-bit bases.
#pragma once

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/plan/digit_plan.hpp"

namespace bmmc {

KernelSource generate_digit_cuda(const DigitPlan& plan, const CodegenOptions& options = {});

}  // namespace bmmc
