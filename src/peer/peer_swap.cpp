// In place across the GPUs of one process (see peer_swap.hpp).
#include "bmmc/peer/peer_swap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "bmmc/codegen/push_source.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/inplace.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "rank_buffers.hpp"

namespace bmmc {

using namespace peer_detail;

struct PeerSwapPermuter::State {
  std::vector<int> devices;
  RankSwapPlan plan;
  KernelSource kernel;
  std::vector<Kernel> kernels;                                  // per rank
  std::vector<std::shared_ptr<CudaInPlacePermuter>> conjugate;  // per rank, when the plan has a Q
  std::size_t alignment = 1;
};

PeerSwapPermuter::PeerSwapPermuter(const Bmmc& f, int elem_bytes, std::vector<int> devices, const GpuOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  const int g = rank_bits_of_devices(devices, f.n());
  s.devices = std::move(devices);
  s.plan = make_rank_swap_plan(f, g, elem_bytes);
  if (const std::string why = peer_obstacle(s.devices); !why.empty())
    throw std::invalid_argument(fmt::format(
        "in place across GPUs needs peer access: {}; permute out of place with PeerPermuter (its copy engine needs none)",
        why));
  enable_peer_access(s.devices);
  GpuOptions gpu = options;
  gpu.device = -1;
  s.kernel = generate_rank_swap(s.plan.direct, s.plan.local_bits, elem_bytes, s.plan.vector_bits);
  KernelCache& cache = gpu.cache ? *gpu.cache : default_kernel_cache();
  for (int d : s.devices) s.kernels.push_back(cache.get(s.kernel.source, s.kernel.kernel_name, device_arch(d)));
  s.alignment = static_cast<std::size_t>(elem_bytes) << s.plan.vector_bits;
  if (s.plan.conjugated()) {
    std::map<int, std::shared_ptr<CudaInPlacePermuter>> made;
    for (int d : s.devices) {
      auto& q = made[d];
      if (!q) {
        ScopedDevice on(d);
        q = std::make_shared<CudaInPlacePermuter>(s.plan.conjugate, elem_bytes, gpu);
      }
      s.conjugate.push_back(q);
      s.alignment = std::max(s.alignment, q->alignment());
    }
  }
}

PeerSwapPermuter::~PeerSwapPermuter() = default;
PeerSwapPermuter::PeerSwapPermuter(PeerSwapPermuter&&) noexcept = default;
PeerSwapPermuter& PeerSwapPermuter::operator=(PeerSwapPermuter&&) noexcept = default;

const RankSwapPlan& PeerSwapPermuter::plan() const noexcept { return state_->plan; }
std::size_t PeerSwapPermuter::local_bytes() const noexcept {
  return array_bytes(state_->plan.local_bits, state_->plan.elem_bytes);
}
std::size_t PeerSwapPermuter::alignment() const noexcept { return state_->alignment; }
const std::string& PeerSwapPermuter::source() const noexcept { return state_->kernel.source; }

void PeerSwapPermuter::operator()(const std::vector<void*>& data, const std::vector<cudaStream_t>& streams_in) const {
  const State& s = *state_;
  const std::size_t g = s.devices.size();
  if (data.size() != g || (!streams_in.empty() && streams_in.size() != g))
    throw std::invalid_argument(fmt::format(
        "PeerSwapPermuter over {} devices: got {} data buffers and {} streams (expected {} each; streams may be empty)", g,
        data.size(), streams_in.size(), g));
  RankBufferCheck buffers(s.devices, local_bytes(), s.alignment);
  for (std::size_t r = 0; r < g; ++r) buffers.add(data[r], r, "data");
  buffers.check_disjoint();
  const std::vector<cudaStream_t> streams = rank_streams(streams_in, g);

  auto conjugate = [&] {
    for (std::size_t r = 0; r < g && s.plan.conjugated(); ++r) {
      ScopedDevice on(s.devices[r]);
      s.conjugate[r]->run_on_device_pointer(data[r], streams[r]);
    }
  };
  CallEvents events(s.devices);
  events.barrier(streams);
  conjugate();
  events.barrier(streams);  // every rank's Q is done before any thread reaches into it
  const std::uint64_t vectors = std::uint64_t{1} << (s.plan.local_bits - s.plan.vector_bits);
  for (std::size_t r = 0; r < g; ++r) {
    ScopedDevice on(s.devices[r]);
    const std::uint64_t base64 = r * vectors;
    const unsigned base32 = static_cast<unsigned>(base64);
    void* base = needs_64bit_index(s.plan.n() + 1) ? static_cast<void*>(const_cast<std::uint64_t*>(&base64))
                                                   : static_cast<void*>(const_cast<unsigned*>(&base32));
    void* args[] = {const_cast<void**>(data.data()), base};
    launch(s.kernels[r], dim3(static_cast<unsigned>(s.kernel.grid)), dim3(s.kernel.block), 0, streams[r], args);
  }
  events.barrier(streams);  // every pair that touches rank d is swapped before d goes on
  conjugate();
}

}  // namespace bmmc
