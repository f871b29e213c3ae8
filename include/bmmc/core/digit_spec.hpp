// The spec language for any-shape maps (DigitMap, docs/DESIGN.md §11): text such as "flip:0*axes:2,0,1" on an
// array of a given shape.
//
// The same shape of grammar as the BMMC spec language (bmmc/core/spec.hpp) — a product of terms, rightmost
// applied first — over a shape instead of a bit count. The shape flows right to left: the rightmost term acts
// on the array's shape, and each term's output shape is the next one's input shape.
//   spec  := term ('*' term)*
//   term  := 'axes:' (shape ':')? Q0,Q1,...   numpy.transpose (a shape given here must equal the current one)
//          | 'flip' (':' J0,J1,...)?          numpy.flip of the listed axes (all axes without a list)
//          | 'roll:' S0,S1,...                numpy.roll, one shift per axis (negative shifts allowed)
//          | 'fftshift' | 'ifftshift'         numpy.fft.fftshift / ifftshift over every axis
//          | 'identity'
//          | 'inv(' spec ')' | '(' spec ')'
//   shape := D0 ('x' D1)*                      extents ≥ 1 (decimal or 0b…: 'x' always separates, as in spec.hpp)
// Numbers elsewhere are decimal, 0x… or 0b…; roll shifts and flip axes may be negative (flip axes count from the
// end, as NumPy's do); axes: lists are 0..k−1.
// Errors are SpecError (bmmc/core/spec.hpp) naming what was wrong and the 1-based column, e.g.
// "axis 3 is out of range for a rank-3 shape 4x5x6 at column 8".
// Example: parse_digit_spec("flip:0*axes:1,0", {{2, 3}}) equals compose(DigitMap::flip({3, 2}, {0}),
// DigitMap::transpose({2, 3}, {1, 0})).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "bmmc/core/digit_map.hpp"
#include "bmmc/core/spec.hpp"

namespace bmmc {

/// Parses and evaluates a digit spec on an array of `shape`. When shape is not given, the rightmost term must
/// define it ("axes:D0xD1:…"). `shape_name` is how the caller's users give the shape, for messages ("shape",
/// "--shape", "x.shape"). Throws SpecError.
DigitMap parse_digit_spec(std::string_view text, std::optional<std::vector<Extent>> shape = std::nullopt,
                          std::string_view shape_name = "shape");

/// "1000x1003x257" (also "1000,1003,257") → {1000, 1003, 257}; "scalar" (shape_to_string's rank 0) → {}. Throws
/// SpecError for a malformed shape, an extent < 1, or an element count above kMaxDigitElements.
std::vector<Extent> parse_shape(std::string_view text);

}  // namespace bmmc
