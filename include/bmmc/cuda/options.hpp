// GpuOptions: everything that decides which kernels the CUDA backend runs for a permutation, as a plain
// struct with no CUDA header, so that the front door (bmmc/permute.hpp) can carry it in every build.
//
// The planning part is a GpuPolicy (plan/gpu_policy.hpp); the rest chooses between JIT-specialised and
// precompiled table-driven kernels, sets code generation switches, picks the kernel cache and the device.
// Equality is defaulted: the front door's cache keys compare every field, so a new field is always part of
// the key.
#pragma once

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/plan/gpu_policy.hpp"

namespace bmmc {

class KernelCache;  // bmmc/cuda/kernel_cache.hpp

struct GpuOptions {
  GpuPolicy policy;              ///< variant, elements per thread, threads, vector width, swizzle
  bool jit = true;               ///< false: the precompiled table-driven kernels (generic_kernel.hpp)
  CodegenOptions codegen;        ///< JIT code generation options
  KernelCache* cache = nullptr;  ///< nullptr: default_kernel_cache()
  int device = -1;               ///< -1: the calling thread's current device; else this ordinal (made current
                                 ///< for the call and restored after)

  friend bool operator==(const GpuOptions&, const GpuOptions&) = default;
};

}  // namespace bmmc
