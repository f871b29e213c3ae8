// Test support for any-shape maps, shared by the plan, CPU, dispatch and GPU tests: random DigitMaps and the
// result an array must have, computed element by element from the map's own definition (apply_linear).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "bmmc/core/digit_map.hpp"

namespace bmmc::test {

/// A map of rank 1..max_rank, extents 1..max_extent, at most max_size elements (beyond the first axis), random
/// axes; each output axis flipped with probability 1/one_in and rolled (by a random shift) with probability 1/one_in.
inline DigitMap random_digit_map(std::mt19937_64& rng, int max_rank, Extent max_extent, Extent max_size, int one_in) {
  const int k = std::uniform_int_distribution<int>(1, max_rank)(rng);
  std::vector<Extent> shape;
  Extent size = 1;
  for (int a = 0; a < k; ++a) {
    const Extent cap = std::max<Extent>(1, std::min<Extent>(max_extent, max_size / size));
    shape.push_back(std::uniform_int_distribution<Extent>(1, cap)(rng));
    size *= shape.back();
  }
  std::vector<int> axes(static_cast<std::size_t>(k));
  std::iota(axes.begin(), axes.end(), 0);
  std::shuffle(axes.begin(), axes.end(), rng);
  std::vector<std::uint8_t> flip;
  std::vector<Extent> roll;
  for (int j = 0; j < k; ++j) {
    flip.push_back(static_cast<std::uint8_t>(rng() % static_cast<std::uint64_t>(one_in) == 0));
    const auto d = static_cast<std::uint64_t>(shape[axes[j]]);
    roll.push_back(rng() % static_cast<std::uint64_t>(one_in) == 0 ? static_cast<Extent>(rng() % d) : 0);
  }
  return DigitMap(shape, axes, flip, roll);
}

/// out[map(x)] = in[x] for elements of eb bytes, from apply_linear.
inline std::vector<unsigned char> digit_reference(const DigitMap& m, const std::vector<unsigned char>& in, int eb) {
  std::vector<unsigned char> out(in.size());
  for (Extent x = 0; x < m.size(); ++x)
    std::memcpy(out.data() + m.apply_linear(x) * eb, in.data() + x * eb, static_cast<std::size_t>(eb));
  return out;
}

}  // namespace bmmc::test
