// The permutation spec language (docs/DESIGN.md §2): text such as "inv(gray)*rotate:3^0b101" turned into a Bmmc.
//
// One parser serves the CLI, the tests and the Python bindings, so every user-facing way of naming a BMMC
// behaves the same. Grammar:
//   spec  := term ('*' term)*          product, rightmost applied first (matrix order), all of one n
//   term  := atom ('^' number)?        XOR the output with a complement vector
//   atom  := name (':' args)? | 'inv(' spec ')' | '(' spec ')'
//   names: identity, bit-reverse, reverse, rotate:K, transpose:R, gray, gray-inverse, parm:MASK,
//          bits:P0,P1,...  axes:D0xD1x...:Q0,Q1,...  matrix:ROW0,ROW1,...  random-bpc:SEED, random-bmmc:SEED,
//          swap:I0,J0,I1,J1,... (swap index bits I0 ↔ J0, I1 ↔ J1, ...: disjoint pairs, cuStateVec's bit swaps)
//   numbers: decimal, 0x…, 0b…   (whitespace is allowed between tokens)
// bits:, axes: and matrix: define n; every other name takes n from the `n` argument (the CLI's --n). All
// terms must agree on n. Errors are SpecError exceptions naming what was wrong and the 1-based column,
// e.g. "expected ':' after 'rotate' at column 7". Example: parse_spec("rotate:1*bit-reverse", 4) equals
// compose(rotate(4, 1), bit_reverse(4)) — bit-reverse is applied first.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "bmmc/core/bmmc.hpp"

namespace bmmc {

/// A spec that cannot be parsed or evaluated. what() is the full message (it already names the column).
class SpecError : public std::invalid_argument {
 public:
  SpecError(const std::string& message, int column) : std::invalid_argument(message), column_(column) {}
  /// 1-based column of the offending character in the spec text; 0 when the fault is not in the text
  /// (an `n` argument out of range).
  int column() const noexcept { return column_; }

 private:
  int column_;
};

/// Parses and evaluates a spec. `n` supplies the number of index bits where the spec does not define it;
/// when both are present they must agree. Throws SpecError. `n_name` is how the caller's own users give n,
/// for the messages that speak of it ("n is not given", "but n is 4"): "n" for this function and the C API,
/// "--n" for a command line, "n = log2(x.size)" where n comes from an array's size.
Bmmc parse_spec(std::string_view text, std::optional<int> n = std::nullopt, std::string_view n_name = "n");

/// One number of the spec language (decimal, 0x…, 0b…; surrounding whitespace ignored), for tools that
/// take indices or masks on their command line. Throws SpecError (column relative to `text`).
std::uint64_t parse_spec_number(std::string_view text);

}  // namespace bmmc
