// NVRTC: CUDA source text → cubin (real SASS) for one architecture, without a GPU.
//
// Generated kernels are self-contained (no `#include`, no include paths), declared `extern "C" __global__` so
// that their names are not mangled and the runtime can find them by name. We compile straight to SASS for the
// running device's arch (--gpu-architecture=sm_XX), not to PTX, so loading needs no driver JIT and the cubin can
// be cached on disk. Compilation needs no device, which is why CI compiles every emitted kernel (label nvrtc).
#pragma once

#include <string>
#include <vector>

namespace bmmc {

struct CompiledKernel {
  std::vector<char> cubin;  ///< an ELF image (starts with "\x7f" "ELF")
  std::string log;          ///< NVRTC's log; warnings may appear even on success
  double compile_ms = 0;    ///< wall time of nvrtcCompileProgram + nvrtcGetCUBIN
};

/// The options compile() passes: --gpu-architecture=sm_<arch>, -std=c++17, then `extra_options`.
std::vector<std::string> nvrtc_options(int arch, const std::vector<std::string>& extra_options = {});

/// Compiles `source` (`name` is the program name shown in the log, e.g. "bmmc_plan.cu") for sm_<arch>.
/// Throws NvrtcError carrying the log, the options and the source when NVRTC fails or when `arch` is not one
/// this NVRTC supports.
CompiledKernel compile(const std::string& source, const std::string& name, int arch,
                       const std::vector<std::string>& extra_options = {});

/// compile(...).cubin.
std::vector<char> compile_cubin(const std::string& source, const std::string& name, int arch,
                                const std::vector<std::string>& extra_options = {});

/// NVRTC's version, "major.minor" (e.g. "13.0"); part of every kernel cache key.
std::string nvrtc_version();

/// The real architectures this NVRTC can emit SASS for (e.g. 75, 80, ..., 90, 100, 120).
std::vector<int> nvrtc_supported_archs();

/// True if `data` starts with the ELF magic — the cheap sanity check we apply to cubins from disk.
bool looks_like_cubin(const std::vector<char>& data) noexcept;

}  // namespace bmmc
