// Internal to the NCCL layer: the one step that needs NCCL's device API. For a window registered on every rank of
// a load/store-accessible (LSA) team, the address of each LSA rank's buffer on the calling rank's device is what
// ncclGetLsaPointer returns inside a kernel; this runs that kernel once and brings the addresses to the host, so
// that the generated kernels (NVRTC, no NCCL headers) take them as a plain table of pointers.
#pragma once

#include <nccl.h>

#include <vector>

namespace bmmc::nccl_detail {

/// The address of every rank's buffer of `window` (offset 0) on the current device, in rank order, when every rank
/// of `comm` is in this rank's LSA team (the team is then the world in world order); empty otherwise. `own` is
/// this rank's buffer (the whole answer for a communicator of one rank). Synchronous.
std::vector<void*> lsa_pointers(ncclComm_t comm, ncclWindow_t window, void* own);

}  // namespace bmmc::nccl_detail

namespace bmmc::nccl_detail {

/// Loads the kernel behind lsa_pointers on the current device now (a no-op once loaded): a kernel loaded lazily
/// while a peer's collective kernels wait for this rank can deadlock the ranks (prepare_launch, launch.hpp).
void prepare_lsa_pointers();

/// Whether every rank of `comm` is load/store accessible from this one (NCCL's LSA team is the whole world).
bool every_rank_load_store_accessible(ncclComm_t comm);

}  // namespace bmmc::nccl_detail
