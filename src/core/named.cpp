#include "bmmc/core/named.hpp"

#include <fmt/format.h>

#include <random>
#include <stdexcept>

namespace bmmc {

namespace {

void check_n(int n) {
  if (n < 0 || n > 64)
    throw std::invalid_argument(fmt::format("n must be between 0 and 64 index bits, got {}", n));
}

// Matrix with y_i = x_{src[i]}.
Bmmc gather_bits(const std::vector<int>& src, BitVec c = 0) {
  const int n = static_cast<int>(src.size());
  BitMatrix a(n, n);
  for (int i = 0; i < n; ++i) a.set(i, src[i], true);
  return Bmmc(a, c);
}

// Uniform integer in [0, bound) from a 64-bit engine, by rejection: portable, unlike
// std::uniform_int_distribution whose output differs between standard libraries.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % bound);
  std::uint64_t v;
  do v = rng(); while (v >= limit);
  return v % bound;
}

}  // namespace

Bmmc identity(int n) {
  check_n(n);
  return Bmmc(BitMatrix::identity(n));
}

Bmmc bit_reverse(int n) {
  check_n(n);
  std::vector<int> src(n);
  for (int i = 0; i < n; ++i) src[i] = n - 1 - i;
  return gather_bits(src);
}

Bmmc reverse(int n) {
  check_n(n);
  return Bmmc(BitMatrix::identity(n), low_mask(n));
}

Bmmc rotate(int n, int k) {
  check_n(n);
  if (n == 0) return identity(0);
  if (k < 0) throw std::invalid_argument(fmt::format("rotate amount must be non-negative, got {}", k));
  std::vector<int> src(n);
  for (int i = 0; i < n; ++i) src[i] = (i + k) % n;
  return gather_bits(src);
}

Bmmc transpose(int n, int r) {
  check_n(n);
  if (r < 0 || r > n)
    throw std::invalid_argument(
        fmt::format("transpose:R needs 0 <= R <= n (a 2^R x 2^(n-R) matrix); got R = {} with n = {}", r, n));
  // Input index = row·2^(n-r) + col; output index = col·2^r + row.
  std::vector<int> src(n);
  for (int i = 0; i < r; ++i) src[i] = n - r + i;   // output low bits: the row
  for (int j = 0; j < n - r; ++j) src[r + j] = j;   // output high bits: the column
  return gather_bits(src);
}

Bmmc gray(int n) {
  check_n(n);
  BitMatrix a = BitMatrix::identity(n);
  for (int i = 0; i + 1 < n; ++i) a.set(i, i + 1, true);
  return Bmmc(a);
}

Bmmc gray_inverse(int n) {
  check_n(n);
  BitMatrix a(n, n);
  for (int i = 0; i < n; ++i) a.set_row(i, low_mask(n) & ~low_mask(i));
  return Bmmc(a);
}

Bmmc parm_matrix(int n, BitVec mask) {
  check_n(n);
  if (n == 0 || mask == 0 || (mask & ~low_mask(n)))
    throw std::invalid_argument(fmt::format(
        "parm mask must be non-zero and below 2^n (n = {}); got {:#x}", n, mask));
  const int lsb = __builtin_ctzll(mask);
  BitMatrix a(n, n);
  for (int i = 0; i < lsb; ++i) a.set(i, i, true);
  for (int i = lsb; i < n - 1; ++i) a.set(i, i + 1, true);
  a.set_row(n - 1, mask);
  return Bmmc(a);
}

Bmmc bit_permutation(const std::vector<int>& p) {
  const int n = static_cast<int>(p.size());
  check_n(n);
  std::vector<int> src(n, -1);
  for (int i = 0; i < n; ++i) {
    if (p[i] < 0 || p[i] >= n)
      throw std::invalid_argument(
          fmt::format("bit permutation entry {} = {} is out of range: entries must be 0..{}", i, p[i], n - 1));
    if (src[p[i]] >= 0)
      throw std::invalid_argument(fmt::format(
          "bit permutation sends bits {} and {} both to bit {}: it must be a permutation of 0..{}", src[p[i]],
          i, p[i], n - 1));
    src[p[i]] = i;
  }
  return gather_bits(src);
}

