#include "bmmc/cuda/nvrtc.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "bmmc/cuda/error.hpp"

namespace bmmc {

std::vector<std::string> nvrtc_options(int arch, const std::vector<std::string>& extra_options) {
  std::vector<std::string> options = {fmt::format("--gpu-architecture=sm_{}", arch), "-std=c++17"};
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  return options;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check_nvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return fmt::format("{}.{}", major, minor);
}

std::vector<int> nvrtc_supported_archs() {
  int count = 0;
  check_nvrtc(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<size_t>(count));
  if (count > 0) check_nvrtc(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

bool looks_like_cubin(const std::vector<char>& data) noexcept {
  return data.size() >= 4 && data[0] == '\x7f' && data[1] == 'E' && data[2] == 'L' && data[3] == 'F';
}

namespace {

struct ProgramDeleter {
  void operator()(nvrtcProgram* p) const noexcept {
    if (p && *p) nvrtcDestroyProgram(p);
    delete p;
  }
};
using Program = std::unique_ptr<nvrtcProgram, ProgramDeleter>;

std::string program_log(nvrtcProgram prog) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

CompiledKernel compile(const std::string& source, const std::string& name, int arch,
                       const std::vector<std::string>& extra_options) {
  const std::vector<std::string> options = nvrtc_options(arch, extra_options);

  // NVRTC's own message for an unknown arch is a bare "invalid option"; say which archs would work instead.
  const std::vector<int> archs = nvrtc_supported_archs();
  if (std::find(archs.begin(), archs.end(), arch) == archs.end())
    throw NvrtcError(fmt::format("NVRTC {} cannot compile '{}' for sm_{}: supported architectures are sm_{}",
                                 nvrtc_version(), name, arch, fmt::join(archs, ", sm_")),
                     NVRTC_ERROR_INVALID_OPTION, {}, options, source);

  const auto start = std::chrono::steady_clock::now();
  Program prog(new nvrtcProgram(nullptr));
  check_nvrtc(nvrtcCreateProgram(prog.get(), source.c_str(), name.c_str(), 0, nullptr, nullptr),
              "nvrtcCreateProgram", options, source);

  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const std::string& o : options) argv.push_back(o.c_str());
  const nvrtcResult result = nvrtcCompileProgram(*prog, static_cast<int>(argv.size()), argv.data());
  CompiledKernel out;
  out.log = program_log(*prog);
  if (result != NVRTC_SUCCESS)
    throw NvrtcError(fmt::format("NVRTC failed to compile '{}' for sm_{}: {}", name, arch,
                                 nvrtcGetErrorString(result)),
                     result, out.log, options, source);

  size_t size = 0;
  check_nvrtc(nvrtcGetCUBINSize(*prog, &size), "nvrtcGetCUBINSize", options, source);
  out.cubin.resize(size);
  if (size > 0) check_nvrtc(nvrtcGetCUBIN(*prog, out.cubin.data()), "nvrtcGetCUBIN", options, source);
  if (!looks_like_cubin(out.cubin))
    throw NvrtcError(fmt::format("NVRTC returned no cubin for '{}' (sm_{}, {} bytes)", name, arch, size),
                     NVRTC_ERROR_INTERNAL_ERROR, out.log, options, source);
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::vector<char> compile_cubin(const std::string& source, const std::string& name, int arch,
                                const std::vector<std::string>& extra_options) {
  return compile(source, name, arch, extra_options).cubin;
}

}  // namespace bmmc
