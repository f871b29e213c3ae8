// BMMC_HOST_DEVICE: marks a small header-only function that both host code and CUDA device code call, so a
// formula the GPU kernels need (e.g. plan.hpp's block_origin) is written once. Under nvcc (__CUDACC__) it is
// `__host__ __device__`; for every other compiler it is empty. It needs no CUDA header, so the layers below
// cuda/ (core, plan, codegen, cpu) may use it and still build without a toolkit.
#pragma once

#ifdef __CUDACC__
#define BMMC_HOST_DEVICE __host__ __device__
#else
#define BMMC_HOST_DEVICE
#endif
