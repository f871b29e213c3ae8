// The distributed front door's engine over collectives the caller owns (bmmc/distributed.hpp, ExchangeGroup): the
// all-to-all form of the plan (dist/alltoall.hpp) — this rank's pre-pass into out, the caller's one all-to-all from
// out into the receive buffer, the post-pass into out — with the local passes run by Permuters of the library's
// cache (host or device buffers, as the pointers say) and the ranks' agreement (dist/agreement.hpp) gathered
// through the caller's all-gather before any data moves. A rank that refuses its own arguments gathers the refused
// record instead, so its peers throw rather than wait for it.
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/dispatch/permuter_cache.hpp"
#include "bmmc/dist/agreement.hpp"
#include "bmmc/dist/alltoall.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "distributed_engine.hpp"

#if BMMC_HAS_CUDA
#include <cuda_runtime_api.h>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#endif

namespace bmmc {
namespace {

constexpr const char* kAdvice = "every rank must build its permuter from the same global BMMC, element size and options";

// What the group must be for the door to use it at all; a group that fails here cannot even announce a refusal.
void check_group(const ExchangeGroup& g, bool needs_gather) {
  if (g.ranks < 1 || (g.ranks & (g.ranks - 1)) != 0)
    throw std::invalid_argument(
        fmt::format("ExchangeGroup::ranks = {}: expected a power of two (the rank is the top index bits)", g.ranks));
  if (g.rank < 0 || g.rank >= g.ranks)
    throw std::invalid_argument(
        fmt::format("ExchangeGroup::rank = {} with {} ranks: expected 0 to {}", g.rank, g.ranks, g.ranks - 1));
  if (needs_gather && !g.gather)
    throw std::invalid_argument("ExchangeGroup::gather is empty: the ranks' agreement needs the all-gather (or set "
                                "DistributedOptions::check_agreement = false)");
}

// The collective half of the agreement: every rank's record through the caller's all-gather, then the comparison
// every rank makes alike (it throws on every rank when any record differs).
void agree(const ExchangeGroup& g, const Agreement& mine) {
  const Agreement::Words words = mine.words();
  std::vector<std::uint64_t> every(words.size() * static_cast<std::size_t>(g.ranks), 0);
  g.gather(std::span<const std::uint64_t>(words), std::span<std::uint64_t>(every));
  compare_agreements(every, g.rank, kAdvice);
}

// Takes part in the agreement as refused; the peers' comparison then throws, which is the point, and a failure of
// the gather itself is the transport's: the caller rethrows its own error next.
void announce_refusal(const ExchangeGroup& g) noexcept {
  try {
    agree(g, refused_agreement());
  } catch (...) {
  }
}

void check_pointer(const void* p, const char* name, std::size_t alignment) {
  if (!p) throw std::invalid_argument(fmt::format("the call's {} is null; expected a buffer of local_bytes()", name));
  if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0)
    throw std::invalid_argument(fmt::format("the call's {} ({}) is not aligned to the {}-byte element; expected "
                                            "alignment() = {}",
                                            name, p, alignment, alignment));
}

void check_apart(const void* a, const char* a_name, const void* b, const char* b_name, std::size_t bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  if (x < y + bytes && y < x + bytes)
    throw std::invalid_argument(fmt::format("the call's {} ({}) overlaps its {} ({}): each spans {} bytes; the "
                                            "exchange needs separate buffers",
                                            a_name, a, b_name, b, bytes));
}

// The receive buffer the engine provides when the call gives none: host memory beside host buffers, a stream-ordered
// allocation on the buffers' device beside device buffers (freed on the stream after the post-pass).
class OwnScratch {
 public:
  OwnScratch(std::size_t bytes, const PermuterOptions& where, StreamHandle stream) : stream_(stream) {
    if (where.backend == Backend::Cpu) {
      host_.resize((bytes + sizeof(Slot) - 1) / sizeof(Slot));
      data_ = host_.data();
      return;
    }
#if BMMC_HAS_CUDA
    device_ = where.gpu.device;
    ScopedDevice on(device_);
    check(cudaMallocAsync(&data_, bytes, stream), "cudaMallocAsync (exchange receive buffer)");
#endif
  }
  ~OwnScratch() {
#if BMMC_HAS_CUDA
    if (data_ && host_.empty()) {
      try {
        ScopedDevice on(device_);
        cudaFreeAsync(data_, stream_);
      } catch (...) {  // a destructor must not throw
      }
    }
#endif
  }
  OwnScratch(const OwnScratch&) = delete;
  OwnScratch& operator=(const OwnScratch&) = delete;
  void* data() const noexcept { return data_; }

