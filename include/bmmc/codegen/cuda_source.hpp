// Code generation: Plan pass → the CUDA C++ source of one specialised kernel plus its launch geometry.
//
// The emitted kernel executes exactly the formulas of plan.hpp with every constant folded and every loop
// unrolled, so it reads like the paper's appendix: a comment block with the permutation, the variant and
// the launch geometry, then straight-line index arithmetic (XORs of constants). Sources are
// self-contained (no `#include`), use `extern "C" __global__ void bmmc_kernel(const T* in, T* out)`, and
// compile with NVRTC or nvcc for any sm_70+ architecture. Example: `bmmc gen bit-reverse --n 15`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bmmc/plan/plan.hpp"

namespace bmmc {

/// Version of the code generator; part of every kernel-cache key, bump on any change to emitted code.
inline constexpr const char* kCodegenVersion = "bmmc-codegen-4";

struct CodegenOptions {
  bool streaming_hints = false;  ///< load/store with __ldcs/__stcs (evict-first) instead of plain accesses

  friend bool operator==(const CodegenOptions&, const CodegenOptions&) = default;
};

struct KernelSource {
  std::string source;
  std::string kernel_name = "bmmc_kernel";
  std::uint64_t grid = 1;       ///< blocks (1-D grid)
  unsigned block = 32;          ///< threads per block
  std::uint64_t shared_bytes = 0;  ///< dynamic shared memory
};

KernelSource generate_cuda(const Pass& pass, const CodegenOptions& options = {});
/// One kernel per pass, in order.
std::vector<KernelSource> generate_cuda(const Plan& plan, const CodegenOptions& options = {});

}  // namespace bmmc
