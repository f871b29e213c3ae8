// The push pass made ready to launch (see push_kernel.hpp).
#include "push_kernel.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <variant>

#include "bmmc/codegen/push_source.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/plan/gpu_policy.hpp"

namespace bmmc {

namespace {

GpuPolicy push_policy(const GpuOptions& gpu) {
  GpuPolicy policy = gpu.policy;
  policy.variant = Variant::OnePass;
  policy.block_order = BlockOrder::Coordinate;  // the push pass gets its own launch order (push_launch_order)
  policy.longer_runs = RunSide::Read;           // its tiles stay on the local bits (write runs could leave them)
  policy.small_byte_lanes = false;              // plan_push sized its runs for the default lanes
  return policy;
}

}  // namespace

PushPlan plan_push(const Bmmc& global, int rank_bits, int elem_bytes, const GpuOptions& gpu) {
  return make_gpu_push_plan(global, rank_bits, elem_bytes, push_policy(gpu).vector_bits);
}

PushKernel make_push_kernel(const PushPlan& push, int m, int elem_bytes, const GpuOptions& gpu) {
  if (m < kLaneBits)
    throw std::invalid_argument(fmt::format("ranks of 2^{} elements are below one warp row", m));
  const Plan plan = make_plan(push.push, elem_bytes, device_caps(), push_policy(gpu));
  if (plan.passes.size() != 1 || !std::holds_alternative<TilePass>(plan.passes[0]))
    throw std::invalid_argument("push pass: the plan is not one tile pass");
  TilePass pass = std::get<TilePass>(plan.passes[0]);
  pass.block_order = push_launch_order(pass, m);
  check_push_pass(pass, m);
  KernelSource source = generate_push(pass, m, gpu.codegen);
  return {std::move(pass), std::move(source)};
}

void launch_push(const Kernel& kernel, const PushKernel& push, std::size_t rank, const void* in,
                 const std::vector<void*>& targets, cudaStream_t stream) {
  const std::uint64_t base64 = rank * push.source.grid;
  const unsigned base32 = static_cast<unsigned>(base64);
  void* base = needs_64bit_index(push.pass.n()) ? static_cast<void*>(const_cast<std::uint64_t*>(&base64))
                                                : static_cast<void*>(const_cast<unsigned*>(&base32));
  // The kernel takes the targets by value (a __grid_constant__ struct of 2^g pointers): the argument is the array.
  void* args[] = {const_cast<void**>(&in), const_cast<void**>(targets.data()), base};
  launch(kernel, dim3(static_cast<unsigned>(push.source.grid)), dim3(push.source.block), push.source.shared_bytes,
         stream, args);
}

}  // namespace bmmc
