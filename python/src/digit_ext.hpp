// The Python binding of the any-shape index class, bmmc.DigitMap (bmmc/core/digit_map.hpp) and its spec
// language (bmmc/core/digit_spec.hpp): constructors, the map's parts, apply / apply_linear, inverse, composition
// (`@`), the canonical form, as_bmmc, equality, hashing and pickling. Arrays are permuted by such maps through
// the Python layer (python/bmmc/_digit.py), which prepares a Permuter per map (prepared.hpp).
#pragma once

#include <nanobind/nanobind.h>

namespace bmmc_python {

/// Adds the class DigitMap to the module (after Bmmc and SpecError, which it uses).
void bind_digit_map(nanobind::module_& m);

}  // namespace bmmc_python
