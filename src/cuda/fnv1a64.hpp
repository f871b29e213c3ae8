// Internal to the kernel cache: FNV-1a, 64 bits, the stable hash behind CacheKey (same value in every process
// and on every machine, unlike std::hash), so cache files on disk stay valid across runs. Users see only the
// resulting CacheKey (kernel_cache.hpp); the tests include this header to check the published test vectors.
#pragma once

#include <cstdint>
#include <string_view>

namespace bmmc {

inline constexpr std::uint64_t kFnv1a64Offset = 0xcbf29ce484222325ULL;

inline std::uint64_t fnv1a64(std::string_view data, std::uint64_t hash = kFnv1a64Offset) noexcept {
  for (unsigned char byte : data) {
    hash ^= byte;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace bmmc
