#include "bmmc/cuda/kernel_cache.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <stdexcept>
#include <system_error>

#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/cuda/nvrtc.hpp"
#include "fnv1a64.hpp"
#include "launch_state.hpp"

namespace bmmc {

std::string CacheKey::id() const { return fmt::format("{:016x}", hash); }

std::string CacheKey::file_name() const {
  std::string safe;
  for (char ch : kernel_name) {
    if (safe.size() == 64) break;
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    safe += ok ? ch : '_';
  }
  return fmt::format("{}-sm{}-{}.bmmc.cubin", safe, arch, id());
}

// One key's state. The creating thread fulfils `cubin`; everyone else waits on the shared future, which is
// how concurrent requests for one key compile once. Loading is separate (and lazy) so cubin_for needs no GPU.
struct KernelCache::Entry {
  CacheKey key;
  std::shared_future<std::shared_ptr<const std::vector<char>>> cubin;
  std::mutex load_mutex;
  Kernel kernel;  // empty until the first get()
};

KernelCache::KernelCache(KernelCacheOptions options)
    : options_(std::move(options)), disk_dir_(resolve_disk_dir(options_)), nvrtc_version_(nvrtc_version()) {}

KernelCache::~KernelCache() = default;

std::filesystem::path KernelCache::resolve_disk_dir(const KernelCacheOptions& options) {
  if (!options.use_disk) return {};
  std::string dir = options.disk_dir;
  if (dir.empty()) {
    const char* env = std::getenv("BMMC_CACHE_DIR");
    if (env && *env) dir = env;
  }
  if (dir == "off" || dir == "OFF") return {};
  if (!dir.empty()) return std::filesystem::path(dir);
  // XDG says a relative XDG_CACHE_HOME is invalid and must be ignored.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/')
    return std::filesystem::path(xdg) / "bmmc";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "bmmc";
  return {};  // no home: stay in memory rather than write into the working directory
}

CacheKey KernelCache::key(const std::string& source, const std::string& kernel_name, int arch) const {
  CacheKey k;
  k.kernel_name = kernel_name;
  k.arch = arch;
  k.nvrtc_version = nvrtc_version_;
  k.codegen_version = options_.codegen_version;
  k.source_hash = fnv1a64(source);
  // Fields are separated by NUL (and options by 0x1f) so that no two different tuples hash the same text.
  std::string header = fmt::format("{}{}{}{}{}{}{}{}", k.codegen_version, '\0', k.nvrtc_version, '\0', arch,
                                   '\0', kernel_name, '\0');
  for (const std::string& o : options_.extra_options) (header += o) += '\x1f';
  header += '\0';
  k.hash = fnv1a64(source, fnv1a64(header));
  return k;
}

// ---- disk --------------------------------------------------------------------------------------------
// File layout: "BMMCCUBIN1\n" "<key id>\n" "<payload bytes> <fnv1a64 of payload, hex>\n" payload.
// The key id guards against a renamed file; size and checksum against truncation and bit rot.

namespace {
constexpr std::string_view kMagic = "BMMCCUBIN1\n";

std::string header_for(const CacheKey& key, const std::vector<char>& cubin) {
  return fmt::format("{}{}\n{} {:016x}\n", kMagic, key.id(), cubin.size(),
                     fnv1a64(std::string_view(cubin.data(), cubin.size())));
}
}  // namespace

bool KernelCache::read_disk(const CacheKey& key, std::vector<char>& cubin) {
  if (disk_dir_.empty()) return false;
  const std::filesystem::path path = disk_dir_ / key.file_name();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;  // a plain miss
  std::ifstream in(path, std::ios::binary);
  std::string magic(kMagic.size(), '\0'), id;
  std::size_t size = 0;
  std::string sum;
  bool ok = in && in.read(magic.data(), static_cast<std::streamsize>(magic.size())) && magic == kMagic &&
            std::getline(in, id) && id == key.id() && (in >> size >> sum) && in.get() == '\n' &&
            size < (std::size_t{1} << 31);
  if (ok) {
    cubin.resize(size);
    ok = static_cast<bool>(in.read(cubin.data(), static_cast<std::streamsize>(size))) &&
         in.peek() == std::char_traits<char>::eof() &&
         sum == fmt::format("{:016x}", fnv1a64(std::string_view(cubin.data(), cubin.size()))) &&
         looks_like_cubin(cubin);
  }
  if (!ok) {
    // Corrupt or foreign: ignore it; the compile that follows overwrites it atomically.
    ++disk_errors_;
    cubin.clear();
  }
  return ok;
}

void KernelCache::write_disk(const CacheKey& key, const std::vector<char>& cubin) {
  if (disk_dir_.empty()) return;
  static std::atomic<std::uint64_t> counter{0};
  std::error_code ec;
  std::filesystem::create_directories(disk_dir_, ec);
  const std::filesystem::path final_path = disk_dir_ / key.file_name();
  // A unique temporary in the same directory, then rename: readers (other threads, other processes) see the
  // old file or the whole new one, never a half-written cubin.
  const std::filesystem::path tmp =
      disk_dir_ / fmt::format("{}.tmp.{}.{}", key.file_name(), static_cast<long>(::getpid()), counter++);
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) {
      const std::string header = header_for(key, cubin);
      out.write(header.data(), static_cast<std::streamsize>(header.size()));
      out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
      out.close();
      ok = static_cast<bool>(out);
    }
  }
  if (ok) {
    std::filesystem::rename(tmp, final_path, ec);
    ok = !ec;
  }
  if (!ok) {
    // A read-only or full disk must not fail the permutation: the kernel is in memory already.
    std::filesystem::remove(tmp, ec);
    ++disk_errors_;
  }
}

