// The bound of an in-place permutation (plan/moved_bytes.hpp): the rank count and the swap sets' closed form
// against an element-by-element count over random swap sets, masks, involutions, any BMMC, every element size
// and n ≤ 16; worked examples at n = 30; errors.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <random>
#include <set>

#include "bmmc/core/involution.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/plan/moved_bytes.hpp"
#include "error_of.hpp"

namespace bmmc {
namespace {

constexpr int kElemBytes[] = {1, 2, 4, 8, 16};

// The reference: every element, its sector (its byte offset / 32, or the whole array when it is smaller).
MovedBytes brute_force(const Bmmc& f, int eb, BitVec mask_bits = 0, BitVec mask_value = 0) {
  const std::uint64_t size = std::uint64_t{1} << f.n(), total = size * eb;
  const std::uint64_t sector = std::min<std::uint64_t>(kSectorBytes, total);
  std::set<std::uint64_t> touched;
  for (std::uint64_t x = 0; x < size; ++x)
    if ((x & mask_bits) == mask_value && f.apply(x) != x) touched.insert(x * eb / sector);
  return {touched.size(), sector, total};
}

// `count` disjoint pairs of distinct random bits among n (fewer when n is small).
std::vector<std::pair<int, int>> random_pairs(int n, int count, std::mt19937_64& rng) {
  std::vector<int> bits(n);
  for (int i = 0; i < n; ++i) bits[i] = i;
  std::shuffle(bits.begin(), bits.end(), rng);
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i + 1 < n && static_cast<int>(pairs.size()) < count; i += 2) pairs.emplace_back(bits[i], bits[i + 1]);
  return pairs;
}

// A random mask on bits f leaves in place (row e_i, complement bit 0), each such bit taken with probability 1/3.
std::pair<BitVec, BitVec> random_mask(const Bmmc& f, std::mt19937_64& rng) {
  BitVec bits = 0, value = 0;
  for (int i = 0; i < f.n(); ++i)
    if (f.matrix().row(i) == BitVec{1} << i && !((f.complement() >> i) & 1) && rng() % 3 == 0) {
      bits |= BitVec{1} << i;
      if (rng() & 1) value |= BitVec{1} << i;
    }
  return {bits, value};
}

std::string pairs_text(const std::vector<std::pair<int, int>>& pairs) {
  std::string s;
  for (auto [i, j] : pairs) s += fmt::format("({},{})", i, j);
  return s;
}

TEST(MovedBytes, SwapSetsMatchTheElementCount) {
  std::mt19937_64 rng(47);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 16);
    const int eb = kElemBytes[rng() % 5];
    const auto pairs = random_pairs(n, static_cast<int>(rng() % 9), rng);
    const Bmmc f = swap_index_bits(n, pairs);
    const auto [bits, value] = trial % 2 ? random_mask(f, rng) : std::pair<BitVec, BitVec>{0, 0};
    const MovedBytes want = brute_force(f, eb, bits, value);
    const std::string what = fmt::format("n = {}, {} B, pairs {}, mask {:#x} = {:#x}", n, eb, pairs_text(pairs), bits, value);
    EXPECT_EQ(swap_moved_bytes(n, pairs, eb, bits, value), want) << what;
    EXPECT_EQ(moved_bytes(f, eb, bits, value), want) << what;
  }
}

TEST(MovedBytes, AnyMapMatchesTheElementCount) {
  // Involutions (one in-place pass; masked too), BPCs with complements and random BMMCs (the bound of the whole
  // map: a product of passes moves at least these bytes).
  for (int n = 1; n <= 16; ++n)
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      std::mt19937_64 rng(seed * 1000 + n);
      const int eb = kElemBytes[(seed + n) % 5];
      const Bmmc inv = random_involution(n, seed * 31 + n);
      const auto [bits, value] = random_mask(inv, rng);
      for (const auto& [f, mb, mv] : {std::tuple{inv, BitVec{0}, BitVec{0}}, std::tuple{inv, bits, value},
                                      std::tuple{random_bpc(n, seed), BitVec{0}, BitVec{0}},
                                      std::tuple{random_bmmc(n, seed), BitVec{0}, BitVec{0}}})
        EXPECT_EQ(moved_bytes(f, eb, mb, mv), brute_force(f, eb, mb, mv))
            << fmt::format("n = {}, {} B, mask {:#x} = {:#x}\n{}", n, eb, mb, mv, f.to_string());
    }
}

TEST(MovedBytes, LowComplementOrLowColumnTouchesEverySector) {
  // x ↦ x ⊕ 1 moves every element; at 16 B two elements share a sector, so it moves every sector too.
  for (int eb : kElemBytes) {
    const MovedBytes r = moved_bytes(Bmmc(BitMatrix::identity(12), 1), eb);
    EXPECT_EQ(r.bytes(), r.array_bytes) << eb;
    EXPECT_EQ(moved_bytes(identity(12), eb).bytes(), 0u) << eb;
  }
  // Complement on a high bit: every element moves, so every sector.
  EXPECT_DOUBLE_EQ(moved_bytes(Bmmc(BitMatrix::identity(12), 1u << 11), 4).fraction(), 1.0);
}

