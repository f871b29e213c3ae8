// The hit path of bmmc.permute and bmmc.transpose for NumPy arrays, in C++ (bound as bmmc._bmmc._np_permute
// and _np_transpose).
//
// Why. A cached bmmc.permute call on a small NumPy array spent ~0.9 µs in Python (building the cache key,
// hashing it with the dtype, two buffer exports, np.empty) against ~0.05 µs of permutation: three times what
// the issue allows over x.copy() (BENCHMARKS.md "CPU small arrays from Python"). Here one native call does
// it, through NumPy's C API (numpy/arrayobject.h, imported when bmmc._fast meets its first ndarray): x's
// shape, dtype object, flags and data are read from the array; the key (operation, spec or axes, dtype
// object, shape, threads) is looked up in a native table; `out` is allocated like numpy.empty(out_shape,
// x.dtype) (PyArray_NewFromDescr) or checked (exact ndarray, x's dtype object, the output's shape, writable,
// C-contiguous); the entry's Prepared runs. A call large enough to release the GIL also holds buffer exports
// of both arrays, as the Python path does. Whatever is not a plain hit — a first call, `out is x`, an `out`
// that does not match, a thread count that is not an int, an unhashable spec, axes that are not None or a
// tuple of ints — is handed to the Python fast path (set with _np_set_fallbacks: python/bmmc/_fast.py's
// numpy_permute and numpy_transpose), which looks the call up here with its argument made plain
// (_np_lookup: a list of axes as a tuple of ints), and on a miss validates the call and fills this table
// through _np_remember, or leaves the call to the general path that raises the error. So errors, results and
// the Permuter are exactly those of the Python path. This table is the only store of NumPy entries.
//
// Only exact str and Bmmc specs, and None or exact tuples of exact ints as axes, are remembered (a
// subclass's Python __eq__ must not run inside the table). The table holds at most 512 entries (cleared
// when full, and by bmmc._fast.clear()); a cleared entry is made again on its next call, its Permuter taken
// from the library's PermuterCache. It is never destroyed (its Python objects must not be released after the
// interpreter is gone): an atexit handler empties and closes it, and calls after that take the general path.
#pragma once

#include <nanobind/nanobind.h>

namespace bmmc_python {

/// Adds _np_permute, _np_transpose, _np_lookup, _np_remember, _np_set_fallbacks, _np_clear, _np_size and
/// _np_capacity to the module.
void bind_numpy_fast(nanobind::module_& m);

}  // namespace bmmc_python
