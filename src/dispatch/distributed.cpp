// The distributed front door's own part (bmmc/distributed.hpp): the argument checks every group shares, the
// accessors, and the engine on simulated ranks. The GPU groups' engines are in distributed_peer.cpp and bmmc::nccl.
#include "bmmc/distributed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "distributed_engine.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/push_plan.hpp"
#include "bmmc/dist/rank_swap_plan.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/dist/simulate.hpp"
#include "bmmc/dist/staged_swap_plan.hpp"
#include "bmmc/dist/tuning.hpp"

namespace bmmc {

void DistributedEngineBase::run_window(const void*, const NcclWindow&, const NcclWindow*, StreamHandle) const {
  refuse_call();
  throw std::invalid_argument("NcclWindow buffers belong to NCCL groups; this permuter's group passes one pointer "
                              "per local rank (operator()(in, out, scratch, streams))");
}

void DistributedEngineBase::run_window_in_place(const NcclWindow&, StreamHandle) const {
  refuse_call();
  throw std::invalid_argument("NcclWindow buffers belong to NCCL groups; this permuter's group passes one pointer "
                              "per local rank (permute_in_place(data, streams))");
}

namespace {

const char* group_name(DistributedGroup g) {
  switch (g) {
    case DistributedGroup::Devices: return "a DeviceGroup";
    case DistributedGroup::Nccl: return "an NCCL communicator";
    case DistributedGroup::Simulated: return "SimulatedRanks";
    case DistributedGroup::Exchange: return "an ExchangeGroup";
  }
  return "?";
}

// Every option a group does not read must keep its default: a value there would be silently ignored. The table in
// bmmc/distributed.hpp lists the same rules.
void check_group_options(const DistributedOptions& o, DistributedGroup group) {
  const DistributedOptions d;
  const bool nccl = group == DistributedGroup::Nccl, devices = group == DistributedGroup::Devices,
             simulated = group == DistributedGroup::Simulated, exchange = group == DistributedGroup::Exchange;
  auto refuse = [&](std::string_view option, std::string_view why) {
    throw std::invalid_argument(
        fmt::format("DistributedOptions::{} cannot be honoured by {}: {}", option, group_name(group), why));
  };
  if (!nccl && o.exchange_comms != d.exchange_comms)
    refuse("exchange_comms", fmt::format("only an NCCL communicator's exchange alternates communicators; leave it {}",
                                         d.exchange_comms));
  if (!nccl && !exchange && !o.check_agreement)
    refuse("check_agreement", "only the ranks of an NCCL communicator or an ExchangeGroup (other processes) compare "
                              "their plans; the ranks of one process agree by construction, so leave it true");
  if (!simulated && !exchange && o.cpu != d.cpu)
    refuse("cpu", "the CPU policy runs the local passes of SimulatedRanks only (and an ExchangeGroup's on host "
                  "buffers); leave it default");
  if (o.gpu.device != d.gpu.device)
    refuse("gpu.device", "the group names the devices (DeviceGroup::devices, an NCCL rank's communicator; an "
                         "ExchangeGroup's buffers); leave it -1");
  if (exchange && (o.in_place || !(o.engine == DistEngine::Auto || o.engine == DistEngine::Exchange)))
    refuse(o.in_place ? "in_place" : "engine",
           fmt::format("its ranks meet only in the caller's one all-to-all per call, out of place (not {}{}): ask for "
                       "auto or exchange out of place, or run on an NCCL communicator or a DeviceGroup",
                       o.in_place ? "in place with " : "", to_string(o.engine)));
  if (exchange && o.pieces > 1)
    refuse("pieces", fmt::format("its exchange is the caller's one all-to-all, never cut into pieces (not {}): leave "
                                 "it 0 or 1",
                                 o.pieces));
  if (exchange && o.depth != d.depth)
    refuse("depth", fmt::format("its exchange is the caller's one all-to-all, with no ring of buffers (leave it {})",
                                d.depth));
  if (!o.in_place && o.depth != d.depth &&
      (o.engine == DistEngine::Exchange || o.pieces == 1 || o.destroy_input ||
       ((devices || simulated) && o.engine == DistEngine::Push)))
    refuse("depth", fmt::format("the exchange runs here without a ring of buffers ({}): depth applies to the pieces "
                                "engine (ask for auto or pieces with pieces 0 or more than 1), else leave it {}",
                                o.destroy_input ? "destroy_input receives it whole"
                                : o.pieces == 1 ? "pieces = 1 moves it whole"
                                                : fmt::format("the {} engine moves no pieces", to_string(o.engine)),
                                d.depth));
  if ((devices || simulated) && o.engine == DistEngine::Push && o.pieces > 1)
    refuse("pieces", fmt::format("the push engine stores whole runs into the destinations and moves no pieces (not "
                                 "{}): leave it 0 or 1, or ask for the pieces engine",
                                 o.pieces));
  if (simulated) {  // the CPU runs the passes: of the GPU options only the push plan's vector width shapes the plan
    GpuOptions planned = o.gpu;
    planned.policy.vector_bits = d.gpu.policy.vector_bits;
    if (planned != d.gpu)
      refuse("gpu", "simulated ranks run the passes on the CPU: of the GPU options only gpu.policy.vector_bits (the "
                    "push plan's) applies; leave the others default, or run on a DeviceGroup or an NCCL communicator");
  }
  if (devices && o.destroy_input)
    refuse("destroy_input", "the GPUs of one process keep their input (their copy engines need no receive buffer); "
                            "an NCCL communicator or SimulatedRanks receives into the input");
  if (devices && o.depth != d.depth)
    refuse("depth", fmt::format("the GPUs of one process run their pieces through a ring of fixed depth; an NCCL "
                                "communicator or SimulatedRanks take a depth (leave it {})", d.depth));
  if (o.in_place && o.depth != d.depth)
    refuse("depth", fmt::format("in place the staged chunks move through a ring of fixed depth; depth applies out of "
                                "place, to the pieces engine (leave it {})", d.depth));
  if (!o.in_place && (o.staged_engine != d.staged_engine || o.max_staging_chunk != d.max_staging_chunk))
    refuse(o.staged_engine != d.staged_engine ? "staged_engine" : "max_staging_chunk",
           "it shapes the staged path of an in-place call: set in_place, or leave it default");
  if (!nccl && o.in_place && o.pieces != d.pieces)
    refuse("pieces", "in place, only an NCCL communicator's staged path is cut into a given number of chunks; here "
                     "max_staging_chunk bounds the chunks' bytes");
  if (nccl && o.max_staging_chunk != d.max_staging_chunk)
    refuse("max_staging_chunk", "an NCCL communicator's staged chunks are local_bytes() / pieces: give pieces "
                                "instead (max_staging_chunk applies to a DeviceGroup and SimulatedRanks)");
  if (nccl && o.staged_engine == DistEngine::Push)
    refuse("staged_engine", "an NCCL communicator's staged chunks move by the copy engines: ask for auto or exchange "
                            "(the push staged path runs on a DeviceGroup and SimulatedRanks)");
}

}  // namespace

void check_engine_honours(const DistributedOptions& o, const DistributedInfo& info, DistributedGroup group) {
  const DistributedOptions d;
  // Auto may leave the ring unused (a map that keeps every chunk on its rank is one exchange); a named engine that
  // resolves to one without a ring (the NCCL push engine where the push needs no finishing pass) cannot honour it.
  if (!o.in_place && o.depth != d.depth && o.engine != DistEngine::Auto && info.engine != DistEngine::Pieces)
    throw std::invalid_argument(fmt::format(
        "DistributedOptions::depth cannot be honoured by {}: the {} engine asked for runs as {}, which moves no ring "
        "of buffers; depth applies to the pieces engine (leave it {})",
        group_name(group), to_string(o.engine), to_string(info.engine), d.depth));
}

void check_distributed_options(const DistributedOptions& o, DistributedGroup group) {
  check_dist_engine(o.engine);
  check_dist_engine(o.staged_engine);
  check_pieces(o.pieces);
  check_depth(o.depth);
  if (o.in_place && !(o.engine == DistEngine::Auto || in_place_engine(o.engine)))
    throw std::invalid_argument(fmt::format("in place runs the swap or staged-swap engine, not {}: ask for auto, swap "
                                            "or staged-swap (staged_engine picks how the staged chunks move)",
                                            to_string(o.engine)));
  if (!o.in_place && in_place_engine(o.engine))
    throw std::invalid_argument(fmt::format(
        "the {} engine permutes in place: set DistributedOptions::in_place, or ask for auto, exchange, pieces or push",
        to_string(o.engine)));
  if (!(o.staged_engine == DistEngine::Auto || o.staged_engine == DistEngine::Exchange ||
        o.staged_engine == DistEngine::Push))
    throw std::invalid_argument(fmt::format(
        "staged_engine = {}: the staged chunks move by auto, exchange (the copy engines) or push", to_string(o.staged_engine)));
  if (o.destroy_input && (o.in_place || !(o.engine == DistEngine::Auto || o.engine == DistEngine::Exchange) ||
                          o.pieces > 1))
    throw std::invalid_argument(fmt::format(
        "destroy_input receives the exchange into the input: out of place, engine auto or exchange, one piece (not "
        "{}{}{})",
        o.in_place ? "in place, " : "", to_string(o.engine), o.pieces > 1 ? fmt::format(", {} pieces", o.pieces) : ""));
  if (o.engine == DistEngine::Exchange && o.pieces > 1)
    throw std::invalid_argument(fmt::format(
        "pieces = {} with the exchange engine, which moves every chunk at once: ask for the pieces engine", o.pieces));
  if (o.engine == DistEngine::Pieces && o.pieces == 1)
    throw std::invalid_argument("the pieces engine with pieces = 1: give 0 (the fewest within 1/8 scratch) or more "
                                "than 1, or ask for the exchange engine");
  check_group_options(o, group);
}

namespace {

// ---- Simulated ranks: the schedules of dist/simulate.hpp on host memory ----

class SimulatedEngine final : public DistributedEngineBase {
 public:
  SimulatedEngine(const Bmmc& map, int elem_bytes, std::uint64_t ranks, const DistributedOptions& o) : options_(o) {
    const int g = dist_rank_bits(ranks, map.n());  // a power of two at most 2^n
    check_cpu_threads(o.cpu.threads);
    info.n = map.n();
    info.elem_bytes = elem_bytes;
    info.ranks = static_cast<int>(ranks);
    info.local_ranks = info.ranks;
    info.in_place = o.in_place;
    info.alignment = static_cast<std::size_t>(elem_bytes);
    info.local_bytes = array_bytes(map.n() - g, elem_bytes);
    if (o.in_place) {
      swap_ = make_rank_swap_plan(map, g, elem_bytes);  // refuses a map that is not an involution
      if (o.engine != DistEngine::Swap && swap_->conjugated())
        staged_ = make_staged_swap_plan(map, g, elem_bytes,
                                        o.max_staging_chunk ? o.max_staging_chunk : kMaxStagingChunkBytes,
                                        kMinStagingChunkBits);
      if (o.engine == DistEngine::StagedSwap && !staged_)
        throw std::invalid_argument(fmt::format(
            "the staged-swap engine needs a map that moves low bits and fixes top local bits, with chunks of at least "
            "2^{} elements; this one does not: ask for auto or swap",
            kMinStagingChunkBits));
      info.engine = staged_ ? DistEngine::StagedSwap : DistEngine::Swap;
      info.pieces = staged_ ? static_cast<int>(staged_->chunks()) : 0;
      return;
    }
    plan_ = make_dist_plan(map, g, elem_bytes);
    DistEngine e = o.engine;
    if (e == DistEngine::Auto)
      e = o.pieces == 1 || o.destroy_input || plan_->k == 0 ? DistEngine::Exchange : DistEngine::Pieces;
    if (e == DistEngine::Pieces) info.pieces = make_piece_schedule(*plan_, o.pieces, o.depth).pieces;
    if (e == DistEngine::Push) {
      push_ = make_gpu_push_plan(map, g, elem_bytes, o.gpu.policy.vector_bits);
      info.scratch_bytes = push_->one_pass() ? 0 : info.local_bytes;
    }
    info.engine = e;
  }

