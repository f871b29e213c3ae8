// KernelCache: generated CUDA source → compiled cubin → loaded kernel, each step done once per key.
//
// Compiling a plan's kernel with NVRTC costs tens of milliseconds, so every permutation after the first must
// find it ready. The key is a stable 64-bit FNV-1a hash over (codegen version, NVRTC version, arch, kernel name,
// NVRTC options, source) — stable across runs and machines, unlike std::hash — so cubins can also live on disk
// (BMMC_CACHE_DIR, else $XDG_CACHE_HOME/bmmc or ~/.cache/bmmc; "off" disables it). Lookups are thread-safe;
// concurrent requests for one key compile it once while other keys compile in parallel. The compile/disk half
// (cubin_for) needs no GPU and is tested in CI; get() additionally loads the cubin with the CUDA runtime's
// library API (cudaLibraryLoadData / cudaLibraryGetKernel), so nothing links the driver library (docs/DESIGN.md §5).
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "bmmc/codegen/cuda_source.hpp"

namespace bmmc {

// kCodegenVersion (bmmc/codegen/cuda_source.hpp) is part of every cache key, so stale cubins on disk are
// never picked up after the generator changes.

/// A loaded kernel. Copies share ownership of the loaded library: the handle stays valid while any copy lives,
/// even after KernelCache::clear() or the cache's destruction.
struct Kernel {
  cudaKernel_t fn = nullptr;
  std::string name;  ///< the extern "C" name, for error messages
  int arch = 0;
  std::shared_ptr<void> library;  ///< keeps the cudaLibrary_t loaded

  explicit operator bool() const noexcept { return fn != nullptr; }
};

struct CacheKey {
  std::uint64_t source_hash = 0;  ///< FNV-1a (64 bits) of the source
  std::uint64_t hash = 0;         ///< over every field below and the source: the identity of the entry
  std::string kernel_name;
  int arch = 0;
  std::string nvrtc_version;
  std::string codegen_version;

  /// 16 hex digits of `hash`.
  std::string id() const;
  /// File name on disk: "<kernel name>-sm<arch>-<id>.bmmc.cubin" (name cut to [A-Za-z0-9_], ≤ 64 chars).
  std::string file_name() const;

  friend bool operator==(const CacheKey&, const CacheKey&) = default;
};

struct KernelCacheOptions {
  std::string codegen_version = kCodegenVersion;
  /// "" → $BMMC_CACHE_DIR if set, else $XDG_CACHE_HOME/bmmc, else $HOME/.cache/bmmc. "off" → memory only
  /// (so does BMMC_CACHE_DIR=off when this is empty).
  std::string disk_dir;
  bool use_disk = true;                    ///< false → memory only, whatever the directory says
  std::vector<std::string> extra_options;  ///< appended to every NVRTC compile (and part of the key)
};

struct KernelCacheStats {
  std::uint64_t memory_hits = 0;  ///< served from memory (including waiting for another thread's compile)
  std::uint64_t disk_hits = 0;    ///< read a valid cubin from disk
  std::uint64_t compiles = 0;     ///< NVRTC runs (successful or not)
  std::uint64_t loads = 0;        ///< cudaLibraryLoadData calls that succeeded
  std::uint64_t disk_errors = 0;  ///< cache files that could not be written or were corrupt (then ignored)
  double last_compile_ms = 0;     ///< NVRTC time of the most recent compile
  double total_compile_ms = 0;
  double last_load_ms = 0;        ///< cudaLibraryLoadData + cudaLibraryGetKernel of the most recent load
};

class KernelCache {
 public:
  explicit KernelCache(KernelCacheOptions options = {});
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  /// The key for (source, kernel_name, arch) under this cache's codegen version, NVRTC version and options.
  CacheKey key(const std::string& source, const std::string& kernel_name, int arch) const;

  /// The cubin from memory, else disk, else NVRTC (then stored in memory and on disk). No GPU needed.
  /// Throws NvrtcError when compilation fails (failures are not cached: the next call compiles again).
  std::vector<char> cubin_for(const std::string& source, const std::string& kernel_name, int arch);

  /// cubin_for + load the library (once per key) + look up `kernel_name`. Throws CudaError/NvrtcError.
  Kernel get(const std::string& source, const std::string& kernel_name, int arch);
  /// As above for the current device's arch.
  Kernel get(const std::string& source, const std::string& kernel_name);

  KernelCacheStats stats() const;
  /// Drops the memory entries (loaded libraries stay alive while handed-out Kernels hold them).
  void clear();
  /// Removes this cache directory's cubin files ("*.bmmc.cubin" and leftover temporaries); returns the count.
  std::size_t clear_disk();
  /// The disk directory, or an empty path when disk caching is off.
  const std::filesystem::path& disk_dir() const noexcept { return disk_dir_; }

  /// The directory the options/environment select (empty = off), without creating it.
  static std::filesystem::path resolve_disk_dir(const KernelCacheOptions& options);

 private:
  struct Entry;
  std::shared_ptr<const std::vector<char>> cubin_entry(const std::string& source, const std::string& name,
                                                       int arch, std::shared_ptr<Entry>& entry);
  bool read_disk(const CacheKey& key, std::vector<char>& cubin);
  void write_disk(const CacheKey& key, const std::vector<char>& cubin);

  KernelCacheOptions options_;
  std::filesystem::path disk_dir_;
  std::string nvrtc_version_;

  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, std::shared_ptr<Entry>> entries_;

  std::atomic<std::uint64_t> memory_hits_{0}, disk_hits_{0}, compiles_{0}, loads_{0}, disk_errors_{0};
  mutable std::mutex time_mutex_;
  double last_compile_ms_ = 0, total_compile_ms_ = 0, last_load_ms_ = 0;
};

/// The process-wide cache (default options). Never destroyed, so no library unload races with CUDA teardown.
KernelCache& default_kernel_cache();

}  // namespace bmmc
