// Backend names and availability (see backend.hpp).
#include "bmmc/dispatch/backend.hpp"

#include <fmt/format.h>

#include <stdexcept>

#if BMMC_HAS_CUDA
#include "bmmc/cuda/device.hpp"
#endif

namespace bmmc {

const char* to_string(Backend b) noexcept {
  switch (b) {
    case Backend::Auto: return "auto";
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
  }
  return "?";
}

const std::vector<std::string_view>& backend_names() noexcept {
  static const std::vector<std::string_view> names = {"auto", "cpu", "cuda"};
  return names;
}

Backend parse_backend(std::string_view name) {
  for (Backend b : {Backend::Auto, Backend::Cpu, Backend::Cuda})
    if (name == to_string(b)) return b;
  throw std::invalid_argument(fmt::format("unknown backend '{}'; expected auto, cpu or cuda", name));
}

bool has_cuda_build() noexcept {
#if BMMC_HAS_CUDA
  return true;
#else
  return false;
#endif
}

namespace {

bool names_a_backend(Backend b) { return static_cast<unsigned>(b) <= static_cast<unsigned>(Backend::Cuda); }

}  // namespace

void check_backend(Backend b) {
  if (!names_a_backend(b))
    throw std::invalid_argument(
        fmt::format("the backend holds {}, which names no backend; expected auto, cpu or cuda", static_cast<int>(b)));
}

bool backend_available(Backend b) noexcept {
  if (!names_a_backend(b)) return false;
  if (b != Backend::Cuda) return true;
#if BMMC_HAS_CUDA
  return gpu_available();
#else
  return false;
#endif
}

Backend resolve_backend(Backend requested) {
  check_backend(requested);
  switch (requested) {
    case Backend::Auto: return backend_available(Backend::Cuda) ? Backend::Cuda : Backend::Cpu;
    case Backend::Cpu: return Backend::Cpu;
    case Backend::Cuda:
      if (backend_available(Backend::Cuda)) return Backend::Cuda;
      throw std::invalid_argument(
          has_cuda_build()
              ? "backend 'cuda' is not available: no usable CUDA GPU (or driver) on this machine; use the cpu or "
                "auto backend"
              : "backend 'cuda' is not available: this bmmc was built without the CUDA toolkit; use the cpu or auto "
                "backend");
  }
  return Backend::Cpu;  // not reached: check_backend refused anything else
}

}  // namespace bmmc
