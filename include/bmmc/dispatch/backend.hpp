// Backends: where a permutation runs, and which of them this build and this machine can run.
//
// The library decides, not its callers: `Auto` resolves to the GPU when this build has the CUDA runtime and
// a GPU is usable, else to the CPU. A backend is where ONE array is permuted (bmmc/permute.hpp); in place is a
// flag of its options, not a backend. An array split over several GPUs or ranks goes through the distributed
// front door (bmmc/distributed.hpp), where the group — devices of this process, an NCCL communicator, simulated
// ranks — says where it runs. A new backend adds an enumerator here and a branch in bmmc/permute.hpp.
#pragma once

#include <string_view>
#include <vector>

namespace bmmc {

enum class Backend { Auto, Cpu, Cuda };

/// "auto", "cpu", "cuda" ("?" for a value outside the enumeration).
const char* to_string(Backend b) noexcept;
/// The inverse of to_string; throws std::invalid_argument listing the names otherwise.
Backend parse_backend(std::string_view name);
/// The names parse_backend accepts, in order.
const std::vector<std::string_view>& backend_names() noexcept;

/// Was the library built with the CUDA runtime?
bool has_cuda_build() noexcept;
/// Throws std::invalid_argument unless b is one of the Backends (a value cast from an integer may not be).
void check_backend(Backend b);
/// Can `b` run here (Auto and Cpu always can; Cuda needs a CUDA build and a usable GPU; a value outside the
/// enumeration never)? Never throws.
bool backend_available(Backend b) noexcept;
/// Auto → Cuda when available, else Cpu; Cpu → Cpu; Cuda → Cuda, or std::invalid_argument saying why it is
/// unavailable (no CUDA in this build, or no usable GPU / driver) or that `requested` names no backend.
Backend resolve_backend(Backend requested);

}  // namespace bmmc
