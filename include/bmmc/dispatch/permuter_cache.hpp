// PermuterCache: the one cache of prepared Permuters behind bmmc::permute, bounded, least recently used out.
//
// Preparing a permutation costs a plan, loop tables (CPU) or a kernel-cache lookup and a JIT (CUDA): 0.1 ms to
// 100 ms, as much as permuting megabytes. The key is everything a Permuter depends on — the Bmmc, the
// element size and every PermuterOptions field (the device among them) — compared with the structs' defaulted ==, so a
// new option field can never be left out; the hash combines std::hash<Bmmc> with the small fields. Lookups
// are thread-safe; a Permuter built by two threads at once is built twice and one copy is kept (the kernel
// cache below still compiles each kernel once). Entries are shared_ptrs: an evicted Permuter stays valid
// while a caller holds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "bmmc/permute.hpp"

namespace bmmc {

struct PermuterKey {
  Bmmc bmmc;  ///< the map, unless `digits` holds one
  int elem_bytes = 0;
  /// Backend resolved (never Auto). bmmc::permute also sets gpu.device on CUDA and clears the options of
  /// the backend that does not run, so that they do not split entries.
  PermuterOptions options;
  /// An any-shape map (then `bmmc` stays the default and is not used).
  std::optional<DigitMap> digits = std::nullopt;

  friend bool operator==(const PermuterKey&, const PermuterKey&) = default;
};

struct PermuterKeyHash {
  std::size_t operator()(const PermuterKey& k) const noexcept;
};

struct PermuterCacheStats {
  std::uint64_t hits = 0, misses = 0, evictions = 0;
  std::size_t size = 0, capacity = 0;
};

class PermuterCache {
 public:
  static constexpr std::size_t kDefaultCapacity = 256;

  explicit PermuterCache(std::size_t capacity = kDefaultCapacity);
  PermuterCache(const PermuterCache&) = delete;
  PermuterCache& operator=(const PermuterCache&) = delete;

  /// The Permuter for `key` (options.backend must be resolved), built on a miss; the least recently used
  /// entry goes when the cache is full.
  std::shared_ptr<const Permuter> get(const PermuterKey& key);

  PermuterCacheStats stats() const;
  void clear();
  /// At least 1; shrinking evicts the least recently used entries.
  void set_capacity(std::size_t capacity);

 private:
  using Entry = std::pair<PermuterKey, std::shared_ptr<const Permuter>>;
  void evict_to(std::size_t size);

  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<PermuterKey, std::list<Entry>::iterator, PermuterKeyHash> index_;
  std::uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

/// The process-wide cache bmmc::permute uses.
PermuterCache& default_permuter_cache();

}  // namespace bmmc
