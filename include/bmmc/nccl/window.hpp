// Symmetric memory for the fused NCCL engine (docs/DESIGN.md §9.4): one buffer per rank, registered together as
// an NCCL window (ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC: collective, the same size on every rank),
// with the address of every rank's buffer on this rank's device resolved once through NCCL's device API
// (ncclGetLsaPointer, nccl_device.h), so that a kernel can store straight into a peer's buffer over NVLink.
//
// NCCL registers only memory it can map into the peers (ncclMemAlloc, or cuMem allocations NCCL accepts), never
// cudaMalloc memory: allocate() does both steps. The caller owns the window and the communicator; construction
// and destruction are collective (every rank, in the same order as its other NCCL calls). Example, one process
// per GPU:
//   bmmc::NcclWindow out = bmmc::NcclWindow::allocate(comm, p.local_bytes());   // on every rank
//   p(in, out, nullptr, stream);                                               // NcclPushPermuter p
#pragma once

#include <nccl.h>

#include <cstddef>
#include <vector>

namespace bmmc {

class NcclWindow {
 public:
  /// Collective: ncclMemAlloc of `bytes` on the communicator's device, registered; the window owns the memory.
  static NcclWindow allocate(ncclComm_t comm, std::size_t bytes);
  NcclWindow() = default;  ///< no buffer (what a moved-from window also is); its destructor does nothing
  /// Collective: registers the caller's `bytes` at `buffer` (device memory of the communicator's device, from
  /// ncclMemAlloc or a cuMem allocation NCCL accepts, aligned to NCCL_WIN_REQUIRED_ALIGNMENT). Throws
  /// std::invalid_argument for a null, empty or unaligned buffer and an error carrying NCCL's message when NCCL
  /// refuses it (cudaMalloc memory, for one).
  NcclWindow(ncclComm_t comm, void* buffer, std::size_t bytes);
  /// Collective: deregisters, and frees what allocate() allocated. (A construction that fails after the collective
  /// registration — the address lookup — deregisters on this rank alone: treat the communicator as broken then.)
  ~NcclWindow();
  NcclWindow(NcclWindow&& other) noexcept;
  NcclWindow& operator=(NcclWindow&& other) noexcept;
  NcclWindow(const NcclWindow&) = delete;
  NcclWindow& operator=(const NcclWindow&) = delete;

  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  ncclComm_t comm() const noexcept { return comm_; }
  ncclWindow_t handle() const noexcept { return window_; }
  /// Rank r's buffer as this rank's device addresses it, for every rank of the communicator (peers()[own rank] is
  /// NCCL's own mapping of data()'s memory: another address, the same bytes); empty when some rank is not load/store
  /// accessible from this one (ranks on other nodes, GPUs without a peer path): then no kernel can reach them and
  /// lsa_note() says why.
  const std::vector<void*>& peers() const noexcept { return peers_; }
  const char* lsa_note() const noexcept { return peers_.empty() ? "not every rank is load/store accessible" : ""; }
  /// Throws std::invalid_argument ("<what>: …") unless this is a window of `comm` holding at least `bytes` on this
  /// rank and, with need_peers, every rank's buffer is addressable (peers() not empty). The engines' check.
  void require(ncclComm_t comm, std::size_t bytes, bool need_peers, const char* what) const;

 private:
  NcclWindow(ncclComm_t comm, void* buffer, std::size_t bytes, bool owned);
  void release() noexcept;

  ncclComm_t comm_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool owned_ = false;
  ncclWindow_t window_ = nullptr;
  std::vector<void*> peers_;
};

}  // namespace bmmc
