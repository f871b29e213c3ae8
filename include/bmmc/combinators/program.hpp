// Array programs built from the paper's combinators (§3, §7): a Program maps arrays of 2^n elements to arrays
// of 2^n elements and is a sequence of steps, applied first to last:
//   bmmc(B)       permute: out[A·x ⊕ c] = in[x]                                   (n = B.n())
//   parm(m, f)    split the indices by the F2 dot product i·m into two sub-arrays of 2^(n-1), each in index
//                 order; apply f (a program on n-1 bits) to both; stitch back the same way  (m ≠ 0, m < 2^n)
//   two(f)        parm(2^(n-1), f): f on the first and on the second half
//   leaf(n, l)    the leaf l on every aligned chunk of 2^leaf_bits(l) elements (leaf.hpp)
//   then(f, g)    f first, then g  (compose(g, f) is the same in function order)
// Programs are values; parm bodies are shared (shared_ptr<const Program>), so the paper's recursive
// definitions (sort n uses sort (n-1) and merge n, merge n uses merge (n-1)) build a DAG of size O(n²), not a
// tree of size O(2^n). Constructors check sizes and throw std::invalid_argument saying what did not fit.
// Example: parm(0b110, compare_swap(2)) on 8 elements compare-swaps the pairs of sub-array {0,1,6,7} at
// positions (0,1),(6,7) and of {2,3,4,5} at (2,3),(4,5) (the paper's Figure for mask 6).
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "bmmc/combinators/leaf.hpp"
#include "bmmc/core/bmmc.hpp"

namespace bmmc {

class Program;

struct BmmcStep {
  Bmmc bmmc;
};
struct ParmStep {
  BitVec mask = 0;
  std::shared_ptr<const Program> body;  ///< on n-1 bits
};
struct LeafStep {
  Leaf leaf;
};
using Step = std::variant<BmmcStep, ParmStep, LeafStep>;

class Program {
 public:
  /// The identity program on n bits (no steps).
  explicit Program(int n = 0);

  int n() const noexcept { return n_; }
  const std::vector<Step>& steps() const noexcept { return steps_; }
  bool empty() const noexcept { return steps_.empty(); }

  /// Appends a step; throws std::invalid_argument when its size does not match n().
  Program& push(Step s);
  /// Appends every step of `p` (same n).
  Program& append(const Program& p);

  /// Number of step nodes counting every parm body once per use (the size of the unshared tree; can be
  /// exponential for deep recursion only if bodies are re-used at several depths — the sorting network's
  /// total is O(n³)).
  std::size_t tree_size() const;

  /// Indented, one step per line; parm bodies nested two spaces deeper. `max_depth` < 0 prints everything,
  /// otherwise parm bodies below that depth are shown as "...".
  std::string to_string(int max_depth = -1) const;

 private:
  int n_;
  std::vector<Step> steps_;
};

Program bmmc_program(const Bmmc& b);
Program parm(BitVec mask, Program f);
Program two(Program f);
Program leaf(int n, Leaf l);
/// leaf(n, compare-swap): compare-swap of every pair (2i, 2i+1); n ≥ 1.
Program compare_swap(int n = 1);
/// f first, then g (same n).
Program then(Program f, Program g);
/// g ∘ f in function order: f first, then g.
inline Program compose(Program g, Program f) { return then(std::move(f), std::move(g)); }

/// Structural equality (parm bodies compared by value).
bool operator==(const Program& a, const Program& b);

}  // namespace bmmc