  void run(const std::vector<const void*>& in, const std::vector<void*>& out, const std::vector<void*>& scratch,
           const std::vector<StreamHandle>&) const override {
    if (info.engine == DistEngine::Push) {
      if (!scratch.empty() || info.scratch_bytes == 0) return simulate_dist_push(*push_, in, out, scratch, options_.cpu);
      // no scratch given: the engine's own, checked by the simulator with the caller's buffers
      std::vector<std::vector<std::byte>> own(out.size(), std::vector<std::byte>(info.scratch_bytes));
      std::vector<void*> ptrs;
      for (auto& b : own) ptrs.push_back(b.data());
      return simulate_dist_push(*push_, in, out, ptrs, options_.cpu);
    }
    if (!scratch.empty())
      throw std::invalid_argument(fmt::format(
          "the {} engine on simulated ranks takes no scratch (scratch_bytes() = 0); pass none", to_string(info.engine)));
    DistSimOptions so;
    so.pieces = info.engine == DistEngine::Pieces ? options_.pieces : 1;
    so.depth = options_.depth;
    so.cpu = options_.cpu;
    if (options_.destroy_input) {  // the caller made the inputs writable by asking for this
      std::vector<void*> writable;
      for (const void* p : in) writable.push_back(const_cast<void*>(p));
      simulate_dist_permute_destroying(*plan_, writable, out, so);
      return;
    }
    simulate_dist_permute(*plan_, in, out, so);
  }

