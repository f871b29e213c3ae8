// The CUDA backend of a permutation: a Plan, its kernels JIT-compiled (or the precompiled generic ones),
// launched on a stream. Most callers want the front door, bmmc/permute.hpp, which picks the backend, caches
// CudaPermuters and makes the right device current; this is the layer under it.
//
// CUB style: a CudaPermuter plans and compiles once for the current device, then runs many times on any
// stream (device pointers, no hidden device-wide synchronisation; a two-pass plan takes a temporary buffer
// or allocates one stream-ordered). Pointers are validated before any launch: null, overlapping or
// unaligned pointers, host pointers and unsupported element sizes throw std::invalid_argument; CUDA
// failures throw CudaError and NVRTC failures NvrtcError (with the log, options and source).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/core/bmmc.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc {

class CudaPermuter {
 public:
  /// Plans with options.policy for the current device and, with JIT, compiles (or fetches from the cache)
  /// every kernel. options.device is the front door's business and ignored here.
  CudaPermuter(const Bmmc& bmmc, int elem_bytes, const GpuOptions& options = {});
  /// Runs `plan` as given (its passes must fit the current device: threads and shared memory).
  explicit CudaPermuter(Plan plan, const GpuOptions& options = {});

  /// Enqueues the permutation on `stream`. `temp` (temp_bytes() bytes of device memory, not overlapping
  /// in/out) is used by two-pass plans; when null they allocate it stream-ordered (cudaMallocAsync).
  void operator()(const void* in, void* out, cudaStream_t stream = nullptr, void* temp = nullptr) const;
  /// The same for pointers the caller has already found to be device memory of the current device (sizes,
  /// overlap and alignment are still checked): saves the two cudaPointerGetAttributes queries
  /// which bmmc::permute has made already to choose the backend.
  void run_on_device_pointers(const void* in, void* out, cudaStream_t stream = nullptr, void* temp = nullptr) const;

  /// Loads every JIT kernel into the current device's context now (prepare_launch, launch.hpp), so that no call
  /// loads code: what engines that launch between collective kernels need. Only the JIT kernels: with JIT off the
  /// generic kernel still loads at its first launch.
  void prepare() const;
  const Plan& plan() const noexcept { return plan_; }
  std::size_t temp_bytes() const noexcept;
  /// The alignment in bytes that `in` and `out` need: the widest lane access of any pass.
  std::size_t alignment() const noexcept;
  bool jit() const noexcept { return !kernels_.empty(); }
  /// The JIT sources (empty for the generic path).
  const std::vector<KernelSource>& sources() const noexcept { return sources_; }

 private:
  void compile(const GpuOptions& options);

  Plan plan_;
  std::vector<KernelSource> sources_;
  std::vector<Kernel> kernels_;
};

/// Validates device buffers for a permutation of 2^n elements: everything check_buffers() checks, plus
/// that both pointers are device (or managed) memory and aligned to `alignment` bytes. Public so that code
/// launching its own kernels on a Plan (generate_cuda + launch) can validate buffers the same way.
void check_device_buffers(const void* in, const void* out, int n, int elem_bytes, std::size_t alignment);
/// Throws std::invalid_argument unless `p` is device (or managed) memory; `what` names it in the message.
void check_device_pointer(const void* p, const char* what);

}  // namespace bmmc
