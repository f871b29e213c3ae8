// Named BMMCs: the paper's worked examples and the maps users ask for by name (docs/DESIGN.md §1).
//
// Every constructor takes n (the number of index bits, 0..64) first and returns a Bmmc; bad arguments
// throw std::invalid_argument saying what was expected. Worked examples (tested verbatim):
//   bit_reverse(4).apply(7) == 14;  rotate(5, 1).apply(0b11001) == 0b11100;
//   transpose(4, 2).apply(6) == 9;  reverse(4).apply(x) == 15 - x;
//   parm_matrix(3, 0b110) has rows 100 / 001 / 011 (paper §7.2).
#pragma once

#include <cstdint>
#include <vector>

#include "bmmc/core/bmmc.hpp"

namespace bmmc {

Bmmc identity(int n);
/// y_i = x_{n-1-i}.
Bmmc bit_reverse(int n);
/// Reverses the array: identity matrix with c = all ones (x ↦ 2^n - 1 - x).
Bmmc reverse(int n);
/// Cyclic shift of the index bits towards the LSB by k, the LSB wrapping to the MSB: y_i = x_{(i+k) mod n}.
Bmmc rotate(int n, int k);
/// Transpose of a row-major 2^r × 2^(n-r) matrix into a row-major 2^(n-r) × 2^r matrix.
Bmmc transpose(int n, int r);
/// Gray code y = x ⊕ (x >> 1), and its inverse (y_i = XOR of x_j for j ≥ i).
Bmmc gray(int n);
Bmmc gray_inverse(int n);
/// The paper's §7.2 matrix for parm with this mask: y_i = x_i below lsb(mask), x_{i+1} from lsb(mask) up to
/// n-2, and y_{n-1} = <x, mask>. Sends the mask's two sub-arrays to the two halves, keeping order.
Bmmc parm_matrix(int n, BitVec mask);
/// Input bit i goes to output bit p[i] (y_{p[i]} = x_i); n = p.size().
Bmmc bit_permutation(const std::vector<int>& p);
/// numpy `transpose` of a C-order array with the given shape (powers of two) by the axis permutation
/// `axes`: out = x.transpose(axes). n = sum of log2(shape).
Bmmc axes_permutation(const std::vector<std::uint64_t>& shape, const std::vector<int>& axes);
/// Matrix from rows as integers (bit j of rows[i] = a_ij); n = rows.size().
Bmmc from_rows(const std::vector<BitVec>& rows, BitVec c = 0);
/// A random BPC (uniform bit permutation, uniform complement), reproducible from the seed.
Bmmc random_bpc(int n, std::uint64_t seed);
/// A random BMMC, uniform over invertible matrices and complements, reproducible from the seed.
Bmmc random_bmmc(int n, std::uint64_t seed);
/// A reproducible random involution (f∘f = id): A = Q·J·Q⁻¹ with Q random and J made of a random number of
/// 2×2 blocks [[1,1],[0,1]], and c = w ⊕ A·w (which A fixes) for a random w. The in-place tests' workload.
Bmmc random_involution(int n, std::uint64_t seed);

}  // namespace bmmc
