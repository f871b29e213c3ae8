// The fused NCCL engine (see push_permuter.hpp).
#include "push_permuter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/dist/tuning.hpp"
#include "../exchange/push_kernel.hpp"
#include "collectives.hpp"
#include "copy_pieces.hpp"
#include "lsa_pointers.hpp"

namespace bmmc {

using namespace nccl_detail;

struct NcclPushPermuter::State : RankContext {
  explicit State(ncclComm_t c) : RankContext(c, "NcclPushPermuter") {}
  DistOptions options;
  DistPlan plan;
  PushPlan push;
  std::string fallback_reason;
  // Fused engine.
  std::optional<PushKernel> push_kernel;
  Kernel kernel;
  std::unique_ptr<CudaPermuter> finish;  // Q, for two-pass push plans where the pieces cannot be cut
  std::unique_ptr<NcclPiecePipeline> pieces;  // two-pass push plans: the copy engines in pieces instead
  std::size_t alignment = 1;
  // Portable engine, where the fused one cannot run.
  std::unique_ptr<DistPermuter> portable;
};

NcclPushPermuter::NcclPushPermuter(const Bmmc& global, int elem_bytes, ncclComm_t comm, const DistOptions& options)
    : state_(std::make_unique<State>(comm)) {
  State& s = *state_;
  s.options = options;
  const int g = dist_rank_bits(static_cast<std::uint64_t>(s.ranks), global.n());
  s.plan = make_dist_plan(global, g, elem_bytes);
  s.push = plan_push(global, g, elem_bytes, options.gpu);
  check_pieces(options.pieces);
  check_depth(options.depth);
  ScopedDevice on(s.device);
  if (!s.push.one_pass() && s.plan.k > kAutoPiecesMaxK) {
    // A map that needs a second pass and sends to several ranks: the copy engines in pieces are slow there (three
    // peer copies at once ~200 GB/s per GPU on four H200s) and push + finish needs a whole scratch array; the
    // portable engine's pipelined exchange took 1.13× NCCL's all-to-all with 0.11 of the array as scratch, the
    // single-process push + finish 1.22× (BENCHMARKS.md "Several GPUs on four H200s").
    s.fallback_reason = fmt::format(
        "each rank sends to {} ranks and the map needs a second, local pass: the portable engine's pipelined exchange "
        "is faster there than push + finish and needs 1/8 of the scratch", 1 << s.plan.k);
  } else if (!every_rank_load_store_accessible(comm)) {
    s.fallback_reason = fmt::format(
        "not every one of the {} ranks is load/store accessible from rank {} (NCCL's LSA team is smaller: ranks on "
        "other nodes or without a peer path)",
        s.ranks, s.rank);
  } else {
    try {
      s.push_kernel = make_push_kernel(s.push, s.plan.local_bits, elem_bytes, options.gpu);
    } catch (const std::invalid_argument& e) {
      s.fallback_reason = e.what();
    }
  }
  if (!s.fallback_reason.empty()) {
    s.portable = std::make_unique<DistPermuter>(global, elem_bytes, comm, options);
    return;
  }
  // Every kernel is loaded now, not lazily between collectives (prepare_launch, launch.hpp).
  KernelCache& cache = options.gpu.cache ? *options.gpu.cache : default_kernel_cache();
  const KernelSource& src = s.push_kernel->source;
  s.kernel = cache.get(src.source, src.kernel_name, device_arch(s.device));
  prepare_launch(s.kernel, src.shared_bytes);
  s.alignment = static_cast<std::size_t>(s.push_kernel->pass.vector_bytes());
  if (!s.push.one_pass() && s.plan.k <= kAutoPiecesMaxK) {
    // A push that needs a finishing pass is slower than the copy engines carrying pieces while the SMs pack and
    // unpack (on two H200s: 1.42–1.44× against 1.04–1.08× the peer-copy bound in one process, BENCHMARKS.md) —
    // where each rank sends to one other rank: with three destinations (four H200s, k = 2) the copies reached
    // ~200 GB/s per GPU and the pieces took 1.52–1.61× NCCL's all-to-all, the single-process push + finish 1.24×.
    try {
      s.pieces = std::make_unique<NcclPiecePipeline>(s.plan, s, options.pieces, options.depth, options.gpu);
      s.alignment = s.pieces->alignment();
      return;
    } catch (const std::invalid_argument&) {  // ranks too small to cut into pieces: push + finish
    }
  }
  if (!s.push.one_pass()) {
    s.finish = std::make_unique<CudaPermuter>(s.push.finish, elem_bytes, options.gpu);
    s.finish->prepare();
    s.alignment = std::max(s.alignment, s.finish->alignment());
  }
}

NcclPushPermuter::~NcclPushPermuter() = default;
NcclPushPermuter::NcclPushPermuter(NcclPushPermuter&&) noexcept = default;
NcclPushPermuter& NcclPushPermuter::operator=(NcclPushPermuter&&) noexcept = default;

bool NcclPushPermuter::fused() const noexcept { return !state_->portable; }
const std::string& NcclPushPermuter::fallback_reason() const noexcept { return state_->fallback_reason; }
std::size_t NcclPushPermuter::local_bytes() const noexcept {
  return array_bytes(state_->plan.local_bits, state_->plan.elem_bytes);
}
std::size_t NcclPushPermuter::scratch_bytes() const noexcept {
  const State& s = *state_;
  if (s.portable) return s.portable->scratch_bytes();
  if (s.pieces) return s.pieces->scratch_bytes();
  return s.push.one_pass() ? 0 : local_bytes();
}
std::size_t NcclPushPermuter::alignment() const noexcept {
  const State& s = *state_;
  return s.portable ? static_cast<std::size_t>(s.plan.elem_bytes) : s.alignment;
}
int NcclPushPermuter::pieces() const noexcept { return state_->pieces ? state_->pieces->pieces() : 0; }
const PushPlan& NcclPushPermuter::push_plan() const noexcept { return state_->push; }
const DistPlan& NcclPushPermuter::plan() const noexcept { return state_->plan; }
int NcclPushPermuter::rank() const noexcept { return state_->rank; }
int NcclPushPermuter::ranks() const noexcept { return state_->ranks; }
int NcclPushPermuter::device() const noexcept { return state_->device; }
const std::string& NcclPushPermuter::push_source() const noexcept {
  static const std::string none;
  return state_->push_kernel ? state_->push_kernel->source.source : none;
}

void NcclPushPermuter::operator()(const void* in, const NcclWindow& out, const NcclWindow* scratch,
                                  cudaStream_t stream) const {
  const State& s = *state_;
  ScopedDevice on(s.device);
  const std::size_t bytes = local_bytes();
  const bool need_scratch = scratch_bytes() > 0;
  // Everything is checked before anything is enqueued; a rank whose arguments fail says so in the agreement, so
  // that its peers throw too instead of waiting for it (in the fallback, its refusal meets the portable engine's
  // agreement on the peers: the same all-gather on the same communicator).
  s.check_or_refuse(s.options.check_agreement, stream, [&] {
    out.require(s.comm, bytes, s.push.one_pass() && fused(), "out");
    check_buffers(in, out.data(), s.plan.local_bits, s.plan.elem_bytes);
    check_device_pointer(in, "in");
    if (reinterpret_cast<std::uintptr_t>(in) % alignment() != 0)
      throw std::invalid_argument(fmt::format("in ({}) must be aligned to {} bytes", in, alignment()));
    check_disjoint(in, bytes, out.data(), out.bytes(), "in", "out");
    if (need_scratch && !scratch && fused())
      throw std::invalid_argument(fmt::format(
          fmt::runtime(s.pieces ? "scratch: this map moves through the copy engines in pieces, which land in a scratch window of {} "
                     "bytes per rank; pass one (NcclWindow::allocate(comm, scratch_bytes()))"
                   : "scratch: this map needs a second, local pass (its output runs span ranks), so the push lands in a "
                     "scratch window of {} bytes per rank; pass one (NcclWindow::allocate(comm, scratch_bytes()))"),
          scratch_bytes()));
    if (scratch) {
      scratch->require(s.comm, fused() ? scratch_bytes() : 0, fused(), "scratch");
      check_disjoint(in, bytes, scratch->data(), scratch->bytes(), "in", "scratch");
      check_disjoint(out.data(), out.bytes(), scratch->data(), scratch->bytes(), "out", "scratch");
    }
  });

  if (s.portable) {  // the windows are plain device memory to the portable engine
    // Its own scratch is registered with NCCL (faster); the caller's scratch window serves only where it has none.
    void* portable_scratch = !s.portable->registered_scratch() && scratch &&
                                     scratch->bytes() >= s.portable->scratch_bytes()
                                 ? scratch->data()
                                 : nullptr;
    (*s.portable)(in, out.data(), portable_scratch, stream);
    return;
  }
  if (s.options.check_agreement)
    s.agree({dist_plan_hash(s.plan), static_cast<std::uint64_t>(s.plan.n()),
             static_cast<std::uint64_t>(s.plan.elem_bytes), DistEngine::Push,
             static_cast<std::uint64_t>(s.pieces ? s.pieces->pieces() : 0), 0, 0,
             static_cast<std::uint64_t>(s.push.line_bits)},
            stream);
  else
    s.barrier(stream);  // no store into a peer's buffer while the peer still uses it
  if (s.pieces) {
    s.pieces->run(in, out.data(), *scratch, stream);
    return;
  }
  const NcclWindow& landing = s.push.one_pass() ? out : *scratch;
  launch_push(s.kernel, *s.push_kernel, static_cast<std::size_t>(s.rank), in, landing.peers(), stream);
  s.barrier(stream);  // every rank's stores into this rank have landed
  if (!s.push.one_pass()) s.finish->run_on_device_pointers(scratch->data(), out.data(), stream);
}

}  // namespace bmmc
