#include "cli_common.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/spec.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cpu/reference.hpp"
#if BMMC_HAS_CUDA
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/permute.hpp"
#endif

namespace bmmc::cli {

void add_spec_options(CLI::App* sub, SpecOptions& opts) {
  sub->add_option("SPEC", opts.spec, "The permutation, in the spec language below (quote it for the shell)")
      ->required();
  sub->add_option("--n", opts.n, "Number of index bits (arrays of 2^n elements) where SPEC does not define it")
      ->check(CLI::Range(0, 64));
}

void add_spec_footer(CLI::App* sub) { sub->footer(std::string(kSpecHelp) + "\n"); }

Bmmc parse_spec_options(const SpecOptions& opts) {
  try {
    return parse_spec(opts.spec, opts.n);
  } catch (const SpecError& e) {
    if (e.column() <= 0) throw UsageError(e.what());
    // Show where: the spec, then a caret under the column (columns are bytes, like the spec).
    throw UsageError(fmt::format("{}\n  {}\n  {}^", e.what(), opts.spec, std::string(e.column() - 1, ' ')));
  }
}

std::uint64_t parse_number_arg(const std::string& text, const std::string& what) {
  try {
    return parse_spec_number(text);
  } catch (const SpecError& e) {
    throw UsageError(fmt::format("{} '{}' is not a number (decimal, 0x... or 0b...): {}", what, text, e.what()));
  }
}

Backend parse_backend(const std::string& name) {
  if (name == "auto") return Backend::Auto;
  if (name == "cpu") return Backend::Cpu;
  if (name == "cuda") return Backend::Cuda;
  throw UsageError(fmt::format("unknown backend '{}'; expected auto, cpu or cuda", name));
}

const char* to_string(Backend b) noexcept {
  switch (b) {
    case Backend::Auto: return "auto";
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
  }
  return "auto";
}

void add_backend_option(CLI::App* sub, std::string& backend) {
  sub->add_option("--backend", backend,
                  "Where to run: auto (the GPU when available, else the CPU), cpu, or cuda (an error when "
                  "unavailable)")
      ->check(CLI::IsMember(kBackendNames))
      ->capture_default_str();
}

namespace {
bool cuda_usable() {
#if BMMC_HAS_CUDA
  return gpu_available();
#else
  return false;
#endif
}
}  // namespace

Backend resolve_backend(Backend requested) {
  switch (requested) {
    case Backend::Auto: return cuda_usable() ? Backend::Cuda : Backend::Cpu;
    case Backend::Cpu: return Backend::Cpu;
    case Backend::Cuda:
      if (cuda_usable()) return Backend::Cuda;
      throw UsageError(
#if BMMC_HAS_CUDA
          "backend 'cuda' is not available: no usable CUDA GPU (or driver) on this machine; use --backend cpu or "
          "auto"
#else
          "backend 'cuda' is not available: this bmmc was built without the CUDA toolkit; use --backend cpu or auto"
#endif
      );
  }
  return Backend::Cpu;
}

Backend run_permute(const Bmmc& p, const void* in, void* out, int elem_bytes, Backend backend) {
  const Backend b = resolve_backend(backend);
  switch (b) {
    case Backend::Cpu: permute_cpu(p, in, out, elem_bytes); break;
#if BMMC_HAS_CUDA
    case Backend::Cuda: {
      // Host arrays: copy in, permute on the device, copy out.
      check_buffers(in, out, p.n(), elem_bytes);
      const std::size_t bytes = array_bytes(p.n(), elem_bytes);
      DeviceBuffer din(bytes), dout(bytes);
      din.upload(in, bytes);
      permute(p, din.get(), dout.get(), elem_bytes);
      dout.download(out, bytes);
      break;
    }
#endif
    default: throw std::logic_error("run_permute: unresolved backend");
  }
  return b;
}

void permute_file(const SpecOptions& spec, int elem_bytes, const std::string& in_path, const std::string& out_path,
                  const std::string& backend_name) {
  const Bmmc p = parse_spec_options(spec);
  check_elem_bytes(elem_bytes);
  const std::size_t bytes = array_bytes(p.n(), elem_bytes);
  const Backend backend = resolve_backend(parse_backend(backend_name));
  std::error_code ec;
  const std::uintmax_t in_size = std::filesystem::file_size(in_path, ec);
  if (!ec && in_size != bytes)
    throw UsageError(fmt::format("'{}' has {} bytes, but an array of 2^{} elements of {} bytes has {} bytes", in_path,
                                 in_size, p.n(), elem_bytes, bytes));
  const std::vector<std::byte> in = read_file(in_path, bytes);
  // Element-aligned buffers: std::byte vectors only promise new's alignment, 16 on this platform, but say so.
  std::vector<std::byte> out(bytes);
  static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= 16, "buffers must be aligned to 16-byte elements");
  run_permute(p, in.data(), out.data(), elem_bytes, backend);
  write_file_atomic(out_path, out.data(), out.size());
}

std::vector<std::byte> read_file(const std::string& path, std::optional<std::size_t> expected_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw UsageError(fmt::format("cannot read '{}': {}", path,
                                 std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw UsageError(fmt::format("cannot read '{}': {}", path, ec.message()));
  if (expected_bytes && size != *expected_bytes)
    throw UsageError(fmt::format("'{}' has {} bytes but {} bytes were expected", path, size, *expected_bytes));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UsageError(fmt::format("cannot open '{}' for reading: {}", path, std::strerror(errno)));
  std::vector<std::byte> data(static_cast<std::size_t>(size));
  if (!f.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(size)))
    throw std::runtime_error(fmt::format("reading '{}' failed after {} bytes", path, f.gcount()));
  return data;
}

void write_file_atomic(const std::string& path, const void* data, std::size_t bytes) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".bmmc-XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw UsageError(fmt::format("cannot create a temporary file next to '{}': {}", path, std::strerror(errno)));
  const auto fail = [&](const std::string& what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw std::runtime_error(fmt::format("{} '{}': {}", what, path, std::strerror(err)));
  };
  const auto* p = static_cast<const char*>(data);
  std::size_t left = bytes;
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("writing");
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  // mkstemp creates the file with mode 0600; give it the usual mode of a new file.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error(fmt::format("closing the temporary file for '{}': {}", path, std::strerror(err)));
  }
  if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error(fmt::format("cannot replace '{}': {}", path, std::strerror(err)));
  }
}

nlohmann::ordered_json bmmc_json(const Bmmc& p) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (BitVec r : p.matrix().row_list()) rows.push_back(r);
  return {{"n", p.n()}, {"rows", rows}, {"c", p.complement()}, {"class", to_string(p.classify())}};
}

void print_json(const nlohmann::ordered_json& j) { fmt::print("{}\n", j.dump()); }

}  // namespace bmmc::cli
