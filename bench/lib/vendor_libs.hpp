// The vendor libraries the GPU benchmarks measure against without linking them: NVIDIA cuStateVec (the
// in-place anchors, one GPU and several) and NCCL (the all-to-all anchor of several GPUs). Each is opened with
// dlopen when a benchmark first asks for it, so that the CLI starts and runs on machines that have neither
// (the rows then say why they are missing). The entry points are declared from the libraries' documented C
// APIs (custatevec.h, nccl.h): handles and communicators are opaque pointers, statuses ints (0 = success).
#pragma once

#include <cuda_runtime_api.h>
#include <library_types.h>
#include <vector_types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace bmmc::bench_detail {

struct CuStateVec {
  using Create = int (*)(void** handle);
  using Destroy = int (*)(void* handle);
  using Version = std::size_t (*)();
  using Swap = int (*)(void* handle, void* sv, cudaDataType_t type, std::uint32_t n_index_bits, const int2* swaps,
                       std::uint32_t n_swaps, const std::int32_t* mask_bits, const std::int32_t* mask_ordering,
                       std::uint32_t mask_len);
  /// custatevecMultiDeviceSwapIndexBits: one handle and one sub state vector per device; network type 1 = SWITCH.
  using MultiDeviceSwap = int (*)(void** handles, std::uint32_t n_handles, void** sub_svs, cudaDataType_t type,
                                  std::uint32_t n_global_bits, std::uint32_t n_local_bits, const int2* swaps,
                                  std::uint32_t n_swaps, const std::int32_t* mask_bits,
                                  const std::int32_t* mask_ordering, std::uint32_t mask_len, int network_type);
  Create create = nullptr;
  Destroy destroy = nullptr;
  Version version = nullptr;
  Swap swap = nullptr;
  MultiDeviceSwap multi_device_swap = nullptr;  ///< null in versions without it
};

/// libcustatevec.so.1 (or $BMMC_CUSTATEVEC_LIB); nullopt with the reason in *why when it cannot be opened.
std::optional<CuStateVec> load_custatevec(std::string* why);

struct Nccl {
  using CommInitAll = int (*)(void** comms, int ndev, const int* devices);
  using CommDestroy = int (*)(void* comm);
  using Group = int (*)();
  using Send = int (*)(const void* buf, std::size_t count, int type, int peer, void* comm, cudaStream_t stream);
  using Recv = int (*)(void* buf, std::size_t count, int type, int peer, void* comm, cudaStream_t stream);
  using ErrorString = const char* (*)(int result);
  static constexpr int kUint8 = 1;  ///< ncclUint8
  CommInitAll comm_init_all = nullptr;
  CommDestroy comm_destroy = nullptr;
  Group group_start = nullptr, group_end = nullptr;
  Send send = nullptr;
  Recv recv = nullptr;
  ErrorString error_string = nullptr;
  /// Throws std::runtime_error naming `call` and NCCL's message when status is not ncclSuccess.
  void check(int status, const char* call) const;
};

/// libnccl.so.2 (or $BMMC_NCCL_LIB); nullopt with the reason in *why when it cannot be opened.
std::optional<Nccl> load_nccl(std::string* why);

}  // namespace bmmc::bench_detail
