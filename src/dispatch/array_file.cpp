// Raw array files (see array_file.hpp).
#include "bmmc/dispatch/array_file.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "bmmc/core/buffers.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/distributed.hpp"

namespace bmmc {

namespace {

// A stream — standard input ("-"), a pipe, a terminal, a character device — read in order to its end; with
// `expected_bytes`, at most one byte past them is read, so that a longer stream (/dev/zero) is refused without
// reading it all.
std::vector<std::byte> read_stream(const std::string& path, std::optional<std::size_t> expected_bytes) {
  const bool std_in = path == "-";
  const std::string name = std_in ? std::string("standard input") : fmt::format("'{}'", path);
  const int fd = std_in ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::invalid_argument(fmt::format("cannot open {} for reading: {}", name, std::strerror(errno)));
  std::vector<std::byte> data(expected_bytes ? *expected_bytes : std::size_t{1} << 16);
  std::size_t got = 0;
  std::byte extra{};
  for (;;) {
    if (got == data.size() && !expected_bytes) data.resize(2 * data.size());
    const bool past = got == data.size();  // only with expected_bytes: one byte more means too long
    const ssize_t r = ::read(fd, past ? &extra : data.data() + got, past ? 1 : data.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int err = errno;
      if (!std_in) ::close(fd);
      throw std::runtime_error(fmt::format("reading {} failed after {} bytes: {}", name, got, std::strerror(err)));
    }
    if (r == 0) break;
    if (past) {
      if (!std_in) ::close(fd);
      throw std::invalid_argument(
          fmt::format("{} holds more than the {} bytes expected", name, *expected_bytes));
    }
    got += static_cast<std::size_t>(r);
  }
  if (!std_in) ::close(fd);
  if (expected_bytes && got != *expected_bytes)
    throw std::invalid_argument(
        fmt::format("{} ended after {} bytes but {} bytes were expected", name, got, *expected_bytes));
  data.resize(got);
  return data;
}

}  // namespace

std::vector<std::byte> read_array_file(const std::string& path, std::optional<std::size_t> expected_bytes) {
  std::error_code ec;
  if (path == "-") return read_stream(path, expected_bytes);
  if (const auto st = std::filesystem::status(path, ec);
      std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) && !std::filesystem::is_directory(st))
    return read_stream(path, expected_bytes);
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::invalid_argument(fmt::format("cannot read '{}': {}", path,
                                            std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw std::invalid_argument(fmt::format("cannot read '{}': {}", path, ec.message()));
  if (expected_bytes && size != *expected_bytes)
    throw std::invalid_argument(
        fmt::format("'{}' has {} bytes but {} bytes were expected", path, size, *expected_bytes));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument(fmt::format("cannot open '{}' for reading: {}", path, std::strerror(errno)));
  std::vector<std::byte> data(static_cast<std::size_t>(size));
  if (!f.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(size)))
    throw std::runtime_error(fmt::format("reading '{}' failed after {} bytes", path, f.gcount()));
  return data;
}

namespace {

// Writes all of `bytes` to fd; false (errno set) on a failed write.
bool write_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t w = ::write(fd, p, bytes);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    bytes -= static_cast<std::size_t>(w);
  }
  return true;
}

// While alive, SIGPIPE is blocked in this thread, so that a write to a pipe whose reader went away fails with
// EPIPE (reported) instead of killing the process with no message; a SIGPIPE raised meanwhile is consumed.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~SigpipeBlocked() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      const timespec now{0, 0};
      while (sigtimedwait(&pipe, nullptr, &now) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t old_{};
  bool was_pending_ = false;
};

// Where an output goes. Symbolic links are followed hop by hop (a dangling link names the file to create; a
// relative link is read from its own folder) to the file to replace. A device, pipe or socket cannot be replaced
// (renaming a file over /dev/null would make it a plain file), and a link into /proc or /dev (/dev/stdout,
// /dev/fd/N, /proc/self/fd/N: the file behind them is the shell's redirection, which a rename would cut
// off or clobber) is written into as given: into = true.
struct OutputTarget {
  std::filesystem::path file;
  bool into = false;
};