Bmmc axes_permutation(const std::vector<std::uint64_t>& shape, const std::vector<int>& axes) {
  const int d = static_cast<int>(shape.size());
  if (static_cast<int>(axes.size()) != d)
    throw std::invalid_argument(fmt::format(
        "axis permutation has {} entries but the shape has {} dimensions; they must match", axes.size(), d));
  std::vector<int> bits(d);
  int n = 0;
  for (int a = 0; a < d; ++a) {
    const std::uint64_t s = shape[a];
    if (s == 0 || (s & (s - 1)))
      throw std::invalid_argument(
          fmt::format("dimension {} of the shape is {}: every dimension must be a power of two", a, s));
    bits[a] = __builtin_ctzll(s);
    n += bits[a];
  }
  check_n(n);
  std::vector<bool> used(d, false);
  for (int k = 0; k < d; ++k) {
    if (axes[k] < 0 || axes[k] >= d || used[axes[k]])
      throw std::invalid_argument(
          fmt::format("axes must be a permutation of 0..{}; entry {} is {}", d - 1, k, axes[k]));
    used[axes[k]] = true;
  }
  // C order: the last axis holds the lowest bits.
  std::vector<int> in_off(d), out_off(d);
  for (int a = d - 1, off = 0; a >= 0; --a) { in_off[a] = off; off += bits[a]; }
  for (int k = d - 1, off = 0; k >= 0; --k) { out_off[k] = off; off += bits[axes[k]]; }
  // Output axis k is input axis axes[k].
  std::vector<int> src(n);
  for (int k = 0; k < d; ++k)
    for (int b = 0; b < bits[axes[k]]; ++b) src[out_off[k] + b] = in_off[axes[k]] + b;
  return gather_bits(src);
}

Bmmc from_rows(const std::vector<BitVec>& rows, BitVec c) {
  const int n = static_cast<int>(rows.size());
  check_n(n);
  return Bmmc(BitMatrix::from_rows(n, rows), c);
}

Bmmc random_bpc(int n, std::uint64_t seed) {
  check_n(n);
  std::mt19937_64 rng(seed);
  std::vector<int> p(n);
  for (int i = 0; i < n; ++i) p[i] = i;
  for (int i = n - 1; i > 0; --i) std::swap(p[i], p[uniform_below(rng, i + 1)]);
  const BitVec c = rng() & low_mask(n);
  return Bmmc(bit_permutation(p).matrix(), c);
}

Bmmc random_bmmc(int n, std::uint64_t seed) {
  check_n(n);
  std::mt19937_64 rng(seed);
  // Rejection sampling: a uniform random matrix is invertible with probability > 0.28, and accepting only
  // invertible ones keeps the distribution uniform over GL(n, F2).
  for (;;) {
    BitMatrix a(n, n);
    for (int i = 0; i < n; ++i) a.set_row(i, rng() & low_mask(n));
    const BitVec c = rng() & low_mask(n);
    if (a.invertible()) return Bmmc(a, c);
  }
}

Bmmc random_involution(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  BitMatrix j = BitMatrix::identity(n);
  const int r = n >= 2 ? static_cast<int>(rng() % (n / 2 + 1)) : 0;
  for (int i = 0; i < r; ++i) j.set(2 * i, 2 * i + 1, true);
  const BitMatrix q = random_bmmc(n, seed ^ 0x5eed).matrix();
  const BitMatrix a = q * j * q.inverse();
  const BitVec w = rng() & low_mask(n);
  return Bmmc(a, w ^ a.apply(w));
}

}  // namespace bmmc
