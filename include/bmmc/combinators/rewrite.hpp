// Rewrite rules of the combinator algebra (paper §3 and §7.2), each an equation between programs that the
// tests check against the interpreter on random inputs:
//   fusion        bmmc(B) ; bmmc(A)            = bmmc(A ∘ B)          ((A,c)∘(B,d) = (AB, Ad ⊕ c))
//   cancellation  bmmc(A) ; bmmc(A⁻¹)          = id                   (fusion, then the identity dropped)
//   parm → two    parm m f                     = bmmc(P) ; two f ; bmmc(P⁻¹),   P = parm_matrix(n, m)
//   parm of bmmc  parm m (bmmc(A, c))          = bmmc(A', c') on n bits, (A', c') = P⁻¹ ∘ (A,c ⊕ id₁) ∘ P
//   parm of id    parm m id                    = id
// ("f ; g" is f first.) The P of parm → two is the paper's matrix: it sends the sub-array of i·m = 0 to the
// first half and i·m = 1 to the second, each in index order; two f is then f on the low n-1 index bits.
#pragma once

#include "bmmc/combinators/program.hpp"

namespace bmmc {

/// `b` (on k bits) acting on the low k bits of an n-bit index, the top n-k bits unchanged: what two^(n-k) b
/// does. Throws std::invalid_argument when k > n.
Bmmc embed_low(const Bmmc& b, int n);

/// The fused permutation of "first, then second": compose(second, first).
Bmmc fuse(const Bmmc& first, const Bmmc& second);

/// (A', c') with parm mask (bmmc(A, c)) = bmmc(A', c'); mask is on b.n() + 1 bits.
Bmmc parm_of_bmmc(BitVec mask, const Bmmc& b);

/// parm mask f = bmmc(P) ; two f ; bmmc(P⁻¹) (one level, f unchanged).
Program expand_parm(BitVec mask, const Program& f);

/// Every parm, at every depth, replaced by its bmmc ; two ; bmmc expansion.
Program expand_all(const Program& p);

/// Bottom-up simplification: bodies first; parm of id → id; parm of a single bmmc → one bmmc; adjacent bmmcs
/// fused; identity bmmcs dropped. The result is equivalent to `p` (tests check it) and never larger.
Program simplify(const Program& p);

}  // namespace bmmc
