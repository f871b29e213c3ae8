// Shared by the GPU and NVRTC tests of the combinators: a random program on n ≥ 3 bits with a random BMMC, two
// nested parms of random masks around compare-swaps, and a descending compare-swap — directions that are not
// unit vectors, both orders, and a final layout that is not the identity.
#pragma once

#include <random>

#include "bmmc/combinators/program.hpp"
#include "bmmc/core/named.hpp"

namespace bmmc::test {

inline Program random_parm_program(int n, std::mt19937_64& rng) {
  BitVec m1 = 0, m2 = 0;
  while (!m1) m1 = rng() & low_mask(n);
  while (!m2) m2 = rng() & low_mask(n - 1);
  Program p = then(bmmc_program(random_bmmc(n, rng())),
                   parm(m1, then(compare_swap(n - 1), parm(m2, compare_swap(n - 2)))));
  p.push(LeafStep{Leaf{LeafKind::CompareSwapDesc}});
  return p;
}

}  // namespace bmmc::test
