"""Helpers of the fast-path tests (test_fast.py, test_fast_torch.py): the NumPy reference, the error a call
raises, comparisons of a fast call with the general path's (same_error: both raise it; same_outcome: the same
error or the same result), the general (uncached) paths, and a fixture that empties the fast path's cache
around each test."""

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


def same_error(fast, general):
    """The (type, message) that both calls raise. Fails when they differ, and when the general path raises
    nothing: two calls that both succeed do not have "the same error" (compare their results: same_outcome)."""
    want = error_of(general)
    assert want is not None, "expected the general path to raise, and it returned"
    got = error_of(fast)
    assert got == want
    return got


def outcome(fn):
    """("raised", type, message) or ("returned", dtype, shape, bytes of a copy of the result) of fn()."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001
        return "raised", type(e), str(e)
    if hasattr(r, "detach"):  # a torch tensor
        r = r.detach().cpu().numpy()
    a = np.array(r, copy=True)
    return "returned", a.dtype, a.shape, a.tobytes()


def same_outcome(fast, general, before=None):
    """Both calls raise the same error, or both return equal arrays (dtype, shape and every byte): an error
    where the general path returns, or a result where it raises, fails. Returns "raised" or "returned".
    before() runs ahead of each call (e.g. to poison an `out` both calls share, so that a call that leaves it
    alone cannot pass by what the other wrote)."""
    if before is not None:
        before()
    want = outcome(general)
    if before is not None:
        before()
    got = outcome(fast)
    assert got[0] == want[0], (got[:3], want[:3])
    assert got == want
    return got[0]


def general_transpose(x, axes=None, out=None, threads=0):
    return bmmc._transpose_general(x, axes, out, threads)


def general_permute(x, spec, out=None, threads=0):
    return bmmc._permute_general(x, spec, out, threads)
