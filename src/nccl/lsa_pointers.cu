// ncclGetLsaPointer for every LSA rank of a window (see lsa_pointers.hpp). Compiled by nvcc: nccl_device.h's
// functions are device inlines.
#include "lsa_pointers.hpp"

#include <cuda_runtime_api.h>
#include <nccl_device.h>

#include "bmmc/cuda/error.hpp"
#include "collectives.hpp"

namespace bmmc::nccl_detail {

namespace {

__global__ void lsa_pointers_kernel(ncclWindow_t window, int lsa_ranks, void** out) {
  for (int peer = static_cast<int>(threadIdx.x); peer < lsa_ranks; peer += static_cast<int>(blockDim.x))
    out[peer] = ncclGetLsaPointer(window, 0, peer);
}

}  // namespace

void prepare_lsa_pointers() {
  cudaFuncAttributes attributes{};
  check(cudaFuncGetAttributes(&attributes, lsa_pointers_kernel), "cudaFuncGetAttributes (lsa_pointers_kernel)");
}

bool every_rank_load_store_accessible(ncclComm_t comm) {
  int ranks = 0;
  nccl_check(ncclCommCount(comm, &ranks), "ncclCommCount", comm);
  return ncclTeamLsa(comm).nRanks == ranks;
}

std::vector<void*> lsa_pointers(ncclComm_t comm, ncclWindow_t window, void* own) {
  int ranks = 0;
  nccl_check(ncclCommCount(comm, &ranks), "ncclCommCount", comm);
  // A communicator of one rank has no peers: NCCL hands out a window with no LSA mapping behind it (reading its
  // base faulted on an H100), and the only address needed is the rank's own.
  if (ranks == 1) return {own};
  if (!window || !every_rank_load_store_accessible(comm)) return {};
  const int lsa_ranks = ncclTeamLsa(comm).nRanks;
  std::vector<void*> host(static_cast<std::size_t>(lsa_ranks));
  void** device = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&device), host.size() * sizeof(void*)), "cudaMalloc (LSA pointers)");
  lsa_pointers_kernel<<<1, 128>>>(window, lsa_ranks, device);
  const cudaError_t launched = cudaGetLastError();
  const cudaError_t copied = cudaMemcpy(host.data(), device, host.size() * sizeof(void*), cudaMemcpyDeviceToHost);
  cudaFree(device);
  check(launched, "lsa_pointers_kernel launch");
  check(copied, "cudaMemcpy (LSA pointers)");
  return host;
}

}  // namespace bmmc::nccl_detail
