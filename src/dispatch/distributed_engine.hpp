// What stands behind the distributed front door (bmmc/distributed.hpp): the interface every engine of every group
// implements — the GPUs of one process (src/dispatch/distributed_peer.cpp), an NCCL communicator (src/nccl), the
// simulated ranks (src/dispatch/distributed.cpp), the caller's collectives (src/dispatch/distributed_exchange.cpp). A backend that adds a group or an engine implements it and
// keeps the door's rules (docs/DESIGN.md §9): every argument checked before the first write, the ranks' agreement
// before data moves where ranks are other processes, calls stream-ordered, engine() never Auto. Not for callers:
// they use DistributedPermuter.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bmmc/distributed.hpp"

namespace bmmc {

/// What the door reports, filled by the engine when it is built.
struct DistributedInfo {
  DistEngine engine = DistEngine::Auto;
  std::string fallback_reason;
  bool in_place = false;
  int n = 0, elem_bytes = 0, ranks = 0, local_ranks = 0, first_rank = 0, pieces = 0;
  std::size_t local_bytes = 0, scratch_bytes = 0, alignment = 1;
  std::string transport;  ///< how the bytes move, where the engine's name does not say it ("" otherwise)
};

class DistributedEngineBase {
 public:
  virtual ~DistributedEngineBase() = default;
  /// Out of place; the door has checked the vectors' sizes (local_ranks; scratch and streams may be empty).
  virtual void run(const std::vector<const void*>& in, const std::vector<void*>& out,
                   const std::vector<void*>& scratch, const std::vector<StreamHandle>& streams) const = 0;
  /// In place; the door has checked the sizes.
  virtual void run_in_place(const std::vector<void*>& data, const std::vector<StreamHandle>& streams) const = 0;
  /// The NCCL window calls; other groups have no windows (the default throws std::invalid_argument).
  virtual void run_window(const void* in, const NcclWindow& out, const NcclWindow* scratch, StreamHandle stream) const;
  virtual void run_window_in_place(const NcclWindow& data, StreamHandle stream) const;
  /// Called when the door refuses a call before run: an engine whose calls agree with other processes' first takes
  /// part in that agreement as refused, so that its peers throw instead of waiting (the default does nothing).
  virtual void refuse_call() const noexcept {}

  DistributedInfo info;
};

/// The kinds of group behind the door, for the checks of which options each honours.
enum class DistributedGroup { Devices, Nccl, Simulated, Exchange };

/// The options every group checks before it plans anything (the door's constructors call it): the engines'
/// enumerators, pieces and depth, that the engine fits in_place, and that every option `group` cannot honour keeps
/// its default (the table in bmmc/distributed.hpp). Throws std::invalid_argument naming the option, the group and
/// what would honour it.
void check_distributed_options(const DistributedOptions& options, DistributedGroup group);
/// The options that only the engine chosen can honour, checked once it is built (the door's constructors call it):
/// depth away from its default where the engine that runs is not pieces (no ring of buffers reads it). Throws
/// std::invalid_argument naming the option, the engine and what would honour it.
void check_engine_honours(const DistributedOptions& options, const DistributedInfo& info, DistributedGroup group);


}  // namespace bmmc
