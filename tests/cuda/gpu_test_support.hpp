// Shared by the GPU tests: skip without a GPU, and random test data with no zero byte (zeros would hide
// outputs that were never written).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "bmmc/cuda/device.hpp"

#define REQUIRE_GPU() \
  if (!::bmmc::gpu_available()) GTEST_SKIP() << "no CUDA GPU on this machine"

namespace bmmc::test {

inline std::vector<unsigned char> random_bytes(std::size_t bytes, std::uint64_t seed) {
  std::vector<unsigned char> v(bytes);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < bytes; i += 8) {
    const std::uint64_t r = rng() | 0x0101010101010101ull;
    std::memcpy(&v[i], &r, std::min<std::size_t>(8, bytes - i));
  }
  return v;
}

}  // namespace bmmc::test
