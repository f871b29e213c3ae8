// In place across the ranks of an NCCL communicator (see swap_permuter.hpp).
#include "swap_permuter.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>

#include "bmmc/codegen/push_source.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/inplace.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/dist/alltoall.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/staged_swap_plan.hpp"
#include "collectives.hpp"
#include "copy_pipeline.hpp"
#include "lsa_pointers.hpp"

namespace bmmc {

using namespace nccl_detail;

struct NcclSwapPermuter::State : RankContext {
  explicit State(ncclComm_t c) : RankContext(c, "NcclSwapPermuter") {}
  DistOptions options;
  RankSwapPlan plan;
  std::uint64_t hash = 0;
  KernelSource source;
  Kernel kernel;
  std::unique_ptr<CudaInPlacePermuter> conjugate;  // Q, where f moves low bits
  // Staged chunks through the copy engines, where f moves low bits and fixes top local bits (docs/DESIGN.md §9.6):
  // chunk c of every rank runs f_c's all-to-all form — pre-pass into the send side of staging slot c mod 2, the
  // segments copied into the receivers' receive sides, post-pass back into the chunk — pipelined (copy_pipeline.hpp).
  std::optional<StagedSwapPlan> staged;
  AllToAllStep step;                        // f_c's all-to-all form on this rank
  std::vector<std::uint64_t> send_at;       // f_c: this rank's segments in its send side (elements)
  std::vector<std::uint64_t> land_at;       // [d]: where this rank's segment lands in d's receive side (elements)
  std::vector<int> lanes;                   // the ranks this rank sends a segment to (itself included)
  std::unique_ptr<CudaPermuter> pre, post;
  // The staging memory is allocated with the engine (ncclMemAlloc is local: a rank that cannot get it throws at
  // construction instead of leaving its peers in a collective) and registered as a window by the first call, after
  // the agreement (collective).
  void* staging_memory = nullptr;
  std::optional<NcclWindow> staging;        // slots × (send, receive) chunks
  std::unique_ptr<NcclCopyPipeline> pipe;   // (after staging: destroyed first, its streams drained)
  cudaEvent_t done = nullptr;               // recorded after each staged call: the staging is free
  ~State() {  // the last staged call is done with the staging before the window and its memory go
    try {
      ScopedDevice on(device);
      if (done) cudaEventSynchronize(done);
      pipe.reset();
      staging.reset();
      if (staging_memory) ncclMemFree(staging_memory);
      if (done) cudaEventDestroy(done);
    } catch (...) {  // a destructor must not throw; the device is gone anyway
    }
  }
  std::size_t staging_bytes() const { return staged ? 4 * staged->chunk_bytes() : 0; }
  bool plan_staged(const Bmmc& f, int g, int elem_bytes);
};

// f_c's pre- and post-pass and where each segment goes; false (nothing kept) where the staged path does not apply.
bool NcclSwapPermuter::State::plan_staged(const Bmmc& f, int g, int elem_bytes) {
  const std::size_t local = array_bytes(plan.local_bits, elem_bytes);
  const std::size_t max_chunk = options.pieces > 0 ? local / static_cast<std::size_t>(options.pieces) : kMaxStagingChunkBytes;
  auto st = make_staged_swap_plan(f, g, elem_bytes, max_chunk, kMinStagingChunkBits);
  // A map that fixes too few top local bits would get chunks above the bound (staging of 4 chunks of up to half the
  // array): the three passes then, with no staging at all.
  if (!st || st->chunk_bytes() > max_chunk) return false;
  const DistPlan pc = make_dist_plan(st->chunk_map, g, elem_bytes);
  step = alltoall_step(pc, static_cast<BitVec>(rank));
  if (step.local_only) return false;
  send_at = displacements(step.send_counts);
  land_at.assign(static_cast<std::size_t>(ranks), 0);
  for (int d = 0; d < ranks; ++d)
    if (step.send_counts[d]) {
      lanes.push_back(d);
      land_at[d] = displacements(alltoall_step(pc, static_cast<BitVec>(d)).recv_counts)[rank];
    }
  pre = std::make_unique<CudaPermuter>(step.pre, elem_bytes, options.gpu);
  post = std::make_unique<CudaPermuter>(step.post, elem_bytes, options.gpu);
  pre->prepare();  // no lazy load between collectives (launch.hpp)
  post->prepare();
  pipe = std::make_unique<NcclCopyPipeline>(*this, lanes.size(), 2);
  check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  staged = std::move(st);
  nccl_check(ncclMemAlloc(&staging_memory, staging_bytes()), "ncclMemAlloc (the staging of the in-place chunks)", comm);
  return true;
}

NcclSwapPermuter::NcclSwapPermuter(const Bmmc& f, int elem_bytes, ncclComm_t comm, const DistOptions& options)
    : state_(std::make_unique<State>(comm)) {
  State& s = *state_;
  s.options = options;
  const int g = dist_rank_bits(static_cast<std::uint64_t>(s.ranks), f.n());
  if (options.pieces < 0)
    throw std::invalid_argument(
        fmt::format("pieces = {}: give at least one chunk (0 = chunks of at most 1 GiB)", options.pieces));
  s.plan = make_rank_swap_plan(f, g, elem_bytes);
  s.hash = dist_plan_hash(make_dist_plan(f, g, elem_bytes));
  ScopedDevice on(s.device);
  if (!every_rank_load_store_accessible(comm))
    throw std::invalid_argument(fmt::format(
        "in place across ranks needs every rank load/store accessible from every other, and NCCL's LSA team of rank "
        "{} is smaller than the {} ranks; permute out of place (a DistributedPermuter without in_place)",
        s.rank, s.ranks));
  if (s.plan.conjugated() && s.plan_staged(f, g, elem_bytes)) return;
  // Every kernel is loaded now, not lazily between collectives (prepare_launch, launch.hpp).
  s.source = generate_rank_swap(s.plan.direct, s.plan.local_bits, elem_bytes, s.plan.vector_bits, s.plan.owner_bit);
  KernelCache& cache = options.gpu.cache ? *options.gpu.cache : default_kernel_cache();
  s.kernel = cache.get(s.source.source, s.source.kernel_name, device_arch(s.device));
  prepare_launch(s.kernel, 0);
  if (s.plan.conjugated()) {
    s.conjugate = std::make_unique<CudaInPlacePermuter>(s.plan.conjugate, elem_bytes, options.gpu);
    s.conjugate->prepare();
  }
}

NcclSwapPermuter::~NcclSwapPermuter() = default;
NcclSwapPermuter::NcclSwapPermuter(NcclSwapPermuter&&) noexcept = default;
NcclSwapPermuter& NcclSwapPermuter::operator=(NcclSwapPermuter&&) noexcept = default;

const RankSwapPlan& NcclSwapPermuter::plan() const noexcept { return state_->plan; }
std::size_t NcclSwapPermuter::local_bytes() const noexcept {
  return array_bytes(state_->plan.local_bits, state_->plan.elem_bytes);
}
std::size_t NcclSwapPermuter::staging_bytes() const noexcept { return state_->staging_bytes(); }
int NcclSwapPermuter::chunks() const noexcept {
  return state_->staged ? static_cast<int>(state_->staged->chunks()) : 0;
}
int NcclSwapPermuter::rank() const noexcept { return state_->rank; }
int NcclSwapPermuter::ranks() const noexcept { return state_->ranks; }
int NcclSwapPermuter::device() const noexcept { return state_->device; }
const std::string& NcclSwapPermuter::source() const noexcept { return state_->source.source; }

void NcclSwapPermuter::operator()(const NcclWindow& data, cudaStream_t stream) const {
  const State& s = *state_;
  ScopedDevice on(s.device);
  // Everything is checked before anything is enqueued (the window is 4096-aligned, so every vector width fits).
  // A rank whose window fails says so in the agreement, so that its peers throw too instead of waiting for it.
  // A call on another stream than the previous one still starts after it: the staging is the engine's (and the
  // agreement below then orders the peers' calls too).
  if (s.done) check(cudaStreamWaitEvent(stream, s.done, 0), "cudaStreamWaitEvent (staging free)");
  s.check_or_refuse(s.options.check_agreement, stream, [&] { data.require(s.comm, local_bytes(), true, "data"); });
  if (s.options.check_agreement)
    s.agree({s.hash, static_cast<std::uint64_t>(s.plan.n()), static_cast<std::uint64_t>(s.plan.elem_bytes),
             chunks() ? DistEngine::StagedSwap : DistEngine::Swap, static_cast<std::uint64_t>(chunks()), 0, 0, 0},
            stream);
  else
    s.barrier(stream);  // no rank reaches into a buffer its owner still uses
  if (s.staged) {
    run_staged(data, stream);
    return;
  }
  if (s.conjugate) {
    s.conjugate->run_on_device_pointer(data.data(), stream);
    s.barrier(stream);  // every rank's Q is done before any thread reaches into it
  }
  const std::uint64_t vectors = std::uint64_t{1} << (s.plan.local_bits - s.plan.vector_bits);
  const std::uint64_t base64 = static_cast<std::uint64_t>(s.rank) * vectors;
  const unsigned base32 = static_cast<unsigned>(base64);
  void* base = needs_64bit_index(s.plan.n() + 1) ? static_cast<void*>(const_cast<std::uint64_t*>(&base64))
                                                 : static_cast<void*>(const_cast<unsigned*>(&base32));
  void* args[] = {const_cast<void**>(data.peers().data()), base};
  launch(s.kernel, dim3(static_cast<unsigned>(s.source.grid)), dim3(s.source.block), 0, stream, args);
  s.barrier(stream);  // every pair that touches this rank is swapped
  if (s.conjugate) s.conjugate->run_on_device_pointer(data.data(), stream);
}

// The staged chunks (State::plan_staged): chunk c uses staging slot c mod 2 — its send side at 2·(c mod 2) chunks,
// its receive side right after — the same layout on every rank, so a sender knows where its segment lands. The
// staging window is allocated by the first call, after the agreement, on every rank alike (collective).
void NcclSwapPermuter::run_staged(const NcclWindow& data, cudaStream_t stream) const {
  State& s = *state_;
  if (!s.staging) s.staging.emplace(s.comm, s.staging_memory, s.staging_bytes());
  const std::size_t chunk = s.staged->chunk_bytes(), eb = static_cast<std::size_t>(s.plan.elem_bytes);
  auto* base = static_cast<unsigned char*>(s.staging->data());
  auto* array = static_cast<unsigned char*>(data.data());
  const std::vector<void*>& peers = s.staging->peers();
  const auto send_side = [&](int c) { return static_cast<std::size_t>(c % 2) * 2 * chunk; };
  s.pipe->run(
      static_cast<int>(s.staged->chunks()), stream,
      [&](int c, cudaStream_t st) {
        s.pre->run_on_device_pointers(array + static_cast<std::size_t>(c) * chunk, base + send_side(c), st);
      },
      [&](int c, std::size_t lane) {
        const int d = s.lanes[lane];
        return CopyLane{static_cast<unsigned char*>(peers[d]) + send_side(c) + chunk + s.land_at[d] * eb,
                        base + send_side(c) + s.send_at[d] * eb, static_cast<std::size_t>(s.step.send_counts[d]) * eb};
      },
      [&](int c, cudaStream_t st) {
        s.post->run_on_device_pointers(base + send_side(c) + chunk, array + static_cast<std::size_t>(c) * chunk, st);
      });
  check(cudaEventRecord(s.done, stream), "cudaEventRecord (staging free)");
}

}  // namespace bmmc