 private:
  struct alignas(16) Slot {
    std::byte b[16];
  };
  std::vector<Slot> host_;
  void* data_ = nullptr;
  [[maybe_unused]] StreamHandle stream_ = nullptr;
  [[maybe_unused]] int device_ = -1;
};

class ExchangeEngine final : public DistributedEngineBase {
 public:
  ExchangeEngine(const Bmmc& map, int elem_bytes, ExchangeGroup group, const DistributedOptions& o)
      : group_(std::move(group)), options_(o) {
    check_group(group_, o.check_agreement);
    try {
      if (!group_.exchange)
        throw std::invalid_argument("ExchangeGroup::exchange is empty: the door moves data between ranks through it");
      check_distributed_options(o, DistributedGroup::Exchange);
      const int g = dist_rank_bits(static_cast<std::uint64_t>(group_.ranks), map.n());
      const DistPlan plan = make_dist_plan(map, g, elem_bytes);
      step_ = alltoall_step(plan, static_cast<BitVec>(group_.rank));
      for (std::uint64_t c : step_.send_counts) send_bytes_.push_back(c * static_cast<std::size_t>(elem_bytes));
      for (std::uint64_t c : step_.recv_counts) recv_bytes_.push_back(c * static_cast<std::size_t>(elem_bytes));
      agreement_.hash = dist_plan_hash(plan);
      agreement_.n = static_cast<std::uint64_t>(map.n());
      agreement_.elem_bytes = static_cast<std::uint64_t>(elem_bytes);
      agreement_.engine = DistEngine::Exchange;
      agreement_.pieces = 1;
      agreement_.comms = 1;
      info.engine = DistEngine::Exchange;
      info.n = map.n();
      info.elem_bytes = elem_bytes;
      info.ranks = group_.ranks;
      info.local_ranks = 1;
      info.first_rank = group_.rank;
      info.local_bytes = array_bytes(plan.local_bits, elem_bytes);
      info.scratch_bytes = step_.local_only || o.destroy_input ? 0 : info.local_bytes;
      info.alignment = static_cast<std::size_t>(elem_bytes);
      info.transport = step_.local_only ? "one local pass (no element changes rank)"
                                        : "through the caller's all-to-all (ExchangeGroup)";
    } catch (...) {
      if (o.check_agreement) announce_refusal(group_);
      throw;
    }
  }

  void run(const std::vector<const void*>& in, const std::vector<void*>& out, const std::vector<void*>& scratch,
           const std::vector<StreamHandle>& streams) const override {
    const StreamHandle stream = streams.empty() ? nullptr : streams[0];
    const void* src = in[0];
    void* dst = out[0];
    void* recv = scratch.empty() ? nullptr : scratch[0];
    std::shared_ptr<const Permuter> pre, post;
    std::unique_ptr<OwnScratch> own;
    try {  // every check and allocation before the agreement: a refusal here is announced, nothing is written
      const std::size_t bytes = info.local_bytes;
      check_pointer(src, "in", info.alignment);
      check_pointer(dst, "out", info.alignment);
      check_apart(dst, "out", src, "in", bytes);
      if (recv && info.scratch_bytes == 0)
        throw std::invalid_argument(fmt::format("scratch given, but this permuter takes none (scratch_bytes() = 0: {}); "
                                                "pass none",
                                                step_.local_only ? "no element changes rank"
                                                                 : "destroy_input receives into in"));
      if (recv) {
        check_pointer(recv, "scratch", info.alignment);
        check_apart(recv, "scratch", src, "in", bytes);
        check_apart(recv, "scratch", dst, "out", bytes);
      }
      pre = local_pass(step_.local_only ? step_.local : step_.pre, src, dst);
      if (!step_.local_only) {
        if (options_.destroy_input) recv = const_cast<void*>(src);  // the caller made it writable by asking for this
        if (!recv) {
          own = std::make_unique<OwnScratch>(bytes, options_for(src, dst), stream);
          recv = own->data();
        }
        post = local_pass(step_.post, recv, dst);
      }
    } catch (...) {
      if (options_.check_agreement) announce_refusal(group_);
      throw;
    }
    if (options_.check_agreement) agree(group_, agreement_);
    if (step_.local_only) return (*pre)(src, dst, stream);
    (*pre)(src, dst, stream);  // chunks in ascending destination order: out is the send buffer
    group_.exchange(dst, send_bytes_, recv, recv_bytes_, stream);
    (*post)(recv, dst, stream);
  }

  void run_in_place(const std::vector<void*>&, const std::vector<StreamHandle>&) const override {
    throw std::logic_error("an ExchangeGroup permuter is never in place (its constructor refuses in_place)");
  }
  void refuse_call() const noexcept override {
    if (options_.check_agreement) announce_refusal(group_);
  }

 private:
  PermuterOptions options_for(const void* a, const void* b) const {
    PermuterOptions po;
    po.cpu = options_.cpu;
    po.gpu = options_.gpu;
    return options_for_pointers(po, a, b, info.elem_bytes);  // refuses host and device memory mixed
  }
  std::shared_ptr<const Permuter> local_pass(const Bmmc& map, const void* a, const void* b) const {
    return default_permuter_cache().get(PermuterKey{map, info.elem_bytes, options_for(a, b)});
  }

  ExchangeGroup group_;
  DistributedOptions options_;
  AllToAllStep step_;
  std::vector<std::size_t> send_bytes_, recv_bytes_;
  Agreement agreement_;
};

}  // namespace

DistributedPermuter::DistributedPermuter(const Bmmc& map, int elem_bytes, ExchangeGroup group,
                                         const DistributedOptions& options) {
  impl_ = std::make_shared<ExchangeEngine>(map, elem_bytes, std::move(group), options);
  // The engine is always exchange: check_engine_honours has nothing left to refuse (depth is refused above).
}

void DistributedPermuter::refuse(const ExchangeGroup& group) {
  check_group(group, true);
  announce_refusal(group);
}

}  // namespace bmmc
