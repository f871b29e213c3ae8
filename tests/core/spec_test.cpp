// The spec language (docs/DESIGN.md §2): every name against its constructor, products, inv, parentheses,
// complements, number formats, and every error with its column.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/core/spec.hpp"

namespace bmmc {

// Readable failure output (internal linkage: other test files of this binary may print differently).
[[maybe_unused]] static void PrintTo(const Bmmc& b, std::ostream* os) { *os << "\n" << b.to_string(); }

namespace {

// Expects parse_spec to fail with a message containing `part` and pointing at `column`.
void expect_error(const std::string& spec, std::optional<int> n, int column, const std::string& part) {
  try {
    parse_spec(spec, n);
    ADD_FAILURE() << "'" << spec << "' parsed, expected an error containing: " << part;
  } catch (const SpecError& e) {
    EXPECT_EQ(e.column(), column) << spec << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << spec << ": " << e.what();
    if (column > 0) {
      EXPECT_NE(std::string(e.what()).find("column " + std::to_string(column)), std::string::npos) << e.what();
    }
  }
}

TEST(Spec, EveryNameEqualsItsConstructor) {
  for (int n : {1, 4, 7, 12}) {
    EXPECT_EQ(parse_spec("identity", n), identity(n));
    EXPECT_EQ(parse_spec("bit-reverse", n), bit_reverse(n));
    EXPECT_EQ(parse_spec("reverse", n), reverse(n));
    EXPECT_EQ(parse_spec("gray", n), gray(n));
    EXPECT_EQ(parse_spec("gray-inverse", n), gray_inverse(n));
    EXPECT_EQ(parse_spec("rotate:1", n), rotate(n, 1));
    EXPECT_EQ(parse_spec("rotate:3", n), rotate(n, 3));
    EXPECT_EQ(parse_spec("transpose:1", n), transpose(n, 1));
    EXPECT_EQ(parse_spec("transpose:" + std::to_string(n / 2), n), transpose(n, n / 2));
    EXPECT_EQ(parse_spec("parm:1", n), parm_matrix(n, 1));
    EXPECT_EQ(parse_spec("random-bpc:7", n), random_bpc(n, 7));
    EXPECT_EQ(parse_spec("random-bmmc:7", n), random_bmmc(n, 7));
  }
  EXPECT_EQ(parse_spec("parm:0b110", 3), parm_matrix(3, 0b110));
  EXPECT_EQ(parse_spec("bits:2,0,1"), bit_permutation({2, 0, 1}));
  EXPECT_EQ(parse_spec("axes:2x4x8:2,0,1"), axes_permutation({2, 4, 8}, {2, 0, 1}));
  EXPECT_EQ(parse_spec("matrix:1,3,4"), from_rows({1, 3, 4}));
  EXPECT_EQ(parse_spec("random-bmmc:18446744073709551615", 5), random_bmmc(5, ~std::uint64_t{0}));
}

TEST(Spec, PaperWorkedExamples) {
  EXPECT_EQ(parse_spec("bit-reverse", 4).apply(7), 14u);
  EXPECT_EQ(parse_spec("rotate:1", 5).apply(0b11001), 0b11100u);
  EXPECT_EQ(parse_spec("transpose:2", 4).apply(6), 9u);
  EXPECT_EQ(parse_spec("parm:0b0011", 4).matrix().to_string(), ".1..\n..1.\n...1\n11..\n");
}

TEST(Spec, ProductAppliesRightmostFirst) {
  const Bmmc p = parse_spec("rotate:1*bit-reverse", 5);
  EXPECT_EQ(p, compose(rotate(5, 1), bit_reverse(5)));
  for (BitVec x = 0; x < 32; ++x) EXPECT_EQ(p.apply(x), rotate(5, 1).apply(bit_reverse(5).apply(x)));
  // Not commutative here, so the order really is checked.
  EXPECT_NE(p, parse_spec("bit-reverse*rotate:1", 5));
  EXPECT_EQ(parse_spec("gray*rotate:2*transpose:3", 7), compose(gray(7), compose(rotate(7, 2), transpose(7, 3))));
}

TEST(Spec, InverseAndParentheses) {
  EXPECT_EQ(parse_spec("inv(gray)", 6), gray_inverse(6));
  EXPECT_EQ(parse_spec("inv(random-bmmc:3)*random-bmmc:3", 9), identity(9));
  EXPECT_EQ(parse_spec("inv(rotate:1*gray)", 6), compose(rotate(6, 1), gray(6)).inverse());
  EXPECT_EQ(parse_spec("(rotate:1*gray)*bit-reverse", 6), parse_spec("rotate:1*(gray*bit-reverse)", 6));
  EXPECT_EQ(parse_spec("((identity))", 3), identity(3));
  EXPECT_EQ(parse_spec("inv(inv(random-bpc:4))", 8), random_bpc(8, 4));
}

TEST(Spec, ComplementXorsTheOutput) {
  const Bmmc p = parse_spec("bit-reverse^0b101", 4);
  EXPECT_EQ(p.matrix(), bit_reverse(4).matrix());
  EXPECT_EQ(p.complement(), 0b101u);
  EXPECT_EQ(parse_spec("identity^15", 4), reverse(4));
  EXPECT_EQ(parse_spec("reverse^0xf", 4), identity(4));
  // '^' binds tighter than '*': (A^c) * B = x -> A·B·x ⊕ c; A * (B^d) = A·B·x ⊕ A·d.
  EXPECT_EQ(parse_spec("rotate:1^1*gray", 4).complement(), 1u);
  EXPECT_EQ(parse_spec("rotate:1*gray^1", 4).complement(), rotate(4, 1).apply(1));
  EXPECT_EQ(parse_spec("(rotate:1*gray)^2", 4).complement(), 2u);
  EXPECT_EQ(parse_spec("inv(gray)*rotate:3^0b101", 8), compose(gray_inverse(8), Bmmc(rotate(8, 3).matrix(), 5)));
}

TEST(Spec, NumberFormatsAndWhitespace) {
  EXPECT_EQ(parse_spec("matrix:0x1,0b10,4"), identity(3));
  EXPECT_EQ(parse_spec("matrix:0X1,0B10,0x04"), identity(3));
  EXPECT_EQ(parse_spec("  inv ( rotate : 2 ) * bits : 1 , 0 , 2 , 3 ^ 0x3  "),
            compose(rotate(4, 2).inverse(), Bmmc(bit_permutation({1, 0, 2, 3}).matrix(), 3)));
  EXPECT_EQ(parse_spec("axes:4x0b10:1,0"), axes_permutation({4, 2}, {1, 0}));
  // In a shape 'x' always separates: "2x0x4" is the dimensions 2, 0 and 4 (refused), not 2 and hex 4.
  expect_error("axes:2x0x4:0,1,2", std::nullopt, 1, "dimension 1 of the shape is 0");
  EXPECT_EQ(parse_spec("axes: 4 x 4 : 1 , 0"), transpose(4, 2));
  EXPECT_EQ(parse_spec_number(" 0x1F "), 31u);
  EXPECT_EQ(parse_spec_number("0b101"), 5u);
  EXPECT_EQ(parse_spec_number("18446744073709551615"), ~std::uint64_t{0});
}

TEST(Spec, DefiningTermsSetN) {
  // n comes from the term that defines it, even when that term is to the right.
  EXPECT_EQ(parse_spec("bit-reverse*bits:1,0,2"), compose(bit_reverse(3), bit_permutation({1, 0, 2})));
  EXPECT_EQ(parse_spec("gray*matrix:1,2,4,8", 4), gray(4));
  EXPECT_EQ(parse_spec("bits:1,0", 2), bit_permutation({1, 0}));
  EXPECT_EQ(parse_spec("inv(axes:2x2:1,0)*transpose:1"), identity(2));
  EXPECT_EQ(parse_spec("identity", 0).n(), 0);
}

TEST(Spec, SyntaxErrorsNameTheColumn) {
  expect_error("rotate", 5, 7, "expected ':' after 'rotate'");
  expect_error("rotate*gray", 5, 7, "expected ':' after 'rotate'");
  expect_error("bitrev", 4, 1, "unknown name 'bitrev'");
  expect_error("gray*bitrev", 4, 6, "known: identity, bit-reverse");
  // A long piece of the spec is quoted shortened (its first 40 characters and its length), so that a bad spec
  // of kilobytes gives a message of a few lines; 48 characters or fewer are quoted whole.
  expect_error(std::string(300, 'q'), 4, 1, "unknown name '" + std::string(40, 'q') + "...' (300 characters)");
  expect_error("gray*" + std::string(48, 'q'), 4, 6, "unknown name '" + std::string(48, 'q') + "' at");
  expect_error("rotate:" + std::string(61, '1'), 5, 8, "...' (61 characters) does not fit in 64 bits");
  // The missing ')' is where the column points; the bracket it closes is named by its own column, once each.
  expect_error("inv(rotate:1*gray", 5, 18,
               "expected ')' at column 18 to close the 'inv(' at column 1, found end of spec");
  expect_error("(gray*rotate:1", 5, 15, "expected ')' at column 15 to close the '(' at column 1, found end of spec");
  expect_error("gray*(bit-reverse x", 5, 19, "expected ')' at column 19 to close the '(' at column 6, found 'x'");
  expect_error("matrix:1,0b12", std::nullopt, 10, "number '0b12' is malformed");
  expect_error("rotate:0x", 5, 8, "number '0x' is malformed");
  expect_error("rotate:12a", 5, 8, "number '12a' is malformed");
  expect_error("rotate:99999999999999999999", 5, 8, "does not fit in 64 bits");
  expect_error("rotate:", 5, 8, "expected a number");
  expect_error("rotate:-1", 5, 8, "expected a number");
  expect_error("gray junk", 5, 6, "unexpected 'j'");
  expect_error("gray)", 5, 5, "unmatched ')'");
  expect_error("gray*", 5, 6, "expected a name");
  expect_error("", 5, 1, "empty spec");
  expect_error("   ", 5, 4, "empty spec");
  expect_error("gray:3", 5, 5, "takes no arguments");
  expect_error("inv gray", 5, 5, "expected '(' after 'inv'");
  expect_error("gray^", 5, 6, "expected a complement number");
  expect_error("gray^1^2", 5, 7, "unexpected '^'");
  expect_error("axes:4x4", std::nullopt, 9, "expected 'x' or ':'");
  expect_error("bits:1,", std::nullopt, 8, "expected a number");
  expect_error("*gray", 5, 1, "expected a name");
}

TEST(Spec, SemanticErrorsNameTheColumn) {
  expect_error("bit-reverse", std::nullopt, 1, "bit-reverse needs n: the spec does not define it and n is not given");
  expect_error("gray*rotate:1", std::nullopt, 1, "gray needs n");
  expect_error("matrix:1,1", std::nullopt, 1, "singular");
  expect_error("gray*matrix:3,3", std::nullopt, 6, "singular");
  expect_error("matrix:1,4", std::nullopt, 1, "matrix:1,4");
  expect_error("bits:0,0", std::nullopt, 1, "permutation");
  expect_error("axes:3x4:1,0", std::nullopt, 1, "power of two");
  expect_error("transpose:5", 4, 1, "transpose:R needs 0 <= R <= n");
  expect_error("parm:0", 4, 1, "parm mask");
  expect_error("parm:16", 4, 1, "parm mask");
  expect_error("gray^0x10", 4, 6, "complement '0x10' does not fit in n = 4 bits");
  expect_error("rotate:99999999999", 4, 8, "too large");
}

TEST(Spec, NMismatchNamesBothValues) {
  expect_error("bits:1,0,2", 4, 1, "defines n = 3, but n is 4");
  expect_error("bits:1,0,2*matrix:1,2", std::nullopt, 12, "'matrix:1,2' at column 12 defines n = 2");
  expect_error("bits:1,0,2*matrix:1,2", std::nullopt, 12, "'bits:1,0,2' at column 1 defines n = 3");
  expect_error("gray*inv(axes:4x4:1,0)", 5, 10, "defines n = 4, but n is 5");
  expect_error("gray", 65, 0, "n must be between 0 and 64");
  expect_error("gray", -1, 0, "n must be between 0 and 64");
}

// The messages about n name the caller's argument (n_name): a C++ or Python `n`, a command line's --n, or an
// array's size; never a command-line flag when the caller has none.
TEST(Spec, MessagesNameTheCallersArgumentForN) {
  const auto message = [](std::string_view spec, std::optional<int> n, std::optional<std::string_view> n_name) {
    try {
      if (n_name) parse_spec(spec, n, *n_name);
      else parse_spec(spec, n);
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message("bit-reverse", std::nullopt, "--n"),
            "bit-reverse needs n: the spec does not define it and --n is not given (the term 'bit-reverse' at "
            "column 1; only bits:, axes: and matrix: define n)");
  EXPECT_EQ(message("bits:1,0", 4, "n = log2(x.size)"),
            "n mismatch: 'bits:1,0' at column 1 defines n = 2, but n = log2(x.size) is 4");
  EXPECT_EQ(message("gray", 65, "--n"), "--n must be between 0 and 64 index bits, got 65");
  // The default names the C++ argument itself; no message of parse_spec speaks of a command-line flag.
  for (const auto& [spec, n] : std::vector<std::pair<std::string, std::optional<int>>>{
           {"bit-reverse", std::nullopt}, {"bits:1,0", 4}, {"gray", 70}, {"gray*(axes:2x2:1,0)", 3}}) {
    const std::string m = message(spec, n, std::nullopt);
    EXPECT_EQ(m.find("--n"), std::string::npos) << m;
    EXPECT_EQ(message(spec, n, "n"), m);
  }
}

TEST(Spec, LoneNumberErrors) {
  EXPECT_THROW(parse_spec_number(""), SpecError);
  EXPECT_THROW(parse_spec_number("12 3"), SpecError);
  EXPECT_THROW(parse_spec_number("0b2"), SpecError);
  EXPECT_THROW(parse_spec_number("-1"), SpecError);
}

TEST(Spec, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(10000, '(') + "gray" + std::string(10000, ')');
  EXPECT_THROW(parse_spec(deep, 4), SpecError);
  const std::string ok = std::string(50, '(') + "gray" + std::string(50, ')');
  EXPECT_EQ(parse_spec(ok, 4), gray(4));
}

TEST(Spec, RandomProductsMatchComposition) {
  // Property: for random seeds, the parsed product equals the composition of the constructors.
  for (std::uint64_t s = 0; s < 50; ++s) {
    const int n = 1 + static_cast<int>(s % 20);
    const std::string text = "random-bmmc:" + std::to_string(s) + "*inv(random-bpc:" + std::to_string(s + 1) +
                             ")^" + std::to_string(s & low_mask(n));
    const Bmmc expected =
        compose(random_bmmc(n, s), Bmmc(random_bpc(n, s + 1).inverse().matrix(),
                                        random_bpc(n, s + 1).inverse().complement() ^ (s & low_mask(n))));
    EXPECT_EQ(parse_spec(text, n), expected) << text;
  }
}

}  // namespace
}  // namespace bmmc
