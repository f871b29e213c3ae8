// Failures of NCCL as an exception that carries what failed, like CudaError for the CUDA runtime
// (bmmc/cuda/error.hpp): the call, NCCL's result code and its words for it, and the communicator's last error
// (ncclGetLastError). No NCCL header: a program catches NcclError around a DistributedPermuter without nccl.h.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace bmmc {

struct NcclError : std::runtime_error {
  /// what() = "<call> failed: <ncclGetErrorString> (<result>)[: <ncclGetLastError>]".
  NcclError(int result, std::string call, const std::string& what)
      : std::runtime_error(what), result_(result), call_(std::move(call)) {}

  /// The ncclResult_t the call returned.
  int result() const noexcept { return result_; }
  const std::string& call() const noexcept { return call_; }

 private:
  int result_;
  std::string call_;
};

}  // namespace bmmc