OutputTarget output_target(const std::string& path) {
  namespace fs = std::filesystem;
  const auto special = [](const fs::path& p) {
    const std::string s = fs::absolute(p).lexically_normal().string();
    return s.rfind("/proc/", 0) == 0 || s.rfind("/dev/", 0) == 0;
  };
  fs::path p(path);
  for (int hops = 0;; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
    if (hops == 40)
      throw std::invalid_argument(fmt::format("cannot write '{}': too many levels of symbolic links", path));
    if (special(p)) return {fs::path(path), true};
    fs::path next = fs::read_symlink(p, ec);
    if (ec) throw std::invalid_argument(fmt::format("cannot write '{}': {}", path, ec.message()));
    p = (next.is_relative() ? p.parent_path() / next : next).lexically_normal();
  }
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (fs::is_directory(st)) throw std::invalid_argument(fmt::format("cannot write '{}': it is a directory", path));
  if (fs::exists(st) && !fs::is_regular_file(st)) return {p, true};
  return {p, false};
}

}  // namespace

void write_file_atomic(const std::string& path, const void* data, std::size_t bytes) {
  namespace fs = std::filesystem;
  if (path == "-") {
    // Standard output cannot be replaced: written in order, once everything before succeeded; a failure midway
    // (a reader that went away: EPIPE) leaves what was written.
    bool ok = false;
    int err = 0;
    {
      const SigpipeBlocked no_sigpipe;
      ok = write_all(STDOUT_FILENO, data, bytes);
      err = errno;
    }
    if (!ok) throw std::runtime_error(fmt::format("writing standard output: {}", std::strerror(err)));
    return;
  }
  const OutputTarget out = output_target(path);
  const fs::path& target = out.file;
  if (out.into) {
    // Appended (for a device or a pipe the same as writing; for /dev/stdout redirected with >> or > to a file,
    // after what the shell wrote before) and written once everything before succeeded; a failure midway (a
    // reader that went away: EPIPE) leaves what was written.
    const int fd = ::open(target.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) throw std::invalid_argument(fmt::format("cannot open '{}' for writing: {}", path, std::strerror(errno)));
    bool ok = false;
    int err = 0;
    {
      const SigpipeBlocked no_sigpipe;
      ok = write_all(fd, data, bytes);
      err = errno;
    }
    if (::close(fd) != 0 || !ok)
      throw std::runtime_error(fmt::format("writing '{}': {}", path, std::strerror(ok ? errno : err)));
    return;
  }
  // The temporary file has a short name of its own (a name built from the target's could pass the file-name
  // limit where the target's does not).
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ".bmmc-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw std::invalid_argument(
        fmt::format("cannot create a temporary file next to '{}': {}", path, std::strerror(errno)));
  if (!write_all(fd, data, bytes)) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw std::runtime_error(fmt::format("writing '{}': {}", path, std::strerror(err)));
  }
  // mkstemp creates the file with mode 0600: give it the mode of the file it replaces, or the usual mode of a
  // new file.
  struct stat old {};
  if (::stat(target.c_str(), &old) == 0) {
    ::fchmod(fd, old.st_mode & 07777);
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error(fmt::format("closing the temporary file for '{}': {}", path, std::strerror(err)));
  }
  if (std::rename(tmpl.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error(fmt::format("cannot replace '{}': {}", path, std::strerror(err)));
  }
}

namespace {

// The input of a file permutation: exactly 2^n elements of elem_bytes, said in those terms when it is not.
std::vector<std::byte> read_input_array(const std::string& in_path, int n, int elem_bytes) {
  const std::size_t bytes = array_bytes(n, elem_bytes);
  std::error_code ec;
  const std::uintmax_t in_size = in_path == "-" ? 0 : std::filesystem::file_size(in_path, ec);
  if (in_path != "-" && !ec && in_size != bytes)
    throw std::invalid_argument(fmt::format("'{}' has {} bytes, but an array of 2^{} elements of {} bytes has {} bytes",
                                            in_path, in_size, n, elem_bytes, bytes));
  return read_array_file(in_path, bytes);
}

}  // namespace

