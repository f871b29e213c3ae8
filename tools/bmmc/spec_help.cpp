#include "commands.hpp"

namespace bmmc::cli {
const char* const kSpecHelp = R"(SPEC language (one parser for CLI, tests and Python; see docs/DESIGN.md §2):
  spec  := term ('*' term)*        product, rightmost applied first; all terms of one n
  term  := atom ('^' number)?      XOR the output with a complement vector
  atom  := name (':' args)? | 'inv(' spec ')' | '(' spec ')'
  names: identity, bit-reverse, reverse, rotate:K, transpose:R, gray, gray-inverse, parm:MASK,
         bits:P0,P1,...  (input bit i -> output bit Pi; defines n)
         axes:D0xD1x...:Q0,Q1,...  (numpy transpose of a C-order shape of powers of two; defines n)
         matrix:ROW0,ROW1,...  (rows as numbers, bit j of row i = a_ij; defines n)
         swap:I0,J0,I1,J1,...  (swap index bits I0 <-> J0, ...: disjoint pairs)
         random-bpc:SEED, random-bmmc:SEED
  numbers: decimal, 0x..., 0b... (in an axes shape decimal or 0b...: 'x' separates)
  n comes from --n where the spec does not define it.
Examples: bit-reverse --n 10;  transpose:15 --n 30;  axes:4x8x2:2,0,1;  inv(gray)*rotate:3^0b101 --n 8
Shape specs (with --shape D0xD1x..., an array of any extents in C order; docs/DESIGN.md §11):
  spec  := term ('*' term)*        rightmost applied first; each term's axes count on the shape it receives
  term  := axes:Q0,Q1,...          numpy.transpose (axes:D0xD1x...:Q0,Q1,... also states the shape)
         | flip | flip:J0,J1,...   numpy.flip of every / the listed axes (negative axes count from the end)
         | roll:S0,S1,...          numpy.roll, one shift per axis (negative shifts allowed)
         | fftshift | ifftshift | identity | inv(spec) | (spec)
  A map whose extents are powers of two and whose rolls are 0 or half an axis is a BMMC and runs as one
  (with elements of 1, 2, 4, 8 or 16 bytes); permute takes any element size with --shape.
Examples: --shape 1000x1003x257 'flip:0*axes:2,0,1';  --shape 6000x8000 'fftshift*axes:1,0')";
}  // namespace bmmc::cli
