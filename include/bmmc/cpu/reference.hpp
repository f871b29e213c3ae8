// The CPU reference permutation: the oracle every other backend's tests compare against.
//
// It does exactly what docs/DESIGN.md §1 says, out[A·x ⊕ c] = in[x] for every x in 0..2^n-1, single-threaded
// and without any cleverness beyond updating A·x incrementally, so that it is obviously right. Buffers are
// checked (check_buffers) before anything is written: on bad arguments it throws std::invalid_argument
// and leaves the output untouched.
#pragma once

#include "bmmc/core/bmmc.hpp"

namespace bmmc {

/// out[A·x ⊕ c] = in[x] for all 2^n indices x; elements of elem_bytes ∈ {1, 2, 4, 8, 16} bytes.
/// `in` and `out` are host buffers of 2^n · elem_bytes bytes each, disjoint and aligned to elem_bytes.
void permute_reference(const Bmmc& p, const void* in, void* out, int elem_bytes);

}  // namespace bmmc
