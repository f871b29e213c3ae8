// In place across the GPUs of one process (see peer_swap.hpp).
#include "bmmc/peer/peer_swap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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
#include "bmmc/dist/staged_swap_plan.hpp"
#include "bmmc/peer/peer_permuter.hpp"
#include "rank_buffers.hpp"

namespace bmmc {

using namespace peer_detail;

namespace {

// The staged path's device memory and streams: per device two staging chunks and two non-blocking streams (one
// per chunk in flight), released on the device they belong to. (Finishes on separate high-priority streams were
// measured on 2×H200 and did not overlap the pushes: a push needs every SM to keep the links busy, DESIGN §9.6.)
struct Staging {
  std::vector<int> devices;
  std::vector<std::array<void*, 2>> chunks;
  std::vector<std::array<cudaStream_t, 2>> streams;
  Staging(std::vector<int> devs, std::size_t bytes) : devices(std::move(devs)) {
    chunks.assign(devices.size(), {nullptr, nullptr});
    streams.assign(devices.size(), {nullptr, nullptr});
    try {
      for (std::size_t r = 0; r < devices.size(); ++r) {
        ScopedDevice on(devices[r]);
        for (int i = 0; i < 2; ++i) {
          check(cudaMalloc(&chunks[r][i], bytes), "cudaMalloc (staging)", fmt::format("{} bytes on device {}", bytes, devices[r]));
          check(cudaStreamCreateWithFlags(&streams[r][i], cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        }
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~Staging() { release(); }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  void release() noexcept {
    int current = 0;  // the caller's current device is theirs: restored after the frees
    const bool restore = cudaGetDevice(&current) == cudaSuccess;
    for (std::size_t r = 0; r < devices.size(); ++r) {
      if (cudaSetDevice(devices[r]) != cudaSuccess) continue;
      for (int i = 0; i < 2; ++i) {
        if (streams[r][i]) cudaStreamDestroy(streams[r][i]);
        if (chunks[r][i]) cudaFree(chunks[r][i]);
        streams[r][i] = nullptr;
        chunks[r][i] = nullptr;
      }
    }
    if (restore) cudaSetDevice(current);
  }
};

}  // namespace

struct PeerSwapPermuter::State {
  std::vector<int> devices;
  RankSwapPlan plan;
  std::optional<StagedSwapPlan> staged;
  std::unique_ptr<PeerPermuter> chunk_permuter;  // the push engine of f_c, run in place on each chunk
  std::unique_ptr<Staging> staging;
  KernelSource kernel;
  std::vector<Kernel> kernels;                                  // per rank
  std::vector<std::shared_ptr<CudaInPlacePermuter>> conjugate;  // per rank, when the plan has a Q
  std::size_t alignment = 1;
};

PeerSwapPermuter::PeerSwapPermuter(const Bmmc& f, int elem_bytes, std::vector<int> devices, const GpuOptions& options,
                                   std::size_t max_staging_chunk)
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
  s.kernel = generate_rank_swap(s.plan.direct, s.plan.local_bits, elem_bytes, s.plan.vector_bits, s.plan.owner_bit);
  KernelCache& cache = gpu.cache ? *gpu.cache : default_kernel_cache();
  for (int d : s.devices) s.kernels.push_back(cache.get(s.kernel.source, s.kernel.kernel_name, device_arch(d)));
  s.alignment = static_cast<std::size_t>(elem_bytes) << s.plan.vector_bits;
  // f moves low bits: instead of Q, the cross-rank pass and Q again, chunks through the push engine where f
  // fixes the top local bits and f_c's push has a finish (a one-pass push may not run in place).
  if (s.plan.conjugated())
    if (auto staged = make_staged_swap_plan(f, g, elem_bytes, max_staging_chunk, kMinStagingChunkBits)) {
      PeerOptions po;
      po.engine = PeerEngine::Push;
      po.gpu = gpu;
      try {
        auto chunk = std::make_unique<PeerPermuter>(staged->chunk_map, elem_bytes, s.devices, po);
        if (!chunk->push_plan().one_pass()) {
          s.staging = std::make_unique<Staging>(s.devices, chunk->scratch_bytes());
          s.alignment = std::max(s.alignment, chunk->alignment());
          s.chunk_permuter = std::move(chunk);
          s.staged = std::move(staged);
          return;
        }
      } catch (const std::invalid_argument&) {
        // the push engine cannot run the chunks (too small for a warp row, say): the three passes below
      }
    }
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
const std::optional<StagedSwapPlan>& PeerSwapPermuter::staged_plan() const noexcept { return state_->staged; }
std::size_t PeerSwapPermuter::staging_bytes() const noexcept {
  return state_->staged ? 2 * state_->staged->chunk_bytes() : 0;
}
std::size_t PeerSwapPermuter::local_bytes() const noexcept {
  return array_bytes(state_->plan.local_bits, state_->plan.elem_bytes);
}
std::size_t PeerSwapPermuter::alignment() const noexcept { return state_->alignment; }
const std::string& PeerSwapPermuter::source() const noexcept { return state_->kernel.source; }

void PeerSwapPermuter::run_staged(const State& s, const std::vector<void*>& data, const std::vector<cudaStream_t>& streams) {
  const std::size_t g = s.devices.size(), chunk = s.staged->chunk_bytes();
  // The staging streams start after the caller's streams (which may still write the data) ...
  for (std::size_t r = 0; r < g; ++r)
    for (int i = 0; i < 2; ++i) stream_waits(s.devices[r], s.staging->streams[r][i], streams[r]);
  // ... chunk c runs on stream set c % 2 with staging chunk c % 2: its push overlaps the previous chunk's finish,
  // and permute_in_place's opening barrier over the set orders it after chunk c − 2 on every rank (whose finish
  // read the staging this chunk's push overwrites).
  for (std::uint64_t c = 0; c < s.staged->chunks(); ++c) {
    const int set = static_cast<int>(c % 2);
    std::vector<void*> part(g), staging(g);
    std::vector<cudaStream_t> set_streams(g);
    for (std::size_t r = 0; r < g; ++r) {
      part[r] = static_cast<unsigned char*>(data[r]) + c * chunk;
      staging[r] = s.staging->chunks[r][set];
      set_streams[r] = s.staging->streams[r][set];
    }
    s.chunk_permuter->permute_in_place(part, staging, set_streams);
  }
  // ... and the caller's streams go on when both sets are done on their device (a rank's data is written only
  // by its own finishes).
  for (std::size_t r = 0; r < g; ++r)
    for (int i = 0; i < 2; ++i) stream_waits(s.devices[r], streams[r], s.staging->streams[r][i]);
}

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
  if (s.staged) {
    run_staged(s, data, streams);
    return;
  }

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
