// The public GPU API: permute device arrays by a BMMC, out[A·x ⊕ c] = in[x], at memory-copy speed.
//
// Two styles, as in CUB and cuTT:
//  - `Permuter`: plan and JIT-compile once for the current device, then run many times on any stream
//    (device pointers, no hidden device-wide synchronisation; a two-pass plan takes a temporary buffer or
//    allocates one stream-ordered).
//  - `permute(...)`: one call; plans and kernels are cached per (BMMC, element size, options, device),
//    so repeated calls cost a hash lookup plus the launch.
// Pointers are validated before any launch: null, overlapping or unaligned pointers, host pointers and
// unsupported element sizes throw std::invalid_argument; CUDA failures throw CudaError and NVRTC
// failures NvrtcError (with the log, options and source).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/core/bmmc.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {

struct PermuteOptions {
  PlanOptions plan;             ///< variant, elements per thread, threads, vector width, swizzle
  bool jit = true;              ///< false: the precompiled table-driven kernels (generic_kernel.hpp)
  CodegenOptions codegen;       ///< JIT code generation options
  KernelCache* cache = nullptr; ///< nullptr: default_kernel_cache()
};

class Permuter {
 public:
  /// Plans for the current device and, with JIT, compiles (or fetches from the cache) every kernel.
  Permuter(const Bmmc& bmmc, int elem_bytes, const PermuteOptions& options = {});

  /// Enqueues the permutation on `stream`. `temp` (temp_bytes() bytes of device memory, not overlapping
  /// in/out) is used by two-pass plans; when null they allocate it stream-ordered (cudaMallocAsync).
  void operator()(const void* in, void* out, cudaStream_t stream = nullptr, void* temp = nullptr) const;

  const Plan& plan() const noexcept { return plan_; }
  std::size_t temp_bytes() const noexcept;
  bool jit() const noexcept { return !kernels_.empty(); }
  /// The JIT sources (empty for the generic path).
  const std::vector<KernelSource>& sources() const noexcept { return sources_; }

 private:
  Plan plan_;
  std::vector<KernelSource> sources_;
  std::vector<Kernel> kernels_;
};

/// One-shot permutation backed by an in-memory cache of Permuters (thread-safe).
void permute(const Bmmc& bmmc, const void* in, void* out, int elem_bytes, cudaStream_t stream = nullptr,
             const PermuteOptions& options = {});
/// Same, with the permutation given in the spec language (DESIGN.md §2) and n.
void permute(std::string_view spec, const void* in, void* out, int n, int elem_bytes, cudaStream_t stream = nullptr,
             const PermuteOptions& options = {});

/// Validates device buffers for a permutation of 2^n elements: everything check_buffers() checks, plus
/// that both pointers are device (or managed) memory and aligned to `alignment` bytes. Public so that code
/// launching its own kernels on a Plan (generate_cuda + launch) can validate buffers the same way.
void check_device_buffers(const void* in, const void* out, int n, int elem_bytes, std::size_t alignment);

}  // namespace bmmc
