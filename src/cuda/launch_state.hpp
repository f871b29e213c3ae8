// Internal to the CUDA runtime: the piece of launch()'s memory (launch.hpp) that the kernel cache must reset.
// launch() remembers which kernels were opted in to large dynamic shared memory; when the cache unloads the
// library holding a kernel, a later kernel may get the same handle and must not be taken as opted in.
#pragma once

#include <cuda_runtime_api.h>

namespace bmmc::detail {

/// Forgets what launch() remembered about `fn` (its shared-memory opt-ins).
void forget_launch_state(cudaKernel_t fn) noexcept;

}  // namespace bmmc::detail
