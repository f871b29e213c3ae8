// The §7.1 sorting network (see sorting_network.hpp). Bodies are shared, so building sort 28 is cheap.
#include "bmmc/combinators/sorting_network.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace bmmc {

namespace {
void check(int n, const char* what) {
  if (n < 0 || n > 40) throw std::invalid_argument(fmt::format("{} n: n = {} is outside 0..40", what, n));
}
}  // namespace

Program vcolumn(int n) {
  check(n, "vcolumn");
  if (n == 0) return Program(0);
  if (n == 1) return compare_swap(1);
  return parm(3, vcolumn(n - 1));
}

Program merge_network(int n) {
  check(n, "merge");
  if (n == 0) return Program(0);
  return then(vcolumn(n), parm(BitVec{1} << (n - 1), merge_network(n - 1)));
}

Program sort_network(int n) {
  check(n, "sort");
  if (n == 0) return Program(0);
  return then(parm(1, sort_network(n - 1)), merge_network(n));
}

}  // namespace bmmc
