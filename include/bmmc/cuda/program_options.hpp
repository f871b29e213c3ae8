// GpuProgramOptions: what decides how the CUDA executor of combinator programs (cuda/program_gpu.hpp) runs a
// lowered program, as a plain struct with no CUDA header, so that the front door (bmmc/program_runner.hpp)
// can carry it in every build.
//
// The permutation passes are CudaPermuters built from `gpu`, the same GpuOptions a Permuter takes (one GPU
// options struct, one set of defaults: JIT-specialised kernels, the default kernel cache, the current device).
// The other fields choose the strategy and the fused cut (ExecOptions of schedule.hpp; unset: the GPU's own cut,
// gpu_fusion_options) and the fused kernels (codegen/fused_source.hpp).
#pragma once

#include <optional>

#include "bmmc/codegen/fused_plan.hpp"
#include "bmmc/combinators/schedule.hpp"
#include "bmmc/cuda/options.hpp"

namespace bmmc {

/// The fused kernels of the GPU executor (codegen/fused_source.hpp) and its cost-aware cut.
struct FusedKernelOptions {
  bool cost_aware_cut = true;  ///< FusionOptions::cost_aware_cut (the CPU always cuts greedily)
  FusedKernelKind fused_kernel = FusedKernelKind::Pipelined;
  int reg_bits = 5;  ///< Registers: 2^reg_bits keys per thread
  /// FusedCodegenOptions::run_bits: kernel tiles grown to runs of 2^run_bits keys (0: never); −1: runs of 64 bytes.
  int run_bits = -1;
  /// FusedCodegenOptions::fixed_orientation; unset: on, except for 8-byte integer keys (whose compare folds a
  /// runtime orientation in at no cost, so fixed layouts would only add swizzled addresses).
  std::optional<bool> fixed_orientation;
  friend bool operator==(const FusedKernelOptions&, const FusedKernelOptions&) = default;
};

/// Everything GpuProgram takes: the strategy and cut (ExecOptions), the fused kernels, and the GpuOptions of the
/// permutation passes (their kernels, and the kernel cache the fused kernels share). gpu.device is the front
/// door's business (ProgramRunner makes it current); GpuProgram itself runs on the current device.
struct GpuProgramOptions : ExecOptions, FusedKernelOptions {
  GpuOptions gpu;
  friend bool operator==(const GpuProgramOptions&, const GpuProgramOptions&) = default;
};

}  // namespace bmmc