std::size_t KernelCache::clear_disk() {
  if (disk_dir_.empty()) return 0;
  std::size_t removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(disk_dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool ours = name.ends_with(".bmmc.cubin") || name.find(".bmmc.cubin.tmp.") != std::string::npos;
    std::error_code rm;
    if (ours && std::filesystem::remove(it->path(), rm)) ++removed;
  }
  return removed;
}

// ---- memory ------------------------------------------------------------------------------------------

std::shared_ptr<const std::vector<char>> KernelCache::cubin_entry(const std::string& source,
                                                                  const std::string& name, int arch,
                                                                  std::shared_ptr<Entry>& entry) {
  if (name.empty()) throw std::invalid_argument("KernelCache: the kernel name is empty");
  const CacheKey k = key(source, name, arch);
  std::promise<std::shared_ptr<const std::vector<char>>> promise;
  bool created = false;
  {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = entries_.try_emplace(k.hash);
    if (inserted) {
      it->second = std::make_shared<Entry>();
      it->second->key = k;
      it->second->cubin = promise.get_future().share();
    }
    entry = it->second;
    created = inserted;
  }
  if (!created) {
    // Served from memory, possibly after waiting for the thread that compiles it (get() rethrows its error).
    ++memory_hits_;
    return entry->cubin.get();
  }

  // This thread owns the key: disk, else NVRTC. Other keys proceed in parallel (no lock is held here).
  try {
    std::vector<char> cubin;
    if (read_disk(k, cubin)) {
      ++disk_hits_;
    } else {
      ++compiles_;
      CompiledKernel compiled = compile(source, name + ".cu", arch, options_.extra_options);
      {
        std::lock_guard lock(time_mutex_);
        last_compile_ms_ = compiled.compile_ms;
        total_compile_ms_ += compiled.compile_ms;
      }
      cubin = std::move(compiled.cubin);
      write_disk(k, cubin);
    }
    auto shared = std::make_shared<const std::vector<char>>(std::move(cubin));
    promise.set_value(shared);
    return shared;
  } catch (...) {
    // Waiters see the same exception; the entry is dropped so that a later request tries again.
    promise.set_exception(std::current_exception());
    {
      std::lock_guard lock(mutex_);
      auto it = entries_.find(k.hash);
      if (it != entries_.end() && it->second == entry) entries_.erase(it);
    }
    throw;
  }
}

std::vector<char> KernelCache::cubin_for(const std::string& source, const std::string& kernel_name, int arch) {
  std::shared_ptr<Entry> entry;
  return *cubin_entry(source, kernel_name, arch, entry);
}

Kernel KernelCache::get(const std::string& source, const std::string& kernel_name, int arch) {
  std::shared_ptr<Entry> entry;
  const std::shared_ptr<const std::vector<char>> cubin = cubin_entry(source, kernel_name, arch, entry);
  std::lock_guard lock(entry->load_mutex);
  if (entry->kernel) return entry->kernel;

  const auto start = std::chrono::steady_clock::now();
  const std::string what = fmt::format("kernel '{}' (sm_{}, cubin of {} bytes, key {})", kernel_name, arch,
                                       cubin->size(), entry->key.id());
  cudaLibrary_t library = nullptr;
  // The runtime's library API is context-independent: one load serves every device/context, and it creates
  // the primary context lazily if none is current yet.
  check(cudaLibraryLoadData(&library, cubin->data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cudaLibraryLoadData", what);
  cudaKernel_t fn = nullptr;
  if (const cudaError_t status = cudaLibraryGetKernel(&fn, library, kernel_name.c_str()); status != cudaSuccess) {
    (void)cudaLibraryUnload(library);
    check(status, "cudaLibraryGetKernel",
          what + "; is the kernel declared extern \"C\" __global__ with this name?");
  }
  std::shared_ptr<void> owner(library, [fn](cudaLibrary_t lib) {
    detail::forget_launch_state(fn);
    // Unload errors (e.g. during process teardown) have nobody to report to; clear them and move on.
    if (cudaLibraryUnload(lib) != cudaSuccess) (void)cudaGetLastError();
  });
  ++loads_;
  {
    std::lock_guard tlock(time_mutex_);
    last_load_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  entry->kernel = Kernel{fn, kernel_name, arch, std::move(owner)};
  return entry->kernel;
}

Kernel KernelCache::get(const std::string& source, const std::string& kernel_name) {
  return get(source, kernel_name, device_arch());
}

KernelCacheStats KernelCache::stats() const {
  KernelCacheStats s;
  s.memory_hits = memory_hits_.load();
  s.disk_hits = disk_hits_.load();
  s.compiles = compiles_.load();
  s.loads = loads_.load();
  s.disk_errors = disk_errors_.load();
  std::lock_guard lock(time_mutex_);
  s.last_compile_ms = last_compile_ms_;
  s.total_compile_ms = total_compile_ms_;
  s.last_load_ms = last_load_ms_;
  return s;
}

void KernelCache::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

KernelCache& default_kernel_cache() {
  static KernelCache* cache = new KernelCache();
  return *cache;
}

}  // namespace bmmc
