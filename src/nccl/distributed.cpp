// The distributed front door's engine for one rank of an NCCL communicator (bmmc/distributed.hpp): the constructor
// of DistributedPermuter that takes an ncclComm_t is defined here, so that only programs that pass one link
// bmmc::nccl. Behind it: DistPermuter (Exchange, Pieces), NcclPushPermuter (Push, its copy-engine Pieces, or the
// portable engine where the fused one cannot run) and NcclSwapPermuter (Swap, StagedSwap).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "../dispatch/distributed_engine.hpp"
#include "dist_permuter.hpp"
#include "push_permuter.hpp"
#include "swap_permuter.hpp"
#include "bmmc/nccl/window.hpp"

namespace bmmc {
namespace {

class NcclEngine final : public DistributedEngineBase {
 public:
  NcclEngine(const Bmmc& map, int elem_bytes, ncclComm_t comm, const DistributedOptions& o) {
    DistOptions d;
    d.check_agreement = o.check_agreement;
    d.pieces = o.pieces;
    d.depth = o.depth;
    d.exchange_comms = o.exchange_comms;
    d.gpu = o.gpu;
    info.n = map.n();
    info.elem_bytes = elem_bytes;
    info.local_ranks = 1;
    info.in_place = o.in_place;
    if (o.in_place) {
      swap_.emplace(map, elem_bytes, comm, d);
      info.engine = swap_->chunks() ? DistEngine::StagedSwap : DistEngine::Swap;
      if (o.engine != DistEngine::Auto && o.engine != info.engine)
        throw std::invalid_argument(fmt::format(
            "the {} engine was asked for, but this involution over this communicator runs {}: ask for auto or {}",
            to_string(o.engine), to_string(info.engine), to_string(info.engine)));
      info.pieces = swap_->chunks();
      info.ranks = swap_->ranks();
      info.first_rank = swap_->rank();
      info.local_bytes = swap_->local_bytes();
      info.scratch_bytes = 0;
      info.alignment = static_cast<std::size_t>(elem_bytes);
      return;
    }
    destroy_input_ = o.destroy_input;
    if (o.engine == DistEngine::Exchange || o.engine == DistEngine::Pieces || o.destroy_input) {
      if (o.engine != DistEngine::Pieces) d.pieces = 1;
      portable_.emplace(map, elem_bytes, comm, d);
      if (o.engine == DistEngine::Pieces && !portable_->pipelined())
        throw std::invalid_argument(
            fmt::format("the pieces engine cannot run here: {}; ask for auto or exchange", portable_->pipeline_note()));
      info.engine = portable_->pipelined() ? DistEngine::Pieces : DistEngine::Exchange;
      info.pieces = portable_->pipelined() ? portable_->pieces() : 0;
      info.ranks = portable_->ranks();
      info.first_rank = portable_->rank();
      info.local_bytes = portable_->local_bytes();
      info.scratch_bytes = destroy_input_ ? 0 : portable_->scratch_bytes();
      info.alignment = static_cast<std::size_t>(elem_bytes);
      return;
    }
    push_.emplace(map, elem_bytes, comm, d);
    if (o.engine == DistEngine::Push && !push_->fused())
      throw std::invalid_argument(
          fmt::format("the push engine cannot run here: {}; ask for auto, exchange or pieces", push_->fallback_reason()));
    info.engine = !push_->fused() ? DistEngine::Exchange : push_->pieces() > 0 ? DistEngine::Pieces : DistEngine::Push;
    info.fallback_reason = push_->fallback_reason();
    info.pieces = push_->pieces();
    info.ranks = push_->ranks();
    info.first_rank = push_->rank();
    info.local_bytes = push_->local_bytes();
    info.scratch_bytes = push_->scratch_bytes();
    info.alignment = push_->alignment();
  }

  void run(const std::vector<const void*>& in, const std::vector<void*>& out, const std::vector<void*>& scratch,
           const std::vector<StreamHandle>& streams) const override {
    if (!portable_)
      throw std::invalid_argument(fmt::format(
          "the {} engine over NCCL stores into the peers' buffers: pass out{} as NcclWindows of the communicator "
          "(operator()(in, out, scratch, stream)), or ask for the exchange or pieces engine for plain device pointers",
          to_string(info.engine), info.scratch_bytes ? " and scratch" : ""));
    const StreamHandle stream = streams.empty() ? nullptr : streams[0];
    if (destroy_input_) {  // the caller made the input writable by asking for this
      if (!scratch.empty() && scratch[0])
        throw std::invalid_argument("destroy_input receives into the input: pass no scratch");
      return portable_->permute_destroying(const_cast<void*>(in[0]), out[0], stream);
    }
    (*portable_)(in[0], out[0], scratch.empty() ? nullptr : scratch[0], stream);
  }

  void run_in_place(const std::vector<void*>&, const std::vector<StreamHandle>&) const override {
    throw std::invalid_argument("in place over NCCL the ranks swap through each other's memory: pass the data as an "
                                "NcclWindow of the communicator (permute_in_place(window, stream))");
  }

  void run_window(const void* in, const NcclWindow& out, const NcclWindow* scratch, StreamHandle stream) const override {
    if (portable_) return run({in}, {out.data()}, scratch ? std::vector<void*>{scratch->data()} : std::vector<void*>{},
                              {stream});
    (*push_)(in, out, scratch, stream);
  }

  void run_window_in_place(const NcclWindow& data, StreamHandle stream) const override { (*swap_)(data, stream); }

 private:
  std::optional<DistPermuter> portable_;
  std::optional<NcclPushPermuter> push_;
  std::optional<NcclSwapPermuter> swap_;
  bool destroy_input_ = false;
};

}  // namespace

DistributedPermuter::DistributedPermuter(const Bmmc& map, int elem_bytes, ncclComm* comm,
                                         const DistributedOptions& options) {
  check_distributed_options(options, DistributedGroup::Nccl);
  impl_ = std::make_shared<NcclEngine>(map, elem_bytes, comm, options);
  check_engine_honours(options, impl_->info, DistributedGroup::Nccl);
}

}  // namespace bmmc
