// The bounded LRU cache of Permuters (see permuter_cache.hpp).
#include "bmmc/dispatch/permuter_cache.hpp"

#include <stdexcept>

namespace bmmc {

std::size_t PermuterKeyHash::operator()(const PermuterKey& k) const noexcept {
  // The Bmmc carries almost all the entropy; the rest only separates the few option sets used side by side.
  std::size_t h = k.digits ? std::hash<DigitMap>{}(*k.digits) : std::hash<Bmmc>{}(k.bmmc);
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(static_cast<std::size_t>(k.elem_bytes));
  mix(static_cast<std::size_t>(k.options.backend));
  mix(static_cast<std::size_t>(k.options.in_place));
  mix(static_cast<std::size_t>(k.options.gpu.device + 1));
  mix(static_cast<std::size_t>(k.options.gpu.policy.vector_bits + 1));
  mix(static_cast<std::size_t>(k.options.gpu.policy.variant));
  mix(static_cast<std::size_t>(k.options.cpu.tile_bits + 1));
  return h;
}

PermuterCache::PermuterCache(std::size_t capacity) : capacity_(capacity) {
  if (capacity == 0) throw std::invalid_argument("PermuterCache capacity must be at least 1");
}

std::shared_ptr<const Permuter> PermuterCache::get(const PermuterKey& key) {
  if (key.options.backend == Backend::Auto)
    throw std::invalid_argument("PermuterCache::get: the key's backend must be resolved (cpu or cuda), not auto");
  {
    const std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);  // now the most recently used
      ++hits_;
      return it->second->second;
    }
    ++misses_;
  }
  // Built outside the lock: a JIT compile must not stall lookups of other permutations.
  auto made = key.digits ? std::make_shared<const Permuter>(*key.digits, key.elem_bytes, key.options)
                         : std::make_shared<const Permuter>(key.bmmc, key.elem_bytes, key.options);
  const std::lock_guard lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) return it->second->second;  // another thread won
  lru_.emplace_front(key, made);
  index_.emplace(key, lru_.begin());
  evict_to(capacity_);
  return made;
}

void PermuterCache::evict_to(std::size_t size) {
  while (lru_.size() > size) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
    ++evictions_;
  }
}

PermuterCacheStats PermuterCache::stats() const {
  const std::lock_guard lock(mutex_);
  return {hits_, misses_, evictions_, lru_.size(), capacity_};
}

void PermuterCache::clear() {
  const std::lock_guard lock(mutex_);
  index_.clear();
  lru_.clear();
}

void PermuterCache::set_capacity(std::size_t capacity) {
  if (capacity == 0) throw std::invalid_argument("PermuterCache capacity must be at least 1");
  const std::lock_guard lock(mutex_);
  capacity_ = capacity;
  evict_to(capacity_);
}

PermuterCache& default_permuter_cache() {
  static PermuterCache* cache = new PermuterCache();  // never destroyed: no teardown race with CUDA
  return *cache;
}

}  // namespace bmmc