TEST(MovedBytes, WorkedExamplesAtThirtyBits) {
  const std::uint64_t array = std::uint64_t{8} << 30;  // complex64, n = 30
  // Two top bits: the elements with bits 28 and 29 unequal, whole sectors: half the array, read and written.
  const MovedBytes top = swap_moved_bytes(30, {{28, 29}}, 8);
  EXPECT_EQ(top.bytes(), array / 2);
  EXPECT_EQ(top.traffic(), static_cast<double>(array));
  EXPECT_EQ(top.sector_bytes, 32u);
  // Bit 0 of 8-byte elements: every 4-element sector holds both values of bit 0.
  EXPECT_EQ(swap_moved_bytes(30, {{0, 29}}, 8).bytes(), array);
  // Bit 2 of 8-byte elements is above the sector: half. Bit 2 of 4-byte elements is inside it: everything.
  EXPECT_EQ(swap_moved_bytes(30, {{2, 29}}, 8).bytes(), array / 2);
  EXPECT_EQ(swap_moved_bytes(30, {{2, 29}}, 4).bytes(), std::uint64_t{4} << 30);
  // The rows: two swaps among bits 8, 10, 20, 22: 3/4; four disjoint swaps of bits 5..29: 15/16;
  // twelve: 1 − 2^-12.
  EXPECT_DOUBLE_EQ(swap_moved_bytes(30, {{8, 20}, {10, 22}}, 8).fraction(), 0.75);
  EXPECT_DOUBLE_EQ(swap_moved_bytes(30, {{5, 29}, {12, 22}, {7, 17}, {25, 9}}, 8).fraction(), 15.0 / 16);
  std::vector<std::pair<int, int>> twelve;
  for (int i = 0; i < 12; ++i) twelve.emplace_back(5 + i, 17 + i);
  EXPECT_DOUBLE_EQ(swap_moved_bytes(30, twelve, 8).fraction(), 1.0 - 1.0 / 4096);
  // A mask halves what matches: swap 28 ↔ 29 where bit 27 is 1 moves a quarter; a mask on a bit inside the
  // sector (bit 1 at 8 B) leaves whole sectors to move: still half.
  EXPECT_DOUBLE_EQ(swap_moved_bytes(30, {{28, 29}}, 8, 1u << 27, 1u << 27).fraction(), 0.25);
  EXPECT_DOUBLE_EQ(swap_moved_bytes(30, {{28, 29}}, 8, 1u << 1, 0).fraction(), 0.5);
  // The rank count agrees at this size (no enumeration), and through an in-place plan.
  EXPECT_EQ(moved_bytes(swap_index_bits(30, {{28, 29}}), 8, 1u << 27, 1u << 27),
            swap_moved_bytes(30, {{28, 29}}, 8, 1u << 27, 1u << 27));
  EXPECT_EQ(moved_bytes(make_swap_plan(30, {{28, 29}}, 8, {}, 1u << 27, 1u << 27)),
            swap_moved_bytes(30, {{28, 29}}, 8, 1u << 27, 1u << 27));
  EXPECT_DOUBLE_EQ(moved_bytes(bit_reverse(30), 8).fraction(), 1.0);
}

TEST(MovedBytes, ArraysSmallerThanASector) {
  // 2 elements of 4 bytes: one (partial) sector of 8 bytes, moved whole by any swap.
  const MovedBytes r = swap_moved_bytes(1, {}, 4);
  EXPECT_EQ(r, (MovedBytes{0, 8, 8}));
  EXPECT_EQ(moved_bytes(Bmmc(BitMatrix::identity(1), 1), 4), (MovedBytes{1, 8, 8}));
  EXPECT_EQ(swap_moved_bytes(2, {{0, 1}}, 16), (MovedBytes{2, 32, 64}));
}

using test::error_of;

TEST(MovedBytes, Errors) {
  EXPECT_NE(error_of([] { swap_moved_bytes(8, {{1, 2}}, 3); }), "");
  EXPECT_NE(error_of([] { moved_bytes(bit_reverse(8), 32); }), "");
  EXPECT_NE(error_of([] { swap_moved_bytes(8, {{1, 2}}, 4, 1u << 1, 0); }).find("mask bit 1 is moved"), std::string::npos);
  EXPECT_NE(error_of([] { moved_bytes(bit_reverse(8), 4, 1u << 3, 0); }).find("mask bit 3 is moved"), std::string::npos);
  EXPECT_NE(error_of([] { swap_moved_bytes(8, {{1, 2}}, 4, 1u << 5, 1u << 6); }).find("outside the mask"),
            std::string::npos);
  EXPECT_NE(error_of([] { swap_moved_bytes(8, {{1, 2}}, 4, 1u << 9, 0); }).find("beyond the 8 index bits"),
            std::string::npos);
  EXPECT_NE(error_of([] { swap_moved_bytes(8, {{1, 9}}, 4); }).find("outside 0..7"), std::string::npos);
  EXPECT_NE(error_of([] { swap_moved_bytes(8, {{1, 2}, {2, 3}}, 4); }).find("disjoint"), std::string::npos);
  EXPECT_NE(error_of([] { moved_bytes(identity(63), 4); }), "");  // no such array fits in memory
}

}  // namespace
}  // namespace bmmc
