// Leaves: the only combinator steps that look at values. A leaf acts on every aligned chunk of 2^bits
// consecutive elements of the array it is applied to (chunk h = elements h·2^bits .. h·2^bits + 2^bits − 1).
//
// "Every chunk" rather than "one array of 2^bits" makes a leaf closed under the combinators that lowering
// pushes through it: two(leaf) = leaf, and a leaf at the bottom of nested parms becomes one leaf on the whole
// top-level array once the parms are compiled to BMMCs (lower.hpp). The paper's sorting network needs one
// leaf, the compare-swap of vcolumn 1 (§7.1): min to the lower index. To add a leaf: a LeafKind, its chunk
// size in leaf_bits(), its name, and a case in apply_leaf() (used by the CPU executors) and in the GPU leaf
// kernel (src/cuda/leaf_kernels.cu).
#pragma once

#include <string>
#include <utility>

namespace bmmc {

enum class LeafKind {
  CompareSwap,      ///< [a, b] → [min, max]   (the paper's vcolumn 1)
  CompareSwapDesc,  ///< [a, b] → [max, min]
};

struct Leaf {
  LeafKind kind = LeafKind::CompareSwap;
  friend bool operator==(const Leaf&, const Leaf&) = default;
};

/// log2 of the chunk a leaf reads and writes (1: pairs).
constexpr int leaf_bits(const Leaf& l) noexcept {
  switch (l.kind) {
    case LeafKind::CompareSwap:
    case LeafKind::CompareSwapDesc: return 1;
  }
  return 1;
}

/// "cswap" or "cswap-desc": the names the program printer uses.
const char* to_string(LeafKind k) noexcept;

/// Throws std::invalid_argument unless l.kind is one of the LeafKinds (a value cast from an integer may not
/// be); Program::push, schedule() and the leaf executors call it, so no unknown leaf runs.
void check_leaf(const Leaf& l);

/// Applies the leaf to one chunk of 2^leaf_bits(l) elements, v[0] being the chunk's lowest index. Comparisons
/// use operator< only (NaN keys are not ordered by any comparison network; they end up somewhere).
template <class T>
inline void apply_leaf(const Leaf& l, T* v) {
  switch (l.kind) {
    case LeafKind::CompareSwap:
      if (v[1] < v[0]) std::swap(v[0], v[1]);
      return;
    case LeafKind::CompareSwapDesc:
      if (v[0] < v[1]) std::swap(v[0], v[1]);
      return;
  }
}

}  // namespace bmmc
