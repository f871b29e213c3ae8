#include "bmmc/cuda/error.hpp"

#include <fmt/format.h>

#include <utility>

namespace bmmc {

namespace {
// "<call> failed: <description> (<cudaErrorName>)" — the text CudaError::what() starts with.
std::string cuda_error_message(cudaError_t code, const std::string& call) {
  // Both lookups are pure tables inside cudart: safe without a driver and before any context exists.
  const char* name = cudaGetErrorName(code);
  const char* text = cudaGetErrorString(code);
  return fmt::format("{} failed: {} ({})", call, text ? text : "unknown error", name ? name : "?");
}

std::string with_context(std::string msg, const std::string& context) {
  if (!context.empty()) msg += "; " + context;
  return msg;
}
}  // namespace

CudaError::CudaError(cudaError_t code, std::string call, const std::string& context)
    : std::runtime_error(with_context(cuda_error_message(code, call), context)),
      code_(code),
      call_(std::move(call)) {}

void check(cudaError_t status, const char* call) { check(status, call, std::string{}); }

void check(cudaError_t status, const char* call, const std::string& context) {
  if (status == cudaSuccess) return;
  // A non-sticky error stays in the per-thread last-error slot; reading it here keeps later checks honest.
  (void)cudaGetLastError();
  throw CudaError(status, call, context);
}

namespace {
std::string nvrtc_message(const std::string& summary, const std::string& log) {
  if (log.empty()) return summary;
  std::string msg = summary;
  msg += '\n';
  msg += log;
  return msg;
}
}  // namespace

NvrtcError::NvrtcError(std::string summary, nvrtcResult result, std::string log,
                       std::vector<std::string> options, std::string source)
    : std::runtime_error(nvrtc_message(summary, log)),
      result_(result),
      summary_(std::move(summary)),
      log_(std::move(log)),
      options_(std::move(options)),
      source_(std::move(source)) {}

void check_nvrtc(nvrtcResult status, const char* call, const std::vector<std::string>& options,
                 const std::string& source) {
  if (status == NVRTC_SUCCESS) return;
  const char* text = nvrtcGetErrorString(status);
  throw NvrtcError(fmt::format("{} failed: {}", call, text ? text : "unknown NVRTC error"), status, {},
                   options, source);
}

}  // namespace bmmc
