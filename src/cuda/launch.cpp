#include "bmmc/cuda/launch.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <tuple>

#include "bmmc/cuda/error.hpp"
#include "launch_state.hpp"

namespace bmmc {

namespace {

// "<<<(gx,gy,gz), (bx,by,bz), N B, stream 0x...>>>" — how launch errors describe the geometry.
std::string launch_geometry(dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream) {
  return fmt::format("<<<({},{},{}), ({},{},{}), {} B, stream {}>>>", grid.x, grid.y, grid.z, block.x,
                     block.y, block.z, shared_bytes, static_cast<const void*>(stream));
}

// The largest dynamic shared size already granted per (kernel, device). The attribute is per context, hence
// the device in the key; it only ever needs raising, so a smaller request after a larger one is free.
// Never destroyed: libraries may be unloaded (and call forget_launch_state) during static destruction.
struct OptIns {
  std::mutex mutex;
  std::map<std::pair<cudaKernel_t, int>, std::size_t> granted;
};
OptIns& opt_ins() {
  static OptIns* state = new OptIns;
  return *state;
}

void ensure_dynamic_shared(const Kernel& kernel, std::size_t shared_bytes, const std::string& where) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice", where);
  OptIns& state = opt_ins();
  std::lock_guard lock(state.mutex);
  std::size_t& granted = state.granted[{kernel.fn, device}];
  if (granted >= shared_bytes) return;
  // The runtime accepts a cudaKernel_t cast to const void* wherever it takes an entry function.
  check(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel.fn),
                             cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)),
        fmt::format("cudaFuncSetAttribute(MaxDynamicSharedMemorySize, {})", shared_bytes).c_str(), where);
  granted = shared_bytes;
}

}  // namespace

void detail::forget_launch_state(cudaKernel_t fn) noexcept {
  try {
    OptIns& state = opt_ins();
    std::lock_guard lock(state.mutex);
    std::erase_if(state.granted, [fn](const auto& item) { return item.first.first == fn; });
  } catch (...) {
    // Only a failing mutex could throw here; the stale entry then merely costs a failed launch later.
  }
}

void launch(const Kernel& kernel, dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
            void** args) {
  const auto where = [&] {
    return fmt::format("kernel '{}' (sm_{}) {}", kernel.name, kernel.arch,
                       launch_geometry(grid, block, shared_bytes, stream));
  };
  if (!kernel) throw CudaError(cudaErrorInvalidResourceHandle, "launch", where() + ": the kernel is not loaded");
  if (shared_bytes > kDefaultDynamicSharedLimit) ensure_dynamic_shared(kernel, shared_bytes, where());
  const cudaError_t status =
      cudaLaunchKernel(reinterpret_cast<const void*>(kernel.fn), grid, block, args, shared_bytes, stream);
  if (status != cudaSuccess) check(status, "cudaLaunchKernel", where());
  // A launch can also fail after returning (configuration checks done lazily); the last-error slot has it.
  check(cudaGetLastError(), "cudaGetLastError after cudaLaunchKernel", where());
}

void prepare_launch(const Kernel& kernel, std::size_t shared_bytes) {
  const std::string where = fmt::format("kernel '{}' (sm_{}), preparing {} B of dynamic shared memory", kernel.name,
                                        kernel.arch, shared_bytes);
  if (!kernel) throw CudaError(cudaErrorInvalidResourceHandle, "prepare_launch", where + ": the kernel is not loaded");
  cudaFuncAttributes attributes{};
  check(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel.fn)), "cudaFuncGetAttributes", where);
  if (shared_bytes > kDefaultDynamicSharedLimit) ensure_dynamic_shared(kernel, shared_bytes, where);
}

}  // namespace bmmc
