// The reference semantics of combinator programs: a direct, unoptimised CPU interpreter.
//
// Every step runs by its definition (program.hpp): bmmc moves in[x] to out[A·x ⊕ c]; parm m f splits the
// array by the dot product i·m into two sub-arrays in index order (the sub-index of i is i with bit lsb(m)
// removed — the paper's §7.2 observation, which the tests check against the plain "k-th element of the
// sub-array" definition), runs f on each and stitches back the same way; a leaf runs on every chunk. Nothing
// here knows about rewriting or lowering, which is why every rewrite and every executor is tested against it.
// Cost is O(2^n · depth) with a copy per parm level: meant for n ≲ 16.
#pragma once

#include <span>

#include "bmmc/combinators/dtype.hpp"
#include "bmmc/combinators/program.hpp"

namespace bmmc {

/// Runs `p` on `data` in place; data.size() must be 2^p.n() (else std::invalid_argument).
/// Instantiated for every DType's C++ type.
template <class T>
void interpret(const Program& p, std::span<T> data);

/// Type-erased form: `data` holds 2^p.n() elements of `t`.
void interpret(const Program& p, void* data, DType t);

}  // namespace bmmc
