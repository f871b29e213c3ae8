// Shared helpers of the distributed-plan tests: the permutations every test walks through (random BMMCs and BPCs,
// the named maps, explicit k = 0 and k = g constructions) and seeded data.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bmmc/core/named.hpp"

namespace bmmc::test {

// A random invertible g×g or m×m matrix as a Bmmc's matrix (the named random_bmmc is uniform over them).
inline BitMatrix random_invertible(int n, std::uint64_t seed) { return random_bmmc(n, seed).matrix(); }

// A BMMC on m + g bits with A_hl = 0 (k = 0): block upper triangular [A_ll A_lh; 0 A_hh], random blocks.
inline Bmmc block_triangular(int m, int g, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const BitMatrix ll = random_invertible(m, seed + 1), hh = random_invertible(g, seed + 2);
  std::vector<BitVec> rows(m + g);
  for (int i = 0; i < m; ++i) rows[i] = ll.row(i) | ((rng() & low_mask(g)) << m);
  for (int i = 0; i < g; ++i) rows[m + i] = hh.row(i) << m;
  return from_rows(rows, rng() & low_mask(m + g));
}

// k = g (needs m ≥ g): swaps rank bit i with local bit i for every i < g, composed with random local and rank
// permutations on both sides, so A_hl has full rank g.
inline Bmmc rank_local_swap_all(int m, int g, std::uint64_t seed) {
  std::vector<int> p(m + g);
  for (int i = 0; i < m + g; ++i) p[i] = i;
  for (int i = 0; i < g; ++i) std::swap(p[i], p[m + i]);
  const Bmmc swap = bit_permutation(p);
  auto local = [&](std::uint64_t s) {
    std::vector<BitVec> rows(m + g);
    const BitMatrix ll = random_invertible(m, s), hh = random_invertible(g, s + 1);
    for (int i = 0; i < m; ++i) rows[i] = ll.row(i);
    for (int i = 0; i < g; ++i) rows[m + i] = hh.row(i) << m;
    return from_rows(rows);
  };
  return local(seed) * swap * local(seed + 7);
}

// One rank bit swapped with one local bit (the cuStateVec index-bit swap): k = 1.
inline Bmmc one_bit_swap(int m, int g, int local_bit, int rank_bit) {
  std::vector<int> p(m + g);
  for (int i = 0; i < m + g; ++i) p[i] = i;
  std::swap(p[local_bit], p[m + rank_bit]);
  return bit_permutation(p);
}

// The permutations of n bits every property test runs: random BMMCs and BPCs, the named maps.
inline std::vector<std::pair<std::string, Bmmc>> maps_for(int n, std::uint64_t seed) {
  std::vector<std::pair<std::string, Bmmc>> v = {
      {"random-bmmc", random_bmmc(n, seed)},     {"random-bmmc'", random_bmmc(n, seed + 100)},
      {"random-bpc", random_bpc(n, seed + 200)}, {"bit-reverse", bit_reverse(n)},
      {"gray", gray(n)},                         {"reverse", reverse(n)},
      {"rotate", rotate(n, n ? static_cast<int>(seed % n) : 0)}};
  if (n >= 1) v.emplace_back("transpose", transpose(n, static_cast<int>(seed % (n + 1))));
  return v;
}

// The 3-cycle of bits 0 → m → m + 1 → 0 on m + 2 bits (the rest fixed): over 4 ranks, ranks 0 and 3 keep a chunk
// and ranks 1 and 2 do not.
inline Bmmc bit_cycle_through_ranks(int m) {
  std::vector<int> p(m + 2);
  for (int i = 0; i < m + 2; ++i) p[i] = i;
  p[0] = m;
  p[m] = m + 1;
  p[m + 1] = 0;
  return bit_permutation(p);
}

// Bit swaps (disjoint pairs) with complement c: a BPC involution when c_i = c_j for every pair.
inline Bmmc swaps(int n, const std::vector<std::pair<int, int>>& pairs, BitVec c = 0) {
  std::vector<int> p(n);
  for (int i = 0; i < n; ++i) p[i] = i;
  for (auto [a, b] : pairs) std::swap(p[a], p[b]);
  return Bmmc(bit_permutation(p).matrix(), c);
}

inline void fill_random(std::vector<unsigned char>& v, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (auto& b : v) b = static_cast<unsigned char>(1 + rng() % 255);
}

}  // namespace bmmc::test
