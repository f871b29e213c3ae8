// DigitMap (docs/DESIGN.md §11): the header's worked examples, validation, and properties over random shapes and
// maps checked against a NumPy-style reference built here from coordinates (gather: out[o] = x[source(o)]).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "bmmc/core/digit_map.hpp"
#include "bmmc/core/digit_spec.hpp"
#include "bmmc/core/named.hpp"

namespace bmmc {

[[maybe_unused]] static void PrintTo(const DigitMap& m, std::ostream* os) {
  *os << m.to_string() << " on " << shape_to_string(m.shape());
}

namespace {

using Shape = std::vector<Extent>;

// A random shape of rank 0..max_rank with extents 1..max_extent and at most max_size elements (extents that would
// pass it become 1, so high ranks are mostly extent-1 axes and a few larger ones).
Shape random_shape(std::mt19937_64& rng, int max_rank, Extent max_extent, Extent max_size) {
  const int k = static_cast<int>(rng() % static_cast<std::uint64_t>(max_rank + 1));
  Shape s;
  Extent total = 1;
  for (int a = 0; a < k; ++a) {
    Extent d = 1;
    switch (rng() % 4) {
      case 0: d = 1; break;
      case 1: d = 2 + static_cast<Extent>(rng() % 3); break;
      case 2: d = Extent{1} << (rng() % 4); break;
      default: d = 1 + static_cast<Extent>(rng() % static_cast<std::uint64_t>(max_extent)); break;
    }
    Extent next = 0;
    if (__builtin_mul_overflow(total, d, &next) || next > max_size) d = 1;
    total *= d;
    s.push_back(d);
  }
  return s;
}

// A random map on `shape`: any axis permutation, flips, and rolls of any sign and size (reduced by the class).
DigitMap random_map(std::mt19937_64& rng, const Shape& shape) {
  const std::size_t k = shape.size();
  std::vector<int> axes(k);
  std::iota(axes.begin(), axes.end(), 0);
  std::shuffle(axes.begin(), axes.end(), rng);
  std::vector<std::uint8_t> flip(k);
  std::vector<Extent> roll(k);
  const int style = static_cast<int>(rng() % 4);  // 0: plain transpose, 1: flips only, 2-3: everything
  for (std::size_t j = 0; j < k; ++j) {
    flip[j] = style >= 1 ? static_cast<std::uint8_t>(rng() % 2) : 0;
    if (style >= 2 && rng() % 2) roll[j] = static_cast<Extent>(rng() % 2001) - 1000;
  }
  return DigitMap(shape, axes, flip, roll);
}

Extent linear(const Shape& shape, const std::vector<Extent>& c) {
  Extent x = 0;
  for (std::size_t a = 0; a < shape.size(); ++a) x = x * shape[a] + c[a];
  return x;
}
std::vector<Extent> coords(const Shape& shape, Extent x) {
  std::vector<Extent> c(shape.size());
  for (std::size_t a = shape.size(); a-- > 0;) c[a] = x % shape[a], x /= shape[a];
  return c;
}
Extent size_of(const Shape& s) {
  Extent n = 1;
  for (Extent d : s) n *= d;
  return n;
}

// np.roll(np.flip(np.transpose(x, axes), flips), rolls, axis=range(k)) as a gather: the input coordinates whose
// element lands at output coordinates o.
std::vector<Extent> numpy_source(const DigitMap& m, const std::vector<Extent>& o) {
  const std::size_t k = o.size();
  std::vector<Extent> in(k);
  for (std::size_t j = 0; j < k; ++j) {
    const Extent d = m.shape()[static_cast<std::size_t>(m.axes()[j])];
    const Extent r = ((o[j] - m.rolls()[j]) % d + d) % d;  // np.roll: rolled[(i + s) mod d] = x[i]
    const Extent f = m.flips()[j] ? d - 1 - r : r;          // np.flip
    in[static_cast<std::size_t>(m.axes()[j])] = f;          // np.transpose: t[j] = x[.. axes[j] ..]
  }
  return in;
}

// The whole reference output array: ref[o] = the input index stored there.
std::vector<Extent> numpy_reference(const DigitMap& m) {
  const Shape out = m.out_shape();
  std::vector<Extent> ref(static_cast<std::size_t>(size_of(out)));
  for (Extent o = 0; o < static_cast<Extent>(ref.size()); ++o)
    ref[static_cast<std::size_t>(o)] = linear(m.shape(), numpy_source(m, coords(out, o)));
  return ref;
}

bool brute_identity(const DigitMap& m) {
  for (Extent x = 0; x < m.size(); ++x)
    if (m.apply_linear(x) != x) return false;
  return true;
}
bool brute_involution(const DigitMap& m) {
  for (Extent x = 0; x < m.size(); ++x)
    if (m.apply_linear(m.apply_linear(x)) != x) return false;
  return true;
}

TEST(DigitMap, HeaderWorkedExamples) {
  EXPECT_EQ(DigitMap::transpose({2, 3}, {1, 0}).apply_linear(1), 2);
  EXPECT_EQ(DigitMap::transpose({2, 3}, {1, 0}).out_shape(), (Shape{3, 2}));
  EXPECT_EQ(DigitMap::flip({5}, {0}).apply_linear(0), 4);
  EXPECT_EQ(DigitMap::roll({5}, {2}).apply_linear(4), 1);
  EXPECT_EQ(DigitMap::transpose({4, 8}, {1, 0}).as_bmmc(), axes_permutation({4, 8}, {1, 0}));
  EXPECT_EQ(DigitMap(Shape{7, 3, 2}, {2, 0, 1}, {1, 0, 0}, {0, 5, 0}).to_string(), "roll:0,5,0*flip:0*axes:2,0,1");
  EXPECT_EQ(shape_to_string({2, 3, 5}), "2x3x5");
  EXPECT_EQ(shape_to_string({}), "scalar");
}

TEST(DigitMap, ConstructorsAndNormalisation) {
  const DigitMap id;
  EXPECT_EQ(id.rank(), 0);
  EXPECT_EQ(id.size(), 1);
  EXPECT_EQ(id.apply_linear(0), 0);
  EXPECT_TRUE(id.is_identity());
  EXPECT_EQ(id.to_string(), "identity");
  EXPECT_EQ(DigitMap::transpose({2, 3, 4}, {}).axes(), (std::vector<int>{2, 1, 0}));  // NumPy's default
  EXPECT_EQ(DigitMap::flip({2, 3, 4}, {-1, 0}).flips(), (std::vector<std::uint8_t>{1, 0, 1}));
  EXPECT_EQ(DigitMap::roll({5, 7}, {-1, 15}).rolls(), (std::vector<Extent>{4, 1}));
  EXPECT_EQ(DigitMap({5, 7}, {1, 0}, {}, {-8, -1}).rolls(), (std::vector<Extent>{6, 4}));  // per OUTPUT axis
  EXPECT_EQ(DigitMap({5, 7}, {0, 1}, {7, 0}).flips(), (std::vector<std::uint8_t>{1, 0}));
  EXPECT_EQ(DigitMap::transpose({4, 5, 6}, {2, 0, 1}).out_shape(), (Shape{6, 4, 5}));
  EXPECT_EQ(DigitMap::identity({1000, 1003, 257}).size(), 1000 * 1003 * 257);
}

// Every invalid construction is std::invalid_argument naming what was wrong.
TEST(DigitMap, ValidationMessages) {
  const auto expect_msg = [](auto&& make, const std::string& part) {
    try {
      make();
      ADD_FAILURE() << "expected an error containing: " << part;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_msg([] { DigitMap({2, 3}, {0}); }, "axes has 1 entries but the shape 2x3 has rank 2");
  expect_msg([] { DigitMap({2, 3}, {0, 0}); }, "not a permutation of 0..1: entry 1 is 0 again");
  expect_msg([] { DigitMap({2, 3}, {0, 2}); }, "entry 1 is 2, out of range");
  expect_msg([] { DigitMap({2, 3}, {-1, 0}); }, "entry 0 is -1, out of range");
  expect_msg([] { DigitMap({2, 3}, {0, 1}, {1}); }, "flip has 1 entries but the shape 2x3 has rank 2");
  expect_msg([] { DigitMap({2, 3}, {0, 1}, {}, {1, 2, 3}); }, "roll has 3 entries but the shape 2x3 has rank 2");
  expect_msg([] { DigitMap::identity({2, 0, 3}); },
             "extent 1 of the shape 2x0x3 is 0; every extent must be at least 1");
  expect_msg([] { DigitMap::identity({-4}); }, "is -4");
  expect_msg([] { DigitMap::identity({Extent{1} << 31, Extent{1} << 31, 2}); }, "more than 2^62 elements");
  expect_msg([] { DigitMap::identity({Extent{1} << 40, Extent{1} << 40}); }, "more than 2^62 elements");  // overflows
  EXPECT_NO_THROW(DigitMap::identity({Extent{1} << 31, Extent{1} << 31}));  // exactly 2^62
  expect_msg([] { DigitMap::flip({2, 3}, {2}); },
             "flip axis 2 is out of range for the rank-2 shape 2x3 (expected -2..1)");
  expect_msg([] { DigitMap::flip({2, 3}, {-3}); }, "flip axis -3 is out of range");
  expect_msg([] { DigitMap::flip({2, 3}, {1, -1}); }, "flip names axis 1 twice");
  expect_msg([] { DigitMap::roll({2, 3}, {1}); }, "roll has 1 shifts but the shape 2x3 has rank 2");
  expect_msg([] { compose(DigitMap::identity({2, 3}), DigitMap::transpose({2, 3}, {1, 0})); },
             "f takes the shape 2x3 but g produces 3x2");
}

TEST(DigitMap, CanonicalWorkedExamples) {
  // Extent-1 axes drop; in-order plain axes fuse into one.
  EXPECT_EQ(DigitMap::identity({1, 3, 1, 5}).canonical(), DigitMap::identity({15}));
  EXPECT_EQ(DigitMap::identity({1, 1}).canonical(), DigitMap());
  // (2,3,4) → (2,0,1): axes 0 and 1 stay adjacent and in order: a (6,4) transpose.
  EXPECT_EQ(DigitMap::transpose({2, 3, 4}, {2, 0, 1}).canonical(), DigitMap::transpose({6, 4}, {1, 0}));
  // Two flipped axes fuse into one flipped axis; a flipped and a plain one do not.
  EXPECT_EQ(DigitMap::flip({3, 5}, {0, 1}).canonical(), DigitMap::flip({15}, {0}));
  EXPECT_EQ(DigitMap::flip({3, 5}, {0}).canonical(), DigitMap::flip({3, 5}, {0}));
  // A roll on the outer axis becomes a roll of the fused one by r·d_inner; one on the inner axis keeps it apart.
  EXPECT_EQ(DigitMap::roll({3, 5}, {2, 0}).canonical(), DigitMap::roll({15}, {10}));
  EXPECT_EQ(DigitMap::roll({3, 5}, {0, 2}).canonical(), DigitMap::roll({3, 5}, {0, 2}));
  // fftshift of (8, 6) stays two axes (the inner one rolls); the rank-18 reversal of extent-3 axes is one flip.
  EXPECT_EQ(DigitMap::roll({8, 6}, {4, 3}).canonical().rank(), 2);
  EXPECT_EQ(DigitMap::flip(Shape(18, 3), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
                .canonical()
                .rank(),
            1);
  // On an extent of 2, flip + roll 1 is no change.
  EXPECT_EQ(DigitMap({2, 3}, {0, 1}, {1, 0}, {1, 0}).canonical(), DigitMap::identity({6}));
}

TEST(DigitMap, AsBmmcWorkedExamples) {
  // fftshift of (8, 16) complements the top bit of each axis: bits 6 and 3.
  EXPECT_EQ(DigitMap::roll({8, 16}, {4, 8}).as_bmmc(), Bmmc(identity(7).matrix(), (BitVec{1} << 6) | (BitVec{1} << 3)));
  // A flip complements every bit of the axis; flip then roll by d/2 is the XOR of both.
  EXPECT_EQ(DigitMap::flip({8, 16}, {1}).as_bmmc(), Bmmc(identity(7).matrix(), 0xf));
  EXPECT_EQ(DigitMap({8, 16}, {0, 1}, {0, 1}, {0, 8}).as_bmmc(), Bmmc(identity(7).matrix(), 0x7));
  EXPECT_EQ(DigitMap::identity({1, 1}).as_bmmc(), Bmmc());
  EXPECT_FALSE(DigitMap::identity({3}).as_bmmc());
  EXPECT_FALSE(DigitMap::roll({8}, {2}).as_bmmc());
  // Non-power-of-two extents that fuse into one: still not 2^n elements.
  EXPECT_FALSE(DigitMap::transpose({6, 4}, {1, 0}).as_bmmc());
}

// The core properties, exhaustively on small arrays of random shapes (rank 0–30, extents 1–1000).
TEST(DigitMap, RandomMapsAgainstTheNumpyReference) {
  for (std::uint64_t seed = 0; seed < 600; ++seed) {
    std::mt19937_64 rng(seed);
    const Shape shape = random_shape(rng, seed % 3 == 0 ? 30 : 6, seed % 2 ? 1000 : 12, 3000);
    const DigitMap f = random_map(rng, shape);
    SCOPED_TRACE(testing::Message() << "seed " << seed << ": " << f.to_string() << " on " << shape_to_string(shape));
    const Extent n = f.size();
    ASSERT_EQ(n, size_of(shape));
    const std::vector<Extent> ref = numpy_reference(f);
    std::vector<char> hit(static_cast<std::size_t>(n), 0);
    bool same = true;
    for (Extent x = 0; x < n; ++x) {
      const Extent y = f.apply_linear(x);
      ASSERT_TRUE(y >= 0 && y < n) << x;
      hit[static_cast<std::size_t>(y)] = 1;
      same = same && ref[static_cast<std::size_t>(y)] == x;
      if (x % 7 == 0) ASSERT_EQ(f.apply(coords(shape, x)), coords(f.out_shape(), y)) << x;
    }
    EXPECT_TRUE(same) << "apply_linear disagrees with np.roll(np.flip(np.transpose(...)))";
    EXPECT_EQ(std::count(hit.begin(), hit.end(), 1), n) << "not a bijection";

    const DigitMap inv = f.inverse();
    EXPECT_EQ(inv.shape(), f.out_shape());
    EXPECT_TRUE(compose(f, inv).is_identity());
    EXPECT_TRUE(compose(inv, f).is_identity());
    EXPECT_EQ(compose(f, inv), DigitMap::identity(f.out_shape()));
    EXPECT_EQ(compose(inv, f), DigitMap::identity(shape));
    EXPECT_EQ(inv.inverse(), f);

    // compose(g, f) applies f, then g.
    const DigitMap g = random_map(rng, f.out_shape());
    const DigitMap gf = compose(g, f);
    for (Extent x = 0; x < n; ++x) ASSERT_EQ(gf.apply_linear(x), g.apply_linear(f.apply_linear(x))) << x;

    // The canonical form: the same map, idempotent, no extent-1 axis, nothing left to fuse.
    const DigitMap c = f.canonical();
    EXPECT_EQ(c.size(), n);
    for (Extent x = 0; x < n; ++x) ASSERT_EQ(c.apply_linear(x), f.apply_linear(x)) << x;
    EXPECT_EQ(c.canonical(), c);
    EXPECT_LE(c.rank(), f.rank());
    for (int j = 0; j < c.rank(); ++j) {
      EXPECT_GT(c.shape()[static_cast<std::size_t>(j)], 1);
      if (j + 1 < c.rank())
        EXPECT_FALSE(c.axes()[j + 1] == c.axes()[j] + 1 && c.flips()[j] == c.flips()[j + 1] && c.rolls()[j + 1] == 0);
    }

    // is_identity is exact; is_involution is exact when the canonical shapes agree and never wrongly true.
    EXPECT_EQ(f.is_identity(), brute_identity(f));
    EXPECT_EQ(c.is_identity(), f.is_identity());
    const bool inv_brute = brute_involution(f);
    if (f.is_involution()) EXPECT_TRUE(inv_brute);
    if (c.shape() == c.out_shape() || f.as_bmmc()) EXPECT_EQ(f.is_involution(), inv_brute);

    // as_bmmc agrees with apply_linear whenever it answers.
    if (const auto b = f.as_bmmc()) {
      ASSERT_EQ(Extent{1} << b->n(), n);
      for (Extent x = 0; x < n; ++x)
        ASSERT_EQ(static_cast<Extent>(b->apply(static_cast<BitVec>(x))), f.apply_linear(x)) << x;
    }

    // The spec text reads back to the same map; equal maps hash equally.
    EXPECT_EQ(parse_digit_spec(f.to_string(), shape), f) << f.to_string();
    EXPECT_EQ(std::hash<DigitMap>{}(f), std::hash<DigitMap>{}(DigitMap(f.shape(), f.axes(), f.flips(), f.rolls())));
  }
}

// Every map of power-of-two extents whose rolls are 0 or half the extent is a Bmmc, and the Bmmc is right.
TEST(DigitMap, AsBmmcAnswersForEveryF2AffineMap) {
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    std::mt19937_64 rng(seed);
    const int k = static_cast<int>(rng() % 7);
    Shape shape;
    int bits = 0;
    for (int a = 0; a < k; ++a) {
      const int b = bits >= 12 ? 0 : static_cast<int>(rng() % 4);
      bits += b;
      shape.push_back(Extent{1} << b);
    }
    std::vector<int> axes(static_cast<std::size_t>(k));
    std::iota(axes.begin(), axes.end(), 0);
    std::shuffle(axes.begin(), axes.end(), rng);
    std::vector<std::uint8_t> flip(static_cast<std::size_t>(k));
    std::vector<Extent> roll(static_cast<std::size_t>(k));
    for (std::size_t j = 0; j < axes.size(); ++j) {
      flip[j] = static_cast<std::uint8_t>(rng() % 2);
      roll[j] = rng() % 2 ? shape[static_cast<std::size_t>(axes[j])] / 2 : 0;
    }
    const DigitMap f(shape, axes, flip, roll);
    SCOPED_TRACE(testing::Message() << "seed " << seed << ": " << f.to_string() << " on " << shape_to_string(shape));
    const auto b = f.as_bmmc();
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->n(), bits);
    for (Extent x = 0; x < f.size(); ++x)
      ASSERT_EQ(static_cast<Extent>(b->apply(static_cast<BitVec>(x))), f.apply_linear(x));
    // A plain transpose is exactly axes_permutation.
    std::vector<std::uint64_t> ushape(shape.begin(), shape.end());
    EXPECT_EQ(DigitMap::transpose(shape, axes).as_bmmc(), axes_permutation(ushape, axes));
  }
}

// Large shapes (up to 2^62 elements, rank up to 30, extents up to 1000): sampled indices against the reference.
TEST(DigitMap, LargeShapesSampled) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    std::mt19937_64 rng(seed);
    const Shape shape = random_shape(rng, 30, 1000, kMaxDigitElements);
    const DigitMap f = random_map(rng, shape);
    SCOPED_TRACE(testing::Message() << "seed " << seed << ": " << f.to_string() << " on " << shape_to_string(shape));
    const DigitMap inv = f.inverse();
    const DigitMap c = f.canonical();
    const Shape out = f.out_shape();
    const std::uint64_t n = static_cast<std::uint64_t>(f.size());
    for (int t = 0; t < 200; ++t) {
      const Extent o = static_cast<Extent>(t < 2 ? (t ? n - 1 : 0) : rng() % n);
      const Extent x = linear(shape, numpy_source(f, coords(out, o)));
      ASSERT_EQ(f.apply_linear(x), o);
      ASSERT_EQ(inv.apply_linear(o), x);
      ASSERT_EQ(c.apply_linear(x), o);
    }
    EXPECT_EQ(c.canonical(), c);
    EXPECT_EQ(parse_digit_spec(f.to_string(), shape), f);
  }
}

TEST(DigitMap, InvolutionExamples) {
  EXPECT_TRUE(DigitMap::transpose({5, 5}, {1, 0}).is_involution());  // square transposes
  EXPECT_TRUE(DigitMap::flip({3, 5, 7}, {0, 2}).is_involution());
  EXPECT_TRUE(DigitMap::roll({4, 6}, {2, 3}).is_involution());        // fftshift of even extents
  EXPECT_FALSE(DigitMap::roll({5}, {2}).is_involution());
  EXPECT_FALSE(DigitMap::transpose({2, 3}, {1, 0}).is_involution());
  // 4x2x2 → 2x2x4 with a flip and a half roll is a Bmmc involution between different shapes: found exactly.
  const DigitMap bits({4, 2, 2}, {1, 2, 0}, {1, 0, 0}, {0, 0, 2});
  EXPECT_TRUE(brute_involution(bits));
  EXPECT_TRUE(bits.is_involution());
  // 2x3x6 → 6x2x3 with flips and a roll is an involution too, but not a Bmmc and the canonical shapes differ:
  // the conservative no (docs/DESIGN.md §11.2).
  const DigitMap digits = parse_digit_spec("roll:0,1,0*flip:0,2*axes:2,0,1", Shape{2, 3, 6});
  EXPECT_EQ(digits.canonical(), digits);
  EXPECT_TRUE(brute_involution(digits));
  EXPECT_FALSE(digits.is_involution());
}

TEST(DigitMap, HashSeparatesMaps) {
  std::unordered_set<DigitMap> set;
  set.insert(DigitMap::transpose({2, 3}, {1, 0}));
  set.insert(DigitMap::transpose({3, 2}, {1, 0}));
  set.insert(DigitMap::flip({2, 3}, {0}));
  set.insert(DigitMap::roll({2, 3}, {0, 1}));
  set.insert(DigitMap::identity({6}));
  set.insert(DigitMap::identity({6}));
  EXPECT_EQ(set.size(), 5u);
}

}  // namespace
}  // namespace bmmc
