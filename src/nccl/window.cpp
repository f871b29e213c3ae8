// Symmetric memory windows (see window.hpp).
#include "bmmc/nccl/window.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <utility>

#include "bmmc/cuda/device.hpp"
#include "collectives.hpp"
#include "lsa_pointers.hpp"

namespace bmmc {

using namespace nccl_detail;

NcclWindow NcclWindow::allocate(ncclComm_t comm, std::size_t bytes) {
  if (!comm) throw std::invalid_argument("NcclWindow::allocate: the NCCL communicator is null");
  if (bytes == 0) throw std::invalid_argument("NcclWindow::allocate: 0 bytes (a window needs a buffer)");
  int device = 0;
  nccl_check(ncclCommCuDevice(comm, &device), "ncclCommCuDevice", comm);
  ScopedDevice on(device);
  void* p = nullptr;
  nccl_check(ncclMemAlloc(&p, bytes), "ncclMemAlloc", comm);
  try {
    return NcclWindow(comm, p, bytes, true);
  } catch (...) {
    ncclMemFree(p);
    throw;
  }
}

NcclWindow::NcclWindow(ncclComm_t comm, void* buffer, std::size_t bytes) : NcclWindow(comm, buffer, bytes, false) {}

NcclWindow::NcclWindow(ncclComm_t comm, void* buffer, std::size_t bytes, bool owned) {
  if (!comm) throw std::invalid_argument("NcclWindow: the NCCL communicator is null");
  if (!buffer || bytes == 0)
    throw std::invalid_argument(fmt::format("NcclWindow: buffer {} of {} bytes (expected a non-empty device buffer)",
                                            buffer, bytes));
  if (reinterpret_cast<std::uintptr_t>(buffer) % NCCL_WIN_REQUIRED_ALIGNMENT != 0)
    throw std::invalid_argument(fmt::format("NcclWindow: buffer {} is not aligned to {} bytes (ncclMemAlloc's is)",
                                            buffer, NCCL_WIN_REQUIRED_ALIGNMENT));
  int device = 0;
  nccl_check(ncclCommCuDevice(comm, &device), "ncclCommCuDevice", comm);
  ScopedDevice on(device);
  prepare_lsa_pointers();  // before the collective: no lazy kernel load between collectives
  nccl_check(ncclCommWindowRegister(comm, buffer, bytes, &window_, NCCL_WIN_COLL_SYMMETRIC),
             "ncclCommWindowRegister (the buffer must come from ncclMemAlloc or NCCL-compatible cuMem memory)", comm);
  comm_ = comm;
  data_ = buffer;
  bytes_ = bytes;
  owned_ = owned;
  try {
    peers_ = lsa_pointers(comm, window_, buffer);
  } catch (...) {
    owned_ = false;  // allocate() frees the memory it allocated when construction fails
    release();
    throw;
  }
}

void NcclWindow::require(ncclComm_t comm, std::size_t bytes, bool need_peers, const char* what) const {
  if (!data_ || comm_ != comm)
    throw std::invalid_argument(fmt::format("{}: the window is {} (expected a window of the permuter's communicator)",
                                            what, data_ ? "of another communicator" : "empty (moved from)"));
  if (bytes_ < bytes)
    throw std::invalid_argument(
        fmt::format("{}: the window holds {} bytes, the rank's array needs {}", what, bytes_, bytes));
  if (need_peers && peers_.empty()) throw std::invalid_argument(fmt::format("{}: {}", what, lsa_note()));
}

void NcclWindow::release() noexcept {
  if (!comm_) return;
  int previous = 0, device = 0;
  const bool switched = cudaGetDevice(&previous) == cudaSuccess && ncclCommCuDevice(comm_, &device) == ncclSuccess &&
                        cudaSetDevice(device) == cudaSuccess;
  if (window_) ncclCommWindowDeregister(comm_, window_);
  if (owned_ && data_) ncclMemFree(data_);
  if (switched) cudaSetDevice(previous);  // the caller's current device is left as it was
  comm_ = nullptr;
  window_ = nullptr;
  data_ = nullptr;
  peers_.clear();
}

NcclWindow::~NcclWindow() { release(); }

NcclWindow::NcclWindow(NcclWindow&& o) noexcept
    : comm_(std::exchange(o.comm_, nullptr)),
      data_(std::exchange(o.data_, nullptr)),
      bytes_(std::exchange(o.bytes_, 0)),
      owned_(std::exchange(o.owned_, false)),
      window_(std::exchange(o.window_, nullptr)),
      peers_(std::move(o.peers_)) {}

NcclWindow& NcclWindow::operator=(NcclWindow&& o) noexcept {
  if (this != &o) {
    release();
    comm_ = std::exchange(o.comm_, nullptr);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    owned_ = std::exchange(o.owned_, false);
    window_ = std::exchange(o.window_, nullptr);
    peers_ = std::move(o.peers_);
  }
  return *this;
}

}  // namespace bmmc
