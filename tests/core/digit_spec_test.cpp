// The digit spec language (bmmc/core/digit_spec.hpp): every term against its DigitMap constructor, the shape
// flowing right to left, inv and parentheses, random products rebuilt term by term, parse_shape, and every error
// with its column.
#include <gtest/gtest.h>

#include <numeric>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "bmmc/core/digit_map.hpp"
#include "bmmc/core/digit_spec.hpp"

namespace bmmc {

[[maybe_unused]] static void PrintTo(const DigitMap& m, std::ostream* os) {
  *os << m.to_string() << " on " << shape_to_string(m.shape());
}

namespace {

using Shape = std::vector<Extent>;

void expect_error(const std::string& spec, std::optional<Shape> shape, int column, const std::string& part) {
  try {
    const DigitMap m = parse_digit_spec(spec, shape);
    ADD_FAILURE() << "'" << spec << "' parsed to " << m.to_string() << ", expected an error containing: " << part;
  } catch (const SpecError& e) {
    EXPECT_EQ(e.column(), column) << spec << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << spec << ": " << e.what();
    if (column > 0)
      EXPECT_NE(std::string(e.what()).find("column " + std::to_string(column)), std::string::npos) << e.what();
  }
}

TEST(DigitSpec, HeaderExample) {
  EXPECT_EQ(parse_digit_spec("flip:0*axes:1,0", Shape{2, 3}),
            compose(DigitMap::flip({3, 2}, {0}), DigitMap::transpose({2, 3}, {1, 0})));
  const DigitMap m(Shape{7, 3, 2}, {2, 0, 1}, {1, 0, 0}, {0, 5, 0});
  EXPECT_EQ(parse_digit_spec("roll:0,5,0*flip:0*axes:2,0,1", Shape{7, 3, 2}), m);
}

TEST(DigitSpec, EveryTermEqualsItsConstructor) {
  const Shape s{4, 5, 6};
  EXPECT_EQ(parse_digit_spec("axes:2,0,1", s), DigitMap::transpose(s, {2, 0, 1}));
  EXPECT_EQ(parse_digit_spec("axes:4x5x6:2,0,1"), DigitMap::transpose(s, {2, 0, 1}));
  EXPECT_EQ(parse_digit_spec("axes:4x5x6:2,0,1", s), DigitMap::transpose(s, {2, 0, 1}));
  EXPECT_EQ(parse_digit_spec("axes:7:0"), DigitMap::identity({7}));  // a rank-1 shape
  EXPECT_EQ(parse_digit_spec("axes:0b100x5x6:2,0,1"), DigitMap::transpose(s, {2, 0, 1}));
  EXPECT_EQ(parse_digit_spec("flip", s), DigitMap::flip(s, {0, 1, 2}));
  EXPECT_EQ(parse_digit_spec("flip:1", s), DigitMap::flip(s, {1}));
  EXPECT_EQ(parse_digit_spec("flip:-1,0", s), DigitMap::flip(s, {2, 0}));
  EXPECT_EQ(parse_digit_spec("roll:1,-2,0x10", s), DigitMap::roll(s, {1, -2, 16}));
  EXPECT_EQ(parse_digit_spec("fftshift", Shape{5, 6}), DigitMap::roll({5, 6}, {2, 3}));
  EXPECT_EQ(parse_digit_spec("ifftshift", Shape{5, 6}), DigitMap::roll({5, 6}, {-2, -3}));
  EXPECT_EQ(parse_digit_spec("identity", s), DigitMap::identity(s));
  EXPECT_EQ(parse_digit_spec("flip", Shape{}), DigitMap());
  EXPECT_EQ(parse_digit_spec(" flip : 0 * axes : 1 , 0 ", Shape{2, 3}),
            parse_digit_spec("flip:0*axes:1,0", Shape{2, 3}));
}

TEST(DigitSpec, ShapeFlowsRightToLeftAndInvInverts) {
  const Shape s{4, 5, 6};
  // The left term acts on the right term's output shape (6, 4, 5).
  EXPECT_EQ(parse_digit_spec("roll:1,2,3*axes:2,0,1", s),
            compose(DigitMap::roll({6, 4, 5}, {1, 2, 3}), DigitMap::transpose(s, {2, 0, 1})));
  EXPECT_EQ(parse_digit_spec("axes:6x4x5:1,2,0*axes:2,0,1", s), DigitMap::identity(s));
  // inv(axes:2,0,1) on (4,5,6): the transpose whose output is (4,5,6), inverted.
  EXPECT_EQ(parse_digit_spec("inv(axes:2,0,1)", s), DigitMap::transpose(s, {1, 2, 0}));
  EXPECT_EQ(parse_digit_spec("inv(axes:5x6x4:2,0,1)", s), DigitMap::transpose(s, {1, 2, 0}));
  EXPECT_EQ(parse_digit_spec("inv(axes:5x6x4:2,0,1)"), DigitMap::transpose(s, {1, 2, 0}));
  const DigitMap rf = compose(DigitMap::roll(s, {1, 2, 3}), DigitMap::flip(s, {0}));
  EXPECT_EQ(parse_digit_spec("inv(roll:1,2,3*flip:0)", s), rf.inverse());
  EXPECT_EQ(parse_digit_spec("inv(inv(roll:1,2,3*flip:0))", s), rf);
  EXPECT_EQ(parse_digit_spec("ifftshift*fftshift", Shape{5, 7}), DigitMap::identity({5, 7}));
  EXPECT_EQ(parse_digit_spec("inv(fftshift)", Shape{5, 7}), parse_digit_spec("ifftshift", Shape{5, 7}));
  EXPECT_NE(parse_digit_spec("fftshift*fftshift", Shape{5, 7}), DigitMap::identity({5, 7}));
  EXPECT_EQ(parse_digit_spec("(flip:0*roll:1,1)*axes:1,0", Shape{2, 3}),
            compose(compose(DigitMap::flip({3, 2}, {0}), DigitMap::roll({3, 2}, {1, 1})),
                    DigitMap::transpose({2, 3}, {1, 0})));
}

// Random products of random terms, each term also built with the constructors: the parser's map must equal the
// product, and inv(spec) its inverse.
TEST(DigitSpec, RandomProductsRebuilt) {
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    std::mt19937_64 rng(seed);
    const int k = 1 + static_cast<int>(rng() % 5);
    Shape shape;
    for (int a = 0; a < k; ++a) shape.push_back(1 + static_cast<Extent>(rng() % 9));
    const bool give_shape = rng() % 4 != 0;
    std::string spec;
    DigitMap expected = DigitMap::identity(shape);
    const int terms = 1 + static_cast<int>(rng() % 5);
    for (int t = 0; t < terms; ++t) {
      const Shape cur = expected.out_shape();
      std::string term;
      DigitMap m = DigitMap::identity(cur);
      switch (t == 0 && !give_shape ? 0 : rng() % 5) {
        case 0: {
          std::vector<int> q(cur.size());
          std::iota(q.begin(), q.end(), 0);
          std::shuffle(q.begin(), q.end(), rng);
          term = "axes:" + (t == 0 || rng() % 2 ? shape_to_string(cur) + ":" : std::string());
          for (std::size_t j = 0; j < q.size(); ++j) term += (j ? "," : "") + std::to_string(q[j]);
          m = DigitMap::transpose(cur, q);
          break;
        }
        case 1: {
          std::vector<int> axes;
          for (int a = 0; a < k; ++a)
            if (rng() % 2) axes.push_back(rng() % 2 ? a : a - k);
          term = "flip";
          for (std::size_t j = 0; j < axes.size(); ++j) term += (j ? "," : ":") + std::to_string(axes[j]);
          std::vector<int> all(static_cast<std::size_t>(k));  // "flip" without a list flips every axis
          std::iota(all.begin(), all.end(), 0);
          m = DigitMap::flip(cur, axes.empty() ? all : axes);
          break;
        }
        case 2: {
          std::vector<Extent> s;
          term = "roll:";
          for (int a = 0; a < k; ++a) {
            s.push_back(static_cast<Extent>(rng() % 41) - 20);
            term += (a ? "," : "") + std::to_string(s.back());
          }
          m = DigitMap::roll(cur, s);
          break;
        }
        case 3: {
          std::vector<Extent> s;
          for (Extent d : cur) s.push_back(d / 2);
          term = "fftshift";
          m = DigitMap::roll(cur, s);
          break;
        }
        default: term = "identity";
      }
      spec = spec.empty() ? term : term + "*" + spec;
      expected = compose(m, expected);
    }
    SCOPED_TRACE(testing::Message() << "seed " << seed << ": " << spec << " on " << shape_to_string(shape));
    const std::optional<Shape> given = give_shape ? std::optional<Shape>(shape) : std::nullopt;
    EXPECT_EQ(parse_digit_spec(spec, given), expected);
    EXPECT_EQ(parse_digit_spec("inv(" + spec + ")", expected.out_shape()), expected.inverse());
    EXPECT_EQ(parse_digit_spec(expected.to_string(), shape), expected);
  }
}

TEST(DigitSpec, ParseShape) {
  EXPECT_EQ(parse_shape("1000x1003x257"), (Shape{1000, 1003, 257}));
  EXPECT_EQ(parse_shape("1000,1003,257"), (Shape{1000, 1003, 257}));
  EXPECT_EQ(parse_shape(" 7 "), (Shape{7}));
  EXPECT_EQ(parse_shape("0b100X3"), (Shape{4, 3}));
  EXPECT_EQ(parse_shape("scalar"), Shape{});
  EXPECT_EQ(parse_shape(shape_to_string({2, 3, 5})), (Shape{2, 3, 5}));
  const auto expect_shape_error = [](const std::string& text, int column, const std::string& part) {
    try {
      parse_shape(text);
      ADD_FAILURE() << "'" << text << "' parsed";
    } catch (const SpecError& e) {
      EXPECT_EQ(e.column(), column) << text << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << text << ": " << e.what();
    }
  };
  expect_shape_error("", 1, "empty shape");
  expect_shape_error("4x0", 3, "extent 1 of the shape is 0");
  expect_shape_error("4xx5", 3, "expected an extent");
  expect_shape_error("4x5y", 3, "number '5y' is malformed");
  expect_shape_error("4x5 6", 5, "unexpected '6' in the shape");
  expect_shape_error("-4", 1, "found a negative number");
  expect_shape_error("4294967296x4294967296", 12, "more than 2^62 elements");
}

TEST(DigitSpec, EveryErrorWithItsColumn) {
  const Shape s{4, 5, 6};
  expect_error("axes:0,3,1", s, 8, "axis 3 is out of range for a rank-3 shape 4x5x6 at column 8 (expected 0..2)");
  expect_error("axes:0,1,1", s, 10, "axis 1 is repeated in 'axes:0,1,1'");
  expect_error("axes:1,0", s, 1, "'axes:1,0' lists 2 axes but the shape 4x5x6 has rank 3");
  expect_error("axes:-1,0,2", s, 6, "found a negative number");
  expect_error("axes:5x4x6:0,1,2", s, 6, "'axes:5x4x6:0,1,2' gives the shape 5x4x6 but shape is 4x5x6");
  expect_error("axes:4x5x6:0,1,2*axes:4x5x6:1,0,2", std::nullopt, 6,
               "'axes:4x5x6:0,1,2' gives the shape 4x5x6 but the terms to its right produce 5x4x6");
  expect_error("inv(axes:4x5x6:2,0,1)", s, 10, "inverted expects the shape 6x4x5 but shape is 4x5x6");
  expect_error("axes:4x0:1,0", std::nullopt, 8, "extent 1 of the shape of 'axes:4x0:1,0' is 0");
  expect_error("axes:4294967296x4294967296:1,0", std::nullopt, 17, "more than 2^62 elements");
  expect_error("axes:4x5", std::nullopt, 9, "expected 'x' or ':' after the shape of 'axes'");
  expect_error("axes", s, 5, "expected ':' after 'axes'");
  expect_error("roll:1,2", s, 1, "'roll:1,2' gives 2 shifts but the shape 4x5x6 has rank 3");
  expect_error("roll:1,2,3,4*axes:4x5x6:2,0,1", std::nullopt, 1, "gives 4 shifts but the shape 6x4x5 has rank 3");
  expect_error("axes:4x5x6:2,0,1*roll:1,2,3", std::nullopt, 18, "'roll:1,2,3' needs the array's shape");
  expect_error("roll", s, 5, "expected ':' after 'roll'");
  expect_error("roll:1,x,3", s, 8, "expected a number for roll:S0,S1,...");
  expect_error("roll:0b2,0,0", s, 6, "number '0b2' is malformed");
  expect_error("roll:99999999999999999999,0,0", s, 6, "does not fit in 63 bits");
  expect_error("flip:3", s, 6, "axis 3 is out of range for a rank-3 shape 4x5x6 at column 6 (expected -3..2)");
  expect_error("flip:-4", s, 6, "axis -4 is out of range");
  expect_error("flip:1,-2", s, 8, "axis 1 is flipped twice in 'flip:1,-2'");
  expect_error("flip:", s, 6, "expected a number for flip");
  expect_error("fftshift:1", s, 9, "'fftshift' takes no arguments");
  expect_error("identity:3", s, 9, "'identity' takes no arguments");
  expect_error("flip:0 ]", s, 8, "unexpected ']' after a complete term");
  expect_error("flip)", s, 5, "unmatched ')'");
  expect_error("flip*", s, 6, "expected a name, 'inv(' or '(' but found end of spec");
  expect_error("mirror", s, 1, "unknown name 'mirror' at column 1 (known: axes:");
  expect_error("transpose:1", s, 1, "fftshift, ifftshift, identity, inv(SPEC), (SPEC)");
  expect_error("inv flip", s, 5, "expected '(' after 'inv'");
  expect_error("inv(flip", s, 9, "expected ')' at column 9 to close the 'inv(' at column 1");
  expect_error("(flip", s, 6, "to close the '(' at column 1");
  expect_error("", s, 1, "empty spec");
  expect_error("  ", s, 3, "empty spec");
  expect_error("flip", std::nullopt, 1, "'flip' needs the array's shape: shape is not given");
  expect_error("fftshift*axes:1,0", std::nullopt, 10, "'axes:1,0' needs the array's shape");
  expect_error(std::string(201, '(') + "flip" + std::string(201, ')'), s, 202, "nests deeper than 200 levels");
  expect_error("flip", Shape{4, 0}, 0, "shape is not a valid shape: extent 1 of the shape 4x0 is 0");
  try {
    parse_digit_spec("flip", std::nullopt, "x.shape");
    ADD_FAILURE();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("x.shape is not given"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bmmc