  void run_in_place(const std::vector<void*>& data, const std::vector<StreamHandle>&) const override {
    if (staged_)
      simulate_dist_staged_swap(*staged_, data, options_.cpu, options_.staged_engine != DistEngine::Push);
    else
      simulate_dist_swap(*swap_, data, options_.cpu);
  }

 private:
  DistributedOptions options_;
  std::optional<DistPlan> plan_;
  std::optional<PushPlan> push_;
  std::optional<RankSwapPlan> swap_;
  std::optional<StagedSwapPlan> staged_;
};

// What a moved-from permuter reports: engine Auto (which no built engine reports), no ranks, no bytes.
const DistributedInfo& info_of(const std::shared_ptr<const DistributedEngineBase>& impl) noexcept {
  static const DistributedInfo moved_from;
  return impl ? impl->info : moved_from;
}

// A call on a moved-from permuter is a logic error of the caller's.
const DistributedEngineBase& engine_of(const std::shared_ptr<const DistributedEngineBase>& impl) {
  if (!impl)
    throw std::logic_error("moved-from DistributedPermuter: it has no engine; call a permuter built by a constructor "
                           "(or move one into it)");
  return *impl;
}

// The door's own checks of a call; when they refuse it, the engine announces the refusal to its peers first.
template <class Checks>
void refusing(const DistributedEngineBase& e, Checks&& checks) {
  try {
    checks();
  } catch (...) {
    e.refuse_call();
    throw;
  }
}

template <class T>
void check_count(const std::vector<T>& v, int local_ranks, const char* what, bool may_be_empty) {
  if ((may_be_empty && v.empty()) || v.size() == static_cast<std::size_t>(local_ranks)) return;
  throw std::invalid_argument(fmt::format("{} {} buffers for {} local rank(s); expected one per local rank{}", v.size(),
                                          what, local_ranks, may_be_empty ? " (or none)" : ""));
}

}  // namespace

// Defined in distributed_peer.cpp (a CUDA build) or below (a build without CUDA refuses device groups).
std::shared_ptr<const DistributedEngineBase> make_peer_engine(const Bmmc& map, int elem_bytes, std::vector<int> devices,
                                                              const DistributedOptions& options);

DistributedPermuter::DistributedPermuter(const Bmmc& map, int elem_bytes, DeviceGroup group,
                                         const DistributedOptions& options) {
  check_distributed_options(options, DistributedGroup::Devices);
  impl_ = make_peer_engine(map, elem_bytes, std::move(group.devices), options);
  check_engine_honours(options, impl_->info, DistributedGroup::Devices);
}

DistributedPermuter::DistributedPermuter(const Bmmc& map, int elem_bytes, SimulatedRanks group,
                                         const DistributedOptions& options) {
  check_distributed_options(options, DistributedGroup::Simulated);
  impl_ = std::make_shared<SimulatedEngine>(map, elem_bytes, group.ranks, options);
  check_engine_honours(options, impl_->info, DistributedGroup::Simulated);
}

DistributedPermuter::~DistributedPermuter() = default;
DistributedPermuter::DistributedPermuter(DistributedPermuter&&) noexcept = default;
DistributedPermuter& DistributedPermuter::operator=(DistributedPermuter&&) noexcept = default;

void DistributedPermuter::operator()(const std::vector<const void*>& in, const std::vector<void*>& out,
                                     const std::vector<void*>& scratch, const std::vector<StreamHandle>& streams) const {
  const DistributedEngineBase& e = engine_of(impl_);
  const DistributedInfo& i = e.info;
  refusing(e, [&] {
    if (i.in_place)
      throw std::invalid_argument("this permuter is in place (DistributedOptions::in_place): call permute_in_place(data)");
    check_count(in, i.local_ranks, "input", false);
    check_count(out, i.local_ranks, "output", false);
    check_count(scratch, i.local_ranks, "scratch", true);
    check_count(streams, i.local_ranks, "stream", true);
  });
  e.run(in, out, scratch, streams);
}

void DistributedPermuter::permute_in_place(const std::vector<void*>& data,
                                           const std::vector<StreamHandle>& streams) const {
  const DistributedEngineBase& e = engine_of(impl_);
  const DistributedInfo& i = e.info;
  refusing(e, [&] {
    if (!i.in_place)
      throw std::invalid_argument("this permuter is out of place: call operator()(in, out), or build it with "
                                  "DistributedOptions::in_place");
    check_count(data, i.local_ranks, "data", false);
    check_count(streams, i.local_ranks, "stream", true);
  });
  e.run_in_place(data, streams);
}

void DistributedPermuter::operator()(const void* in, const NcclWindow& out, const NcclWindow* scratch,
                                     StreamHandle stream) const {
  const DistributedEngineBase& e = engine_of(impl_);
  refusing(e, [&] {
    if (e.info.in_place)
      throw std::invalid_argument("this permuter is in place (DistributedOptions::in_place): call permute_in_place(data)");
  });
  e.run_window(in, out, scratch, stream);
}

void DistributedPermuter::permute_in_place(const NcclWindow& data, StreamHandle stream) const {
  const DistributedEngineBase& e = engine_of(impl_);
  refusing(e, [&] {
    if (!e.info.in_place)
      throw std::invalid_argument("this permuter is out of place: call operator()(in, out, scratch, stream), or "
                                  "build it with DistributedOptions::in_place");
  });
  e.run_window_in_place(data, stream);
}

DistEngine DistributedPermuter::engine() const noexcept { return info_of(impl_).engine; }
const std::string& DistributedPermuter::fallback_reason() const noexcept { return info_of(impl_).fallback_reason; }
bool DistributedPermuter::in_place() const noexcept { return info_of(impl_).in_place; }
int DistributedPermuter::n() const noexcept { return info_of(impl_).n; }
int DistributedPermuter::elem_bytes() const noexcept { return info_of(impl_).elem_bytes; }
int DistributedPermuter::ranks() const noexcept { return info_of(impl_).ranks; }
int DistributedPermuter::local_ranks() const noexcept { return info_of(impl_).local_ranks; }
int DistributedPermuter::first_rank() const noexcept { return info_of(impl_).first_rank; }
std::size_t DistributedPermuter::local_bytes() const noexcept { return info_of(impl_).local_bytes; }
std::size_t DistributedPermuter::scratch_bytes() const noexcept { return info_of(impl_).scratch_bytes; }
std::size_t DistributedPermuter::alignment() const noexcept { return info_of(impl_).alignment; }
int DistributedPermuter::pieces() const noexcept { return info_of(impl_).pieces; }

std::string DistributedPermuter::describe() const {
  if (!impl_) return "moved-from DistributedPermuter (no engine)";
  const DistributedInfo& i = impl_->info;
  std::string s = fmt::format("{} engine, {} rank(s) of {} bytes ({} here)", to_string(i.engine), i.ranks,
                              i.local_bytes, i.local_ranks);
  if (i.pieces) s += fmt::format(", {} {}", i.pieces, i.engine == DistEngine::StagedSwap ? "chunk(s)" : "piece(s)");
  if (!i.transport.empty()) s += fmt::format(", {}", i.transport);
  if (!i.fallback_reason.empty()) s += fmt::format(" (not the fastest: {})", i.fallback_reason);
  return s;
}

#if !BMMC_HAS_CUDA
std::shared_ptr<const DistributedEngineBase> make_peer_engine(const Bmmc&, int, std::vector<int> devices,
                                                              const DistributedOptions&) {
  throw std::invalid_argument(fmt::format(
      "a group of {} device(s): this build has no CUDA runtime; SimulatedRanks runs the distributed plan on the CPU",
      devices.size()));
}
#endif

}  // namespace bmmc
