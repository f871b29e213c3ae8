"""Helpers of the fast-path tests (test_fast.py, test_fast_torch.py): the NumPy reference, the error a call
raises, the general (uncached) paths, and a fixture that empties the fast path's cache around each test."""

import numpy as np
import pytest

import bmmc
from bmmc import _fast


def reference(x, b):
    """out[A·i ⊕ c] = x[i] by index assignment."""
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    out[b.apply(np.arange(flat.size, dtype=np.uint64)).astype(np.int64)] = flat
    return out.reshape(x.shape)


@pytest.fixture(autouse=True)
def fresh_cache():
    """Autouse in every module that imports it: each test starts and ends with an empty cache."""
    _fast.clear()
    yield
    _fast.clear()


def error_of(fn):
    """(type, message) of the exception fn() raises, or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


def general_transpose(x, axes=None, out=None, threads=0):
    return bmmc._transpose_general(x, axes, out, threads)


def general_permute(x, spec, out=None, threads=0):
    return bmmc._permute_general(x, spec, out, threads)
