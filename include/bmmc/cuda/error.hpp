// Errors of the CUDA runtime and of NVRTC as exceptions that carry what failed.
//
// The library never prints or exits: every failing CUDA call becomes a CudaError naming the call text and the
// cudaError_t (e.g. "cudaMalloc(&p, 4294967296) failed: out of memory (cudaErrorMemoryAllocation)"), and a
// failed run-time compilation becomes an NvrtcError carrying the compiler log, the options and the source, so
// that a bug report about generated code can be reproduced from the exception alone (docs/DESIGN.md §5).
#pragma once

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace bmmc {

struct CudaError : std::runtime_error {
  /// `call` is the failing expression or a description of it; `context`, if not empty, is appended after
  /// the error text ("...: invalid argument (cudaErrorInvalidValue); <context>").
  CudaError(cudaError_t code, std::string call, const std::string& context = {});

  cudaError_t code() const noexcept { return code_; }
  const std::string& call() const noexcept { return call_; }

 private:
  cudaError_t code_;
  std::string call_;
};

/// Throws CudaError when `status` is not cudaSuccess. Also clears the runtime's last-error slot for
/// non-sticky errors so that a later, unrelated cudaGetLastError does not report this one again.
void check(cudaError_t status, const char* call);
void check(cudaError_t status, const char* call, const std::string& context);

struct NvrtcError : std::runtime_error {
  /// what() = summary, then the compiler log on the following lines (when there is one).
  NvrtcError(std::string summary, nvrtcResult result, std::string log, std::vector<std::string> options,
             std::string source);

  nvrtcResult result() const noexcept { return result_; }
  const std::string& summary() const noexcept { return summary_; }
  const std::string& log() const noexcept { return log_; }
  const std::vector<std::string>& options() const noexcept { return options_; }
  const std::string& source() const noexcept { return source_; }

 private:
  nvrtcResult result_;
  std::string summary_;
  std::string log_;
  std::vector<std::string> options_;
  std::string source_;
};

/// Throws NvrtcError (empty log, given options/source) when `status` is not NVRTC_SUCCESS. Public, like
/// check(), for code that calls NVRTC itself next to compile_cuda (nvrtc.hpp).
void check_nvrtc(nvrtcResult status, const char* call, const std::vector<std::string>& options = {},
                 const std::string& source = {});

}  // namespace bmmc

/// Evaluates a CUDA runtime call once and throws bmmc::CudaError naming the call text on failure.
#define BMMC_CUDA_CHECK(expr) ::bmmc::check((expr), #expr)
