// The CPU reference against a brute-force index loop, for every element size, and its argument checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"

namespace bmmc {
namespace {

// Fills with distinct non-zero bytes patterns so that a misplaced element cannot go unnoticed.
std::vector<unsigned char> random_bytes(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(count);
  for (auto& b : v) b = static_cast<unsigned char>(1 + rng() % 255);
  return v;
}

// Brute force: for every x compute y = A·x ⊕ c bit by bit from the matrix entries.
std::vector<unsigned char> brute_force(const Bmmc& p, const std::vector<unsigned char>& in, int elem_bytes) {
  const int n = p.n();
  std::vector<unsigned char> out(in.size(), 0);
  for (std::uint64_t x = 0; x < (std::uint64_t{1} << n); ++x) {
    std::uint64_t y = 0;
    for (int i = 0; i < n; ++i) {
      int bit = static_cast<int>((p.complement() >> i) & 1);
      for (int j = 0; j < n; ++j) bit ^= p.matrix().get(i, j) & static_cast<int>((x >> j) & 1);
      y |= std::uint64_t(bit) << i;
    }
    std::memcpy(&out[y * elem_bytes], &in[x * elem_bytes], elem_bytes);
  }
  return out;
}

TEST(Reference, MatchesBruteForceForAllElementSizes) {
  for (int elem_bytes : {1, 2, 4, 8, 16}) {
    for (int n = 0; n <= 9; ++n) {
      const std::vector<Bmmc> maps = {identity(n),       bit_reverse(n),    reverse(n),
                                      gray(n),           random_bpc(n, 3),  random_bmmc(n, 5),
                                      random_bmmc(n, 6), rotate(n, n / 2)};
      for (const Bmmc& p : maps) {
        const std::size_t bytes = (std::size_t{1} << n) * elem_bytes;
        const auto in = random_bytes(bytes, 100 + n);
        // Over-aligned storage, since std::vector<unsigned char> only guarantees new's alignment.
        std::vector<std::uint64_t> in_store(bytes / 8 + 2), out_store(bytes / 8 + 2, 0);
        std::memcpy(in_store.data(), in.data(), bytes);
        permute_reference(p, in_store.data(), out_store.data(), elem_bytes);
        std::vector<unsigned char> out(bytes);
        std::memcpy(out.data(), out_store.data(), bytes);
        EXPECT_EQ(out, brute_force(p, in, elem_bytes)) << "n = " << n << ", elem_bytes = " << elem_bytes << "\n"
                                                       << p.to_string();
      }
    }
  }
}

TEST(Reference, WorkedExample) {
  std::vector<std::uint32_t> in(16), out(16);
  for (std::uint32_t i = 0; i < 16; ++i) in[i] = 100 + i;
  permute_reference(bit_reverse(4), in.data(), out.data(), 4);
  EXPECT_EQ(out[14], 107u);  // bitrev(4, 7) = 14
  permute_reference(transpose(4, 2), in.data(), out.data(), 4);
  EXPECT_EQ(out[9], 106u);  // transpose 6 -> 9
}

TEST(Reference, InverseRoundTrip) {
  const Bmmc p = random_bmmc(12, 42);
  std::vector<std::uint16_t> in(4096), mid(4096), back(4096);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint16_t>(i * 7 + 1);
  permute_reference(p, in.data(), mid.data(), 2);
  permute_reference(p.inverse(), mid.data(), back.data(), 2);
  EXPECT_EQ(in, back);
  EXPECT_NE(in, mid);
}

TEST(Reference, BadInputsAreRejectedAndOutputUntouched) {
  const Bmmc p = bit_reverse(4);
  std::vector<std::uint32_t> in(64, 1), out(64, 0xdeadbeef);
  const std::vector<std::uint32_t> poison = out;
  EXPECT_THROW(permute_reference(p, in.data(), out.data(), 3), std::invalid_argument);
  EXPECT_THROW(permute_reference(p, nullptr, out.data(), 4), std::invalid_argument);
  EXPECT_THROW(permute_reference(p, in.data(), nullptr, 4), std::invalid_argument);
  EXPECT_THROW(permute_reference(p, out.data(), out.data(), 4), std::invalid_argument);
  EXPECT_THROW(permute_reference(p, out.data() + 8, out.data(), 4), std::invalid_argument);
  EXPECT_THROW(permute_reference(p, in.data(), reinterpret_cast<char*>(out.data()) + 2, 4), std::invalid_argument);
  EXPECT_EQ(out, poison);
  EXPECT_THROW(permute_reference(identity(63), in.data(), out.data(), 1), std::invalid_argument);
  EXPECT_EQ(out, poison);
}

}  // namespace
}  // namespace bmmc
