// In place across the GPUs of one process (see peer_swap.hpp).
#include "peer_swap.hpp"

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
#include "peer_permuter.hpp"
#include "copy_ring.hpp"
#include "rank_buffers.hpp"

namespace bmmc {

using namespace peer_detail;

namespace {

// The staged path's device memory and streams, per device, released on the device they belong to. Two sets (one
// per chunk in flight) of `per_set` staging chunks: 1 for the push engine, send + receive for the copies. Streams
// (non-blocking): for the push engine one per set; for the copies one for the local passes ("compute"), and the
// ring of the copies (copy_ring.hpp: one copy stream per destination rank, so that every direction runs at once).
struct Staging {
  std::vector<int> devices;
  int per_set = 1;
  std::vector<std::array<std::array<void*, 2>, 2>> chunks;   // [rank][set][buffer]
  std::vector<std::vector<cudaStream_t>> streams;            // [rank][stream]
  std::unique_ptr<PeerCopyRing> ring;                        // copies only: lanes to every rank, two slots

  Staging(std::vector<int> devs, std::size_t bytes, bool copies) : devices(std::move(devs)), per_set(copies ? 2 : 1) {
    const std::size_t g = devices.size();
    chunks.assign(g, {});
    streams.assign(g, {});
    try {
      for (std::size_t r = 0; r < g; ++r) {
        ScopedDevice on(devices[r]);
        for (int i = 0; i < 2; ++i) {
          chunks[r][i] = {nullptr, nullptr};
          for (int j = 0; j < per_set; ++j)
            check(cudaMalloc(&chunks[r][i][j], bytes), "cudaMalloc (staging)",
                  fmt::format("{} bytes on device {}", bytes, devices[r]));
        }
        streams[r].assign(copies ? 1 : 2, nullptr);
        for (cudaStream_t& st : streams[r]) check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      }
      if (copies) {
        std::vector<std::size_t> every(g);
        for (std::size_t d = 0; d < g; ++d) every[d] = d;
        ring = std::make_unique<PeerCopyRing>(devices, std::vector<std::vector<std::size_t>>(g, every), 2, false);
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~Staging() { release(); }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  // Rank r's own streams: its compute (or per-set) streams, then the ring's copy streams out of it.
  std::vector<cudaStream_t> own_streams(std::size_t r) const {
    std::vector<cudaStream_t> own = streams[r];
    if (ring)
      for (std::size_t l = 0; l < ring->lanes(r).size(); ++l) own.push_back(ring->copy_stream(r, l));
    return own;
  }
  void release() noexcept {
    ring.reset();
    int current = 0;  // the caller's current device is theirs: restored after the frees
    const bool restore = cudaGetDevice(&current) == cudaSuccess;
    for (std::size_t r = 0; r < devices.size(); ++r) {
      if (cudaSetDevice(devices[r]) != cudaSuccess) continue;
      for (cudaStream_t& st : streams[r]) {
        if (st) cudaStreamDestroy(st);
        st = nullptr;
      }
      for (int i = 0; i < 2; ++i)
        for (void*& c : chunks[r][i]) {
          if (c) cudaFree(c);
          c = nullptr;
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
  std::unique_ptr<PeerPermuter> chunk_permuter;  // f_c's push or copy engine, run in place on each chunk
  std::unique_ptr<Staging> staging;
  KernelSource kernel;
  std::vector<Kernel> kernels;                                  // per rank
  std::vector<std::shared_ptr<CudaInPlacePermuter>> conjugate;  // per rank, when the plan has a Q
  std::size_t alignment = 1;
};

PeerSwapPermuter::PeerSwapPermuter(const Bmmc& f, int elem_bytes, std::vector<int> devices, const GpuOptions& options,
                                   std::size_t max_staging_chunk, PeerEngine staged_engine)
    : state_(std::make_unique<State>()) {
  check_peer_engine(staged_engine, "the staged engine");
  State& s = *state_;
  const int g = rank_bits_of_devices(devices, f.n());
  s.devices = std::move(devices);
  s.plan = make_rank_swap_plan(f, g, elem_bytes);
  if (const std::string why = peer_obstacle(s.devices); !why.empty())
    throw std::invalid_argument(fmt::format(
        "in place across GPUs needs peer access: {}; permute out of place (a DistributedPermuter without in_place: its Exchange engine needs none)",
        why));
  enable_peer_access(s.devices);
  GpuOptions gpu = options;
  gpu.device = -1;
  s.alignment = static_cast<std::size_t>(elem_bytes) << s.plan.vector_bits;
  // f moves low bits: instead of Q, the cross-rank pass and Q again, chunks where f fixes the top local bits —
  // through the copy engine (the transfers need no SMs, so they overlap the local passes of neighbouring chunks),
  // or through the push engine where asked and f_c's push has a finish (a one-pass push may not run in place).
  if (s.plan.conjugated())
    if (auto staged = make_staged_swap_plan(f, g, elem_bytes, max_staging_chunk, kMinStagingChunkBits)) {
      PeerOptions po;
      po.engine = staged_engine == PeerEngine::Push ? PeerEngine::Push : PeerEngine::Copy;
      po.gpu = gpu;
      try {
        auto chunk = std::make_unique<PeerPermuter>(staged->chunk_map, elem_bytes, s.devices, po);
        const bool usable = po.engine == PeerEngine::Push ? !chunk->push_plan().one_pass() : chunk->scratch_bytes() > 0;
        if (usable) {
          s.staging = std::make_unique<Staging>(s.devices, chunk->local_bytes(), po.engine == PeerEngine::Copy);
          s.alignment = std::max(s.alignment, chunk->alignment());
          s.chunk_permuter = std::move(chunk);
          s.staged = std::move(staged);
          return;
        }
      } catch (const std::invalid_argument&) {
        // the engine cannot run the chunks (too small for a warp row, say): the three passes below
      }
    }
  // The pass across ranks (compiled only here: the staged path above never launches it).
  s.kernel = generate_rank_swap(s.plan.direct, s.plan.local_bits, elem_bytes, s.plan.vector_bits, s.plan.owner_bit);
  KernelCache& cache = gpu.cache ? *gpu.cache : default_kernel_cache();
  for (int d : s.devices) s.kernels.push_back(cache.get(s.kernel.source, s.kernel.kernel_name, device_arch(d)));
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
  return state_->staged ? 2 * static_cast<std::size_t>(state_->staging->per_set) * state_->staged->chunk_bytes() : 0;
}
PeerEngine PeerSwapPermuter::staged_engine() const noexcept {
  return state_->chunk_permuter ? state_->chunk_permuter->engine() : PeerEngine::Auto;
}
std::size_t PeerSwapPermuter::local_bytes() const noexcept {
  return array_bytes(state_->plan.local_bits, state_->plan.elem_bytes);
}
std::size_t PeerSwapPermuter::alignment() const noexcept { return state_->alignment; }
const std::string& PeerSwapPermuter::source() const noexcept { return state_->kernel.source; }

void PeerSwapPermuter::run_staged(const State& s, const std::vector<void*>& data, const std::vector<cudaStream_t>& streams) {
  const std::size_t g = s.devices.size(), chunk = s.staged->chunk_bytes();
  const Staging& st = *s.staging;
  // The staging streams start after the caller's streams (which may still write the data) ...
  for (std::size_t r = 0; r < g; ++r)
    for (cudaStream_t own : st.own_streams(r)) stream_waits(s.devices[r], own, streams[r]);
  auto part = [&](std::size_t r, std::uint64_t c) { return static_cast<unsigned char*>(data[r]) + c * chunk; };
  const PeerPermuter& engine = *s.chunk_permuter;
  if (engine.engine() == PeerEngine::Push) {
    // ... chunk c runs on stream set c % 2 with the staging of set c % 2; the engine's opening barrier over the
    // set orders it after chunk c − 2 on every rank (whose finish read the staging this chunk's push overwrites).
    for (std::uint64_t c = 0; c < s.staged->chunks(); ++c) {
      const int set = static_cast<int>(c % 2);
      std::vector<void*> parts(g), staging(g);
      std::vector<cudaStream_t> set_streams(g);
      for (std::size_t r = 0; r < g; ++r) {
        parts[r] = part(r, c);
        staging[r] = st.chunks[r][set][0];
        set_streams[r] = st.streams[r][set];
      }
      engine.permute_in_place(parts, staging, set_streams);
    }
  } else {
    // ... a ring of two slots (copy_ring.hpp): the copy engines move chunk c while the SMs run the post-pass of
    // chunk c − 1 and the pre-pass of chunk c + 1. Per rank the local passes go in order on its compute stream (pre
    // 0, pre 1, post 0, pre 2, post 1, ...), the copies on one stream per destination; chunk c uses the staging of
    // set c % 2, its send buffer filled by the pre-pass, its receive buffer emptied by the post-pass.
    std::vector<cudaStream_t> compute(g);
    for (std::size_t r = 0; r < g; ++r) compute[r] = st.streams[r][0];
    const auto set = [](int c) { return c % 2; };
    st.ring->run(
        static_cast<int>(s.staged->chunks()), compute,
        [&](std::size_t r, int c, cudaStream_t on) {
          engine.copy_pre(r, part(r, c), st.chunks[r][set(c)][0], on);
        },
        [&](std::size_t r, std::size_t lane, int c, cudaStream_t on) {
          const std::size_t d = st.ring->lanes(r)[lane];
          engine.copy_send(r, d, st.chunks[r][set(c)][0], st.chunks[d][set(c)][1], on);
        },
        [&](std::size_t d, int c, cudaStream_t on) {
          engine.copy_post(d, st.chunks[d][set(c)][1], part(d, c), on);
        });
  }
  // ... and the caller's streams go on when every staging stream is done on their device (a rank's data is
  // written only by its own last steps).
  for (std::size_t r = 0; r < g; ++r)
    for (cudaStream_t own : st.own_streams(r)) stream_waits(s.devices[r], streams[r], own);
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
