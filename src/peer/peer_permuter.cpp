// The single-process multi-GPU engines (see peer_permuter.hpp).
#include "peer_permuter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/dist/alltoall.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/dist/tuning.hpp"
#include "../exchange/push_kernel.hpp"
#include "piece_pipeline.hpp"
#include "rank_buffers.hpp"

namespace bmmc {

const char* to_string(PeerEngine e) noexcept {
  switch (e) {
    case PeerEngine::Auto: return "auto";
    case PeerEngine::Push: return "push";
    case PeerEngine::Copy: return "copy";
    case PeerEngine::CopyPieces: return "copy-pieces";
  }
  return "?";
}

using namespace peer_detail;

struct PeerPermuter::State {
  std::vector<int> devices;
  PeerEngine engine = PeerEngine::Copy;
  std::string fallback_reason;
  PushPlan push;
  DistPlan dist;
  std::size_t alignment = 1;
  // Push engine.
  std::optional<PushKernel> push_kernel;
  std::vector<Kernel> push_kernels;                     // per rank
  std::vector<std::shared_ptr<CudaPermuter>> finish;    // per rank (shared between ranks on one device)
  // Copy engine.
  std::vector<AllToAllStep> steps;
  std::vector<std::vector<std::uint64_t>> send_at, recv_at;  // per rank: displacements (elements)
  std::vector<std::shared_ptr<CudaPermuter>> pre, post; // per rank
  // Copy engine in pieces (absent for a rank-local map, which runs the copy engine's one local pass).
  std::unique_ptr<PiecePipeline> pieces;
};

namespace {

// One CudaPermuter per distinct (device, map), shared by the ranks on that device.
std::vector<std::shared_ptr<CudaPermuter>> per_rank(const std::vector<int>& devices, const std::vector<Bmmc>& maps,
                                                    int elem_bytes, const GpuOptions& gpu) {
  std::map<std::pair<int, std::string>, std::shared_ptr<CudaPermuter>> made;
  std::vector<std::shared_ptr<CudaPermuter>> out;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    auto& p = made[{devices[r], maps[r].to_string()}];
    if (!p) {
      ScopedDevice on(devices[r]);
      p = std::make_shared<CudaPermuter>(maps[r], elem_bytes, gpu);
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace

void check_peer_engine(PeerEngine e, const char* what) {
  if (static_cast<unsigned>(e) > static_cast<unsigned>(PeerEngine::CopyPieces))
    throw std::invalid_argument(fmt::format("{} holds {}, which names no engine; expected auto, push, copy or copy-pieces",
                                            what, static_cast<int>(e)));
}

PeerPermuter::PeerPermuter(const Bmmc& global, int elem_bytes, std::vector<int> devices, const PeerOptions& options)
    : state_(std::make_unique<State>()) {
  check_peer_engine(options.engine, "PeerOptions::engine");
  State& s = *state_;
  const int g = rank_bits_of_devices(devices, global.n());
  s.devices = std::move(devices);
  s.dist = make_dist_plan(global, g, elem_bytes);
  const int m = s.dist.local_bits;
  GpuOptions gpu = options.gpu;
  gpu.device = -1;

  s.push = plan_push(global, g, elem_bytes, gpu);
  check_pieces(options.pieces);
  if (options.engine == PeerEngine::CopyPieces) {
    if (peer_obstacle(s.devices).empty()) enable_peer_access(s.devices);  // else the copies stage through the host
    s.engine = PeerEngine::CopyPieces;
    if (!alltoall_step(s.dist, 0).local_only) {  // a rank-local map runs the copy engine's one local pass
      try {
        s.pieces = std::make_unique<PiecePipeline>(s.dist, s.devices, options.pieces, gpu);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("the copy-pieces engine cannot run: {}", e.what()));
      }
      s.alignment = s.pieces->alignment();
      return;
    }
  } else if (options.engine != PeerEngine::Copy) {
    std::string why = peer_obstacle(s.devices);
    if (why.empty()) {
      ScopedDevice on(s.devices[0]);
      try {
        s.push_kernel = make_push_kernel(s.push, m, elem_bytes, gpu);
      } catch (const std::invalid_argument& e) {
        why = e.what();
      }
    }
    if (!why.empty() && options.engine == PeerEngine::Push)
      throw std::invalid_argument(fmt::format("the push engine cannot run: {}", why));
    s.fallback_reason = why;
    s.engine = why.empty() ? PeerEngine::Push : PeerEngine::Copy;
  }

  // A map that needs a finishing pass after the push moves faster through the copy engines in pieces — the links
  // stay busy while the SMs pack and unpack: 1.04–1.08× the peer-copy bound against push + finish's 1.42–1.44× on
  // two H200s (BENCHMARKS.md) — wherever its pieces can be cut along tiles (else push + finish), and where each
  // rank sends to one other rank (k = 1): a GPU's copies to three peers at once reached only ~200 GB/s on four
  // H200s (k = 2: copy engines in pieces 1.24–1.58× push + finish). The push is still built: permute_in_place runs it.
  if (options.engine == PeerEngine::Auto && s.engine == PeerEngine::Push && !s.push.one_pass() && s.dist.k <= kAutoPiecesMaxK) {
    try {
      s.pieces = std::make_unique<PiecePipeline>(s.dist, s.devices, options.pieces, gpu);
    } catch (const std::invalid_argument&) {  // ranks too small to cut into pieces
    }
  }
  if (s.engine == PeerEngine::Push) {
    enable_peer_access(s.devices);
    const KernelSource& src = s.push_kernel->source;
    KernelCache& cache = gpu.cache ? *gpu.cache : default_kernel_cache();
    for (int d : s.devices) s.push_kernels.push_back(cache.get(src.source, src.kernel_name, device_arch(d)));
    s.alignment = static_cast<std::size_t>(s.push_kernel->pass.vector_bytes());
    if (!s.push.one_pass()) {
      s.finish = per_rank(s.devices, std::vector<Bmmc>(s.devices.size(), s.push.finish), elem_bytes, gpu);
      s.alignment = std::max(s.alignment, s.finish[0]->alignment());
    }
  } else {
    // Without peer access cudaMemcpyPeerAsync stages through host memory (measured on two H200s: 37 GB/s
    // instead of NVLink's ~390 GB/s each way), so the copy engine maps the peers too wherever it can.
    if (peer_obstacle(s.devices).empty()) enable_peer_access(s.devices);
    std::vector<Bmmc> pre, post;
    for (std::size_t r = 0; r < s.devices.size(); ++r) {
      s.steps.push_back(alltoall_step(s.dist, r));
      s.send_at.push_back(displacements(s.steps[r].send_counts));
      s.recv_at.push_back(displacements(s.steps[r].recv_counts));
      pre.push_back(s.steps[r].local_only ? s.steps[r].local : s.steps[r].pre);
      post.push_back(s.steps[r].post);
    }
    s.pre = per_rank(s.devices, pre, elem_bytes, gpu);
    for (const auto& p : s.pre) s.alignment = std::max(s.alignment, p->alignment());
    if (!s.steps[0].local_only) {
      s.post = per_rank(s.devices, post, elem_bytes, gpu);
      for (const auto& p : s.post) s.alignment = std::max(s.alignment, p->alignment());
    }
  }
  if (s.pieces) {  // Auto's choice for a two-pass push plan
    s.engine = PeerEngine::CopyPieces;
    s.alignment = std::max(s.alignment, s.pieces->alignment());
  }
}

PeerPermuter::~PeerPermuter() = default;
PeerPermuter::PeerPermuter(PeerPermuter&&) noexcept = default;
PeerPermuter& PeerPermuter::operator=(PeerPermuter&&) noexcept = default;

PeerEngine PeerPermuter::engine() const noexcept { return state_->engine; }
const std::string& PeerPermuter::fallback_reason() const noexcept { return state_->fallback_reason; }
std::size_t PeerPermuter::local_bytes() const noexcept {
  return array_bytes(state_->dist.local_bits, state_->dist.elem_bytes);
}
int PeerPermuter::pieces() const noexcept { return state_->pieces ? state_->pieces->schedule().pieces : 0; }
std::size_t PeerPermuter::scratch_bytes() const noexcept {
  const State& s = *state_;
  if (s.pieces) return s.pieces->scratch_bytes();
  const bool none = s.engine == PeerEngine::Push ? s.push.one_pass() : s.steps[0].local_only;
  return none ? 0 : local_bytes();
}
std::size_t PeerPermuter::alignment() const noexcept { return state_->alignment; }
const std::vector<int>& PeerPermuter::devices() const noexcept { return state_->devices; }
const PushPlan& PeerPermuter::push_plan() const noexcept { return state_->push; }
const DistPlan& PeerPermuter::dist_plan() const noexcept { return state_->dist; }
const std::string& PeerPermuter::push_source() const noexcept {
  static const std::string none;
  return state_->push_kernel ? state_->push_kernel->source.source : none;
}

void PeerPermuter::operator()(const std::vector<const void*>& in, const std::vector<void*>& out,
                              const std::vector<void*>& scratch, const std::vector<cudaStream_t>& streams_in) const {
  const State& s = *state_;
  const std::size_t g = s.devices.size(), bytes = local_bytes();
  const bool need_scratch = scratch_bytes() > 0;
  if (in.size() != g || out.size() != g || (need_scratch && scratch.size() != g) ||
      (!streams_in.empty() && streams_in.size() != g))
    throw std::invalid_argument(fmt::format(
        "PeerPermuter over {} devices: got {} input, {} output, {} scratch buffers and {} streams (expected {} each{}; "
        "streams may be empty)",
        g, in.size(), out.size(), scratch.size(), streams_in.size(), g,
        need_scratch ? "" : ", scratch may be empty: this plan needs none"));
  RankBufferCheck buffers(s.devices, bytes, s.alignment);
  for (std::size_t r = 0; r < g; ++r) {
    buffers.add(in[r], r, "input");
    buffers.add(out[r], r, "output");
    if (need_scratch) buffers.add(scratch[r], r, "scratch", scratch_bytes());
  }
  buffers.check_disjoint();
  const std::vector<cudaStream_t> streams = rank_streams(streams_in, g);

  if (s.pieces) {
    s.pieces->run(in, out, scratch, streams);
    return;
  }
  if (s.engine == PeerEngine::Push) {
    run_push(in, out, scratch, streams);
    return;
  }
  // Copy engine: out holds the pre-pass's segments (ascending destination) until the post-pass rewrites it.
  run_copy(in, out, scratch, out, streams);
}

void PeerPermuter::run_copy(const std::vector<const void*>& in, const std::vector<void*>& send,
                            const std::vector<void*>& recv, const std::vector<void*>& out,
                            const std::vector<cudaStream_t>& streams) const {
  const State& s = *state_;
  const std::size_t g = s.devices.size();
  CallEvents events(s.devices);
  events.barrier(streams);  // no rank writes into a buffer another stream may still be using
  if (s.steps[0].local_only) {
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(s.devices[r]);
      s.pre[r]->run_on_device_pointers(in[r], out[r], streams[r]);
    }
    return;
  }
  for (std::size_t r = 0; r < g; ++r) {
    copy_pre(r, in[r], send[r], streams[r]);
    // The receiver stores the segments of its senders in ascending source order.
    for (std::size_t d = 0; d < g; ++d) copy_send(r, d, send[r], recv[d], streams[r]);
  }
  events.barrier(streams);  // every segment has arrived before any post-pass reads recv or overwrites out
  for (std::size_t d = 0; d < g; ++d) copy_post(d, recv[d], out[d], streams[d]);
}

void PeerPermuter::run_push(const std::vector<const void*>& in, const std::vector<void*>& out,
                            const std::vector<void*>& scratch, const std::vector<cudaStream_t>& streams) const {
  const State& s = *state_;
  const std::size_t g = s.devices.size();
  CallEvents events(s.devices);
  events.barrier(streams);  // no rank writes into a buffer another stream may still be using
  std::vector<void*> targets(g);
  for (std::size_t d = 0; d < g; ++d) targets[d] = s.push.one_pass() ? out[d] : scratch[d];
  for (std::size_t r = 0; r < g; ++r) {
    ScopedDevice on(s.devices[r]);
    launch_push(s.push_kernels[r], *s.push_kernel, r, in[r], targets, streams[r]);
  }
  events.barrier(streams);  // every rank's pushes into d are done before d goes on
  if (!s.push.one_pass())
    for (std::size_t d = 0; d < g; ++d) {
      ScopedDevice on(s.devices[d]);
      s.finish[d]->run_on_device_pointers(scratch[d], out[d], streams[d]);
    }
}

void PeerPermuter::permute_in_place(const std::vector<void*>& data, const std::vector<void*>& scratch,
                                    const std::vector<cudaStream_t>& streams_in) const {
  const State& s = *state_;
  const std::size_t g = s.devices.size();
  if (s.push_kernels.empty() || s.push.one_pass())
    throw std::invalid_argument(
        s.push_kernels.empty()
            ? "PeerPermuter::permute_in_place needs the push engine (this one runs the copy engine: ask for "
              "PeerEngine::Push or Auto)"
            : "PeerPermuter::permute_in_place needs a two-pass push plan: a one-pass push stores into other ranks' "
              "data while they may still read it (permute out of place, or in place with PeerSwapPermuter)");
  if (data.size() != g || scratch.size() != g || (!streams_in.empty() && streams_in.size() != g))
    throw std::invalid_argument(fmt::format(
        "PeerPermuter::permute_in_place over {} devices: got {} data buffers, {} scratch buffers and {} streams "
        "(expected {} each; streams may be empty)",
        g, data.size(), scratch.size(), streams_in.size(), g));
  RankBufferCheck buffers(s.devices, local_bytes(), s.alignment);
  for (std::size_t r = 0; r < g; ++r) {
    buffers.add(data[r], r, "data");
    buffers.add(scratch[r], r, "scratch");
  }
  buffers.check_disjoint();
  run_push(std::vector<const void*>(data.begin(), data.end()), data, scratch, rank_streams(streams_in, g));
}

namespace {

void require_copy_steps(PeerEngine engine, bool local_only, std::size_t rank, std::size_t ranks) {
  if (engine != PeerEngine::Copy || local_only)
    throw std::invalid_argument(engine != PeerEngine::Copy
                                    ? "PeerPermuter: the copy steps need the copy engine (this one runs the push engine)"
                                    : "PeerPermuter: the copy steps need a map that crosses ranks (this one keeps every "
                                      "element on its rank)");
  if (rank >= ranks) throw std::invalid_argument(fmt::format("PeerPermuter: rank {} of {}", rank, ranks));
}

}  // namespace

void PeerPermuter::copy_pre(std::size_t r, const void* in, void* send, cudaStream_t stream) const {
  const State& s = *state_;
  require_copy_steps(s.engine, s.steps.empty() || s.steps[0].local_only, r, s.devices.size());
  ScopedDevice on(s.devices[r]);
  s.pre[r]->run_on_device_pointers(in, send, stream);
}

void PeerPermuter::copy_send(std::size_t r, std::size_t d, const void* send, void* recv, cudaStream_t stream) const {
  const State& s = *state_;
  require_copy_steps(s.engine, s.steps.empty() || s.steps[0].local_only, std::max(r, d), s.devices.size());
  const std::uint64_t c = s.steps[r].send_counts[d];
  if (!c) return;
  const std::size_t eb = static_cast<std::size_t>(s.dist.elem_bytes);
  ScopedDevice on(s.devices[r]);
  check(cudaMemcpyPeerAsync(static_cast<unsigned char*>(recv) + s.recv_at[d][r] * eb, s.devices[d],
                            static_cast<const unsigned char*>(send) + s.send_at[r][d] * eb, s.devices[r], c * eb, stream),
        "cudaMemcpyPeerAsync", fmt::format("rank {} to rank {}, {} bytes", r, d, c * eb));
}

void PeerPermuter::copy_post(std::size_t d, const void* recv, void* out, cudaStream_t stream) const {
  const State& s = *state_;
  require_copy_steps(s.engine, s.steps.empty() || s.steps[0].local_only, d, s.devices.size());
  ScopedDevice on(s.devices[d]);
  s.post[d]->run_on_device_pointers(recv, out, stream);
}

}  // namespace bmmc
