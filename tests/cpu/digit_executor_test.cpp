// The CPU digit executor against the map's own definition, over random shapes, element sizes and threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "../../src/cpu/digit_blocks.hpp"
#include "plan/digit_map_support.hpp"
#include "bmmc/cpu/digit_executor.hpp"

namespace bmmc {
namespace {

std::vector<unsigned char> random_bytes(std::size_t n, std::mt19937_64& rng) {
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

// out[map(x)] = in[x], element by element from apply_linear.
TEST(CpuDigit, RandomMapsMatchTheDefinition) {
  std::mt19937_64 rng(3);
  int checked = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 7, 60, 1 << 16, 2);
    for (int eb : {1, 2, 4, 6, 8, 16}) {
      CpuPolicy pol;
      pol.threads = 1 + trial % 3;
      const CpuDigitPermuter p(m, eb, pol);
      const auto bytes = static_cast<std::size_t>(m.size() * eb);
      const auto in = random_bytes(bytes, rng);
      std::vector<unsigned char> out(bytes, 0xA5);  // poisoned
      p(in.data(), out.data());
      ASSERT_EQ(out, test::digit_reference(m, in, eb)) << m.to_string() << " on " << shape_to_string(m.shape()) << " elem " << eb;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 150 * 6);
}

TEST(CpuDigit, InPlaceRunsInvolutionsAndRefusesTheRest) {
  std::mt19937_64 rng(5);
  const std::vector<DigitMap> involutions = {
      DigitMap::flip({7, 11, 13}, {0, 2}), DigitMap::transpose({37, 37}, {1, 0}),
      DigitMap(std::vector<Extent>{9, 5, 9}, {2, 1, 0}, {1, 0, 1}), DigitMap::roll({10, 6}, {5, 3})};
  for (const DigitMap& m : involutions) {
    ASSERT_TRUE(m.is_involution()) << m.to_string();
    for (int eb : {1, 4, 12}) {
      const CpuDigitPermuter p(m, eb);
      auto data = random_bytes(static_cast<std::size_t>(m.size() * eb), rng);
      const auto want = test::digit_reference(m, data, eb);
      p(data.data(), data.data());
      EXPECT_EQ(data, want) << m.to_string();
    }
  }
  const CpuDigitPermuter roll(DigitMap::roll({10}, {3}), 4);
  std::vector<unsigned char> data(40, 7);
  const auto before = data;
  EXPECT_THROW(roll(data.data(), data.data()), std::invalid_argument);
  EXPECT_EQ(data, before);
}

TEST(CpuDigit, BadBuffersAreRefusedBeforeAnyWrite) {
  const CpuDigitPermuter p(DigitMap::transpose({3, 5}, {1, 0}), 4);
  std::vector<unsigned char> buf(200, 1);
  const auto before = buf;
  EXPECT_THROW(p(nullptr, buf.data()), std::invalid_argument);
  EXPECT_THROW(p(buf.data(), nullptr), std::invalid_argument);
  EXPECT_THROW(p(buf.data(), buf.data() + 8), std::invalid_argument);  // 60-byte arrays 8 bytes apart
  EXPECT_EQ(buf, before);
}

// The register kernels against the definition: blocks of every size around the square (8 × 8 or 4 × 4) and its
// multiples, strides positive and negative or dense, buffers at odd addresses, written into a poisoned buffer (nothing outside the block written).
TEST(CpuDigit, BlockAndReverseKernelsMatchTheirDefinition) {
  std::mt19937_64 rng(11);
  int checked = 0;
  for (int eb : {1, 2, 4, 8, 16}) {
    for (bool portable : {false, true}) {
      const auto block = cpu_detail::digit_block_fn(eb, portable);
      const auto reverse = cpu_detail::digit_reverse_fn(eb, portable);
      for (Extent nw : {1, 2, 3, 4, 7, 8, 9, 16, 17, 33}) {
        for (Extent nr : {1, 2, 3, 5, 8, 12, 16, 19}) {
          // Dense strides (sstride = nr, dstride = nw: the de-interleaves and interleaves) a third of the time.
          const std::ptrdiff_t sstride =
              rng() % 3 == 0 ? nr : (rng() % 2 ? 1 : -1) * static_cast<std::ptrdiff_t>(nr + rng() % 5);
          const std::ptrdiff_t dstride =
              rng() % 3 == 0 ? nw : (rng() % 2 ? 1 : -1) * static_cast<std::ptrdiff_t>(nw + rng() % 5);
          const std::size_t span_in = static_cast<std::size_t>(std::abs(sstride) * nw + nr);
          const std::size_t span_out = static_cast<std::size_t>(std::abs(dstride) * nr + nw);
          // One byte past the start of each buffer: the kernels take pointers of any alignment.
          const auto in = random_bytes(span_in * static_cast<std::size_t>(eb) + 1, rng);
          std::vector<unsigned char> out(span_out * static_cast<std::size_t>(eb) + 1, 0xA5), want = out;
          const std::ptrdiff_t s0 = (sstride < 0 ? -sstride * (nw - 1) : 0) * eb + 1;
          const std::ptrdiff_t d0 = (dstride < 0 ? -dstride * (nr - 1) : 0) * eb + 1;
          for (Extent w = 0; w < nw; ++w)
            for (Extent r = 0; r < nr; ++r)
              std::memcpy(want.data() + d0 + (r * dstride + w) * eb, in.data() + s0 + (w * sstride + r) * eb,
                          static_cast<std::size_t>(eb));
          block(reinterpret_cast<const std::byte*>(in.data()) + s0, sstride,
                reinterpret_cast<std::byte*>(out.data()) + d0, dstride, nw, nr);
          ASSERT_EQ(out, want) << "elem " << eb << " portable " << portable << " block " << nw << "x" << nr
                               << " strides " << sstride << ", " << dstride;
          ++checked;
        }
        // A reversed row of nw · 3 elements.
        const Extent count = nw * 3;
        const auto in = random_bytes(static_cast<std::size_t>(count * eb), rng);
        std::vector<unsigned char> out(in.size() + 2 * static_cast<std::size_t>(eb), 0xA5), want = out;
        for (Extent t = 0; t < count; ++t)
          std::memcpy(want.data() + (t + 1) * eb, in.data() + (count - 1 - t) * eb, static_cast<std::size_t>(eb));
        reverse(reinterpret_cast<const std::byte*>(in.data()) + (count - 1) * eb,
                reinterpret_cast<std::byte*>(out.data()) + eb, count);
        ASSERT_EQ(out, want) << "elem " << eb << " portable " << portable << " reversed row of " << count;
      }
    }
  }
  EXPECT_EQ(checked, 5 * 2 * 10 * 8);
}

// The streaming copy at every alignment and length around a vector, nothing outside its bytes written; and an
// array past the streaming threshold (8 MiB) whose rows are copied whole, against the definition.
TEST(CpuDigit, StreamedRowsMatchTheDefinition) {
  std::mt19937_64 rng(17);
  for (std::size_t offset = 0; offset < 16; ++offset)
    for (std::size_t bytes : {0, 1, 15, 16, 17, 31, 64, 100, 257}) {
      const auto in = random_bytes(bytes + 16, rng);
      std::vector<unsigned char> out(bytes + 32, 0xA5), want = out;
      std::memcpy(want.data() + offset, in.data() + 3, bytes);
      cpu_detail::digit_stream_copy(reinterpret_cast<const std::byte*>(in.data()) + 3,
                                    reinterpret_cast<std::byte*>(out.data()) + offset, bytes);
      cpu_detail::digit_stream_fence();
      ASSERT_EQ(out, want) << bytes << " bytes at offset " << offset;
    }
  const DigitMap m(std::vector<Extent>{33, 1021, 65}, {1, 0, 2}, {0, 1, 0}, {0, 7, 0});
  const int eb = 4;  // 8.3 MiB, rows of 65 elements
  CpuPolicy pol;
  pol.threads = 2;
  const CpuDigitPermuter p(m, eb, pol);
  const auto in = random_bytes(static_cast<std::size_t>(m.size() * eb), rng);
  std::vector<unsigned char> out(in.size(), 0xA5);
  p(in.data(), out.data());
  ASSERT_EQ(out, test::digit_reference(m, in, eb));
}

// Shapes large enough for full tiles of many register squares, edge tiles and rolls that wrap inside tiles, on
// the paths of the executor: 2-D blocks (transposes), gathered runs (short innermost output axes), reversed rows.
TEST(CpuDigit, LargeTilesOnEveryPathMatchTheDefinition) {
  std::mt19937_64 rng(13);
  const std::vector<DigitMap> maps = {
      DigitMap::transpose({301, 517}, {1, 0}),
      DigitMap(std::vector<Extent>{67, 129, 3}, {2, 0, 1}, {1, 0, 1}, {0, 100, 2}),
      DigitMap(std::vector<Extent>{3, 3, 3, 3, 3, 3, 3, 3}, {7, 6, 5, 4, 3, 2, 1, 0}, {0, 1, 0, 0, 0, 0, 0, 1},
               {0, 0, 0, 0, 0, 0, 0, 0}),
      DigitMap(std::vector<Extent>{2, 2, 3, 3, 5, 7, 7}, {6, 5, 4, 3, 2, 1, 0}),
      DigitMap::flip({211, 1031}, {0, 1}),
      DigitMap(std::vector<Extent>{1001, 2, 131}, {1, 2, 0}, {0, 1, 1}, {1, 50, 17}),
      DigitMap(std::vector<Extent>{37, 41, 43}, {2, 1, 0}, {0, 0, 0}, {18, 20, 21}),
      // Extent-5 axes reversed: the outermost gathered axis is cut by the tiles (edge tiles gather shorter runs).
      DigitMap(std::vector<Extent>{5, 5, 5, 5, 5, 5, 5}, {6, 5, 4, 3, 2, 1, 0}, {1, 0, 0, 0, 0, 0, 0},
               {0, 2, 0, 0, 0, 0, 0}),
      DigitMap::transpose({5, 3, 1000}, {0, 2, 1}),  // channels last: three rows interleaved
      DigitMap::transpose({5, 1000, 3}, {0, 2, 1}),  // channels first: one run de-interleaved into three
      // A digit reversal whose input runs end inside an axis of 7 (edge tiles), flipped and rolled outside the
      // gathered axes.
      DigitMap(std::vector<Extent>{2, 2, 2, 2, 2, 2, 3, 3, 7, 7}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
               {1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 3, 0, 0, 0, 0, 0, 0, 0, 0}),
  };
  for (const DigitMap& m : maps)
    for (int eb : {1, 2, 4, 8, 16}) {
      CpuPolicy pol;
      pol.threads = 2;
      const CpuDigitPermuter p(m, eb, pol);
      const auto in = random_bytes(static_cast<std::size_t>(m.size() * eb), rng);
      std::vector<unsigned char> out(in.size(), 0xA5);
      p(in.data(), out.data());
      ASSERT_EQ(out, test::digit_reference(m, in, eb)) << m.to_string() << " on " << shape_to_string(m.shape()) << " elem " << eb;
    }
}

}  // namespace
}  // namespace bmmc