Backend permute_file(const Bmmc& bmmc, int elem_bytes, const std::string& in_path, const std::string& out_path,
                     const PermuterOptions& options) {
  const std::size_t bytes = array_bytes(bmmc.n(), elem_bytes);  // checks elem_bytes and n first
  PermuterOptions o = options;
  o.backend = resolve_backend(options.backend);  // an unavailable backend fails before any file is touched
  std::vector<std::byte> in = read_input_array(in_path, bmmc.n(), elem_bytes);
  if (o.in_place) {
    // The loaded array is permuted where it lies: no second buffer (on CUDA one device buffer).
    const Backend ran = permute_host_inplace(bmmc, in.data(), elem_bytes, o);
    write_file_atomic(out_path, in.data(), in.size());
    return ran;
  }
  // Element-aligned buffers: std::byte vectors only promise new's alignment, 16 on this platform, but say so.
  static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= 16, "buffers must be aligned to 16-byte elements");
  std::vector<std::byte> out(bytes);
  const Backend ran = permute_host(bmmc, in.data(), out.data(), elem_bytes, o);
  write_file_atomic(out_path, out.data(), out.size());
  return ran;
}

Backend permute_file(const DigitMap& map, int elem_bytes, const std::string& in_path, const std::string& out_path,
                     const PermuterOptions& options) {
  if (const auto b = bit_face(map, elem_bytes)) return permute_file(*b, elem_bytes, in_path, out_path, options);
  PermuterOptions o = options;
  o.backend = resolve_backend(options.backend);  // an unavailable backend fails before any file is touched
  if (elem_bytes < 1 || elem_bytes > (1 << 20) || map.size() > kMaxDigitElements / elem_bytes)
    throw std::invalid_argument(fmt::format("an array of shape {} of {}-byte elements: expected elements of 1 to {} "
                                            "bytes and at most 2^62 bytes in all",
                                            shape_to_string(map.shape()), elem_bytes, 1 << 20));
  if (o.in_place && !map.is_involution())
    throw std::invalid_argument(fmt::format("in place needs a map that is its own inverse; {} on shape {} is not: "
                                            "write another file",
                                            map.to_string(), shape_to_string(map.shape())));
  const auto bytes = static_cast<std::size_t>(map.size()) * static_cast<std::size_t>(elem_bytes);
  std::vector<std::byte> in = read_array_file(in_path, bytes);
  if (o.in_place) {
    const Backend ran = permute_host(map, in.data(), in.data(), elem_bytes, o);
    write_file_atomic(out_path, in.data(), in.size());
    return ran;
  }
  std::vector<std::byte> out(bytes);
  const Backend ran = permute_host(map, in.data(), out.data(), elem_bytes, o);
  write_file_atomic(out_path, out.data(), out.size());
  return ran;
}

Backend permute_file_distributed(const Bmmc& bmmc, int elem_bytes, const std::string& in_path,
                                 const std::string& out_path, std::uint64_t ranks, Backend backend,
                                 const DistributedOptions& options) {
  const std::size_t bytes = array_bytes(bmmc.n(), elem_bytes);  // checks elem_bytes and n first
  check_backend(backend);  // a value outside the enumeration is refused, not run on the CPU
  if (backend == Backend::Cuda)
    throw std::invalid_argument(fmt::format(
        "{} ranks on the cuda backend: a file is not split over GPUs here; the cpu backend runs the distributed plan "
        "on simulated ranks, and on GPUs it runs through DistributedPermuter (bmmc/distributed.hpp) over the GPUs of "
        "one process or an NCCL communicator",
        ranks));
  // The door checks the ranks, the map (an involution in place), the engine and the options before a file is read.
  const DistributedPermuter p(bmmc, elem_bytes, SimulatedRanks{ranks}, options);
  std::vector<std::byte> in = read_input_array(in_path, bmmc.n(), elem_bytes);
  const std::size_t local = p.local_bytes();
  if (p.in_place()) {
    std::vector<void*> data;
    for (std::uint64_t r = 0; r < ranks; ++r) data.push_back(in.data() + r * local);
    p.permute_in_place(data);
    write_file_atomic(out_path, in.data(), in.size());
    return Backend::Cpu;
  }
  std::vector<std::byte> out(bytes);
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (std::uint64_t r = 0; r < ranks; ++r) {
    in_ptrs.push_back(in.data() + r * local);
    out_ptrs.push_back(out.data() + r * local);
  }
  p(in_ptrs, out_ptrs);
  write_file_atomic(out_path, out.data(), out.size());
  return Backend::Cpu;
}

}  // namespace bmmc
