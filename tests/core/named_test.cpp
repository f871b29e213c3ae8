// The paper's worked examples, verbatim, and the named maps' defining formulas.
#include <gtest/gtest.h>

#include "bmmc/core/named.hpp"

namespace bmmc {
namespace {

TEST(Named, BitReverseOfSevenIsFourteen) { EXPECT_EQ(bit_reverse(4).apply(7), 14u); }

TEST(Named, RotateShiftsTowardsTheLsb) { EXPECT_EQ(rotate(5, 1).apply(0b11001), 0b11100u); }

TEST(Named, TransposeFourByFourMatchesPaperSection3) {
  const Bmmc t = transpose(4, 2);
  EXPECT_EQ(t.apply(6), 9u);
  EXPECT_EQ(t.matrix().to_string(), "..1.\n...1\n1...\n.1..\n");
  EXPECT_TRUE(t.is_bp());
}

TEST(Named, ReverseOfSixteenElements) {
  const Bmmc r = reverse(4);
  for (BitVec x = 0; x < 16; ++x) EXPECT_EQ(r.apply(x), 15 - x);
  EXPECT_EQ(r.classify(), BmmcClass::BPC);
}

TEST(Named, ParmMatrixOfMask0011MatchesPaperSection3) {
  EXPECT_EQ(parm_matrix(4, 0b0011).matrix().to_string(), ".1..\n..1.\n...1\n11..\n");
}

TEST(Named, ParmMatrixOfMask110MatchesPaperSection72Table) {
  const Bmmc a = parm_matrix(3, 0b110);
  EXPECT_EQ(a.matrix().to_string(), "1..\n..1\n.11\n");
  // index x -> (sub-array, sub-index), the table of Figure "parm-matrix-example".
  const int sub_array[8] = {0, 0, 1, 1, 1, 1, 0, 0};
  const int sub_index[8] = {0, 1, 0, 1, 2, 3, 2, 3};
  for (BitVec x = 0; x < 8; ++x) {
    const BitVec y = a.apply(x);
    EXPECT_EQ(static_cast<int>(y >> 2), sub_array[x]) << "x = " << x;
    EXPECT_EQ(static_cast<int>(y & 3), sub_index[x]) << "x = " << x;
  }
}

TEST(Named, GrayAndItsInverseCancel) {
  for (int n = 1; n <= 64; ++n) {
    EXPECT_EQ(compose(gray(n), gray_inverse(n)), identity(n)) << "n = " << n;
    const BitVec x = 0b1011 & low_mask(n);
    EXPECT_EQ(gray(n).apply(x), x ^ (x >> 1));
  }
}

TEST(Named, AxesPermutationIsNumpyTranspose) {
  // shape (2, 4, 8), axes (2, 0, 1): out[k][i][j] = x[i][j][k]; out shape (8, 2, 4).
  const Bmmc p = axes_permutation({2, 4, 8}, {2, 0, 1});
  for (BitVec i = 0; i < 2; ++i)
    for (BitVec j = 0; j < 4; ++j)
      for (BitVec k = 0; k < 8; ++k) EXPECT_EQ(p.apply(i * 32 + j * 8 + k), k * 8 + i * 4 + j);
  EXPECT_EQ(axes_permutation({4, 4}, {1, 0}), transpose(4, 2));
}

}  // namespace
}  // namespace bmmc
