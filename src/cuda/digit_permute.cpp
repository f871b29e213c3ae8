// The CUDA runtime of digit plans (bmmc/cuda/digit_permute.hpp).
#include "bmmc/cuda/digit_permute.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bmmc/codegen/digit_source.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/plan/digit_tile_view.hpp"

namespace bmmc {

namespace {

// The widest element the plan may fold to: what the lanes the options allow (vector_bits, narrowed by the front
// door for offset pointers) can carry. The JIT and the generic kernel run the same plans.
DigitPolicy digit_policy(int elem_bytes, const GpuOptions& options) {
  DigitPolicy p;
  if (options.policy.vector_bits >= 0) {
    // The front door narrows vector_bits for offset pointers: neither the element nor a vector goes wider.
    p.max_elem_bytes = std::max(elem_bytes, std::min(16, elem_bytes << options.policy.vector_bits));
    p.max_access_bytes = p.max_elem_bytes;
  }
  if (options.policy.threads_per_block > 0) p.threads_per_block = options.policy.threads_per_block;
  return p;
}

}  // namespace

CudaDigitPermuter::CudaDigitPermuter(const DigitMap& map, int elem_bytes, const GpuOptions& options)
    : CudaDigitPermuter(plan_digits(map, elem_bytes, digit_policy(elem_bytes, options), device_caps()), options) {}

CudaDigitPermuter::CudaDigitPermuter(DigitPlan plan, const GpuOptions& options) : plan_(std::move(plan)) {
  involution_ = plan_.map.is_involution();
  if (plan_.write_cover && tile_view(plan_).roll_run_w)
    throw std::invalid_argument("a digit plan with covering write vectors on a write run with a roll: the kernel's "
                                "covering writes do not wrap (plan_digits never makes one)");
  if (!options.jit) {
    if (plan_.axes.size() > static_cast<std::size_t>(kDigitGenericMaxAxes))
      throw std::invalid_argument(fmt::format(
          "the precompiled any-shape kernel takes at most {} canonical axes; this map has {} (turn JIT on)",
          kDigitGenericMaxAxes, plan_.axes.size()));
    return;
  }
  if (plan_.axes.empty()) return;  // one element: a copy (run_on_device_pointers)
  KernelCache& cache = options.cache ? *options.cache : default_kernel_cache();
  source_ = generate_digit_cuda(plan_, options.codegen);
  kernel_ = cache.get(source_.source, source_.kernel_name, device_arch());
}

void CudaDigitPermuter::operator()(const void* in, void* out, cudaStream_t stream) const {
  const auto bytes = static_cast<std::size_t>(plan_.elements()) * static_cast<std::size_t>(plan_.elem_bytes);
  check_byte_buffers(in, out, bytes, alignment(), true);
  check_device_pointer(in, "input");
  if (out != in) check_device_pointer(out, "output");
  run_on_device_pointers(in, out, stream);
}

void CudaDigitPermuter::run_on_device_pointers(const void* in, void* out, cudaStream_t stream) const {
  const auto bytes = static_cast<std::size_t>(plan_.elements()) * static_cast<std::size_t>(plan_.elem_bytes);
  check_byte_buffers(in, out, bytes, alignment(), true);
  if (in == out) {
    if (!involution_)
      throw std::invalid_argument(fmt::format(
          "in place (in == out) needs a map that is its own inverse; {} on shape {} is not: pass a separate "
          "output array",
          plan_.map.to_string(), shape_to_string(plan_.map.shape())));
    launch_digit_inplace(plan_, out, stream);
    return;
  }
  if (plan_.axes.empty()) {  // a map of one element: nothing to tile
    check(cudaMemcpyAsync(out, in, static_cast<std::size_t>(plan_.elem_bytes), cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync (a one-element any-shape map)");
    return;
  }
  if (!kernel_) return launch_digit_generic(plan_, in, out, stream);
  void* args[] = {&in, &out};
  launch(kernel_, dim3(static_cast<unsigned>(source_.grid)), dim3(source_.block), source_.shared_bytes, stream, args);
}

}  // namespace bmmc
