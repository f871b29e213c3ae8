"""What a newcomer meets first on the CPU: which inputs permute, transpose and from_matrix take (lists, tuples,
scalars, float 0/1 matrices), the shape transpose's `out` must have, and error messages that speak the Python
API (the argument n, the array's size, both dtypes) rather than the command line's --n. Each test is checked
against the general path and, where a key can be cached, against the fast path too (every call twice)."""

import numpy as np
import pytest

import bmmc

from fast_support import general_permute, general_transpose


def message(f):
    """The exception f raises (type and message); the test fails when f returns."""
    with pytest.raises(Exception) as info:
        f()
    return info.type, str(info.value)


# ---- spec errors speak Python ------------------------------------------------------------------------------

@pytest.mark.parametrize("call, want", [
    (lambda: bmmc.Bmmc("bit-reverse"), "bit-reverse needs n: the spec does not define it and n is not given"),
    (lambda: bmmc.parse_spec("gray*rotate:1"), "gray needs n: the spec does not define it and n is not given"),
    (lambda: bmmc.Bmmc("bits:1,0", n=4), "'bits:1,0' at column 1 defines n = 2, but n is 4"),
    (lambda: bmmc.permute(np.arange(16), "bits:1,0"), "at column 1 defines n = 2, but n = log2(x.size) is 4"),
    (lambda: bmmc.permute(np.arange(16), "gray*bits:1,0"), "at column 6 defines n = 2, but n = log2(x.size) is 4"),
    (lambda: bmmc.Bmmc("gray", n=65), "n must be between 0 and 64 index bits, got 65"),
])
def test_spec_errors_name_the_python_argument_not_the_cli_flag(call, want):
    for _ in range(2):  # the second permute call may take the fast path; the message is the same
        kind, text = message(call)
        assert kind is bmmc.SpecError and issubclass(kind, ValueError)
        assert want in text, text
        assert "--n" not in text, text


@pytest.mark.parametrize("spec, n, column", [
    ("rotate", 3, 7), ("bit-reverse*", 3, 13), ("rotate:1*bits:1,0", 3, 10), ("bit-reverse", None, 1),
    ("gray^0x10", 4, 6), ("gray", 65, 0),
])
def test_spec_error_carries_the_column(spec, n, column):
    with pytest.raises(bmmc.SpecError) as info:
        bmmc.Bmmc(spec, n=n)
    assert info.value.column == column
    assert column == 0 or f"column {column}" in str(info.value)
    with pytest.raises(bmmc.SpecError) as info:
        bmmc.parse_spec(spec, n)
    assert info.value.column == column


def test_spec_error_raised_by_python_code_has_a_column_too():
    assert bmmc.SpecError("made by hand").column == 0
    assert "column" in bmmc.SpecError.__doc__


# ---- array-likes -------------------------------------------------------------------------------------------

def test_permute_and_transpose_read_lists_tuples_and_scalars_as_numpy_does():
    for _ in range(2):
        for xs in ([0, 1, 2, 3, 4, 5, 6, 7], tuple(range(8)), [0.5, 1.5, 2.5, 3.5]):
            got = bmmc.permute(xs, "bit-reverse")
            want = bmmc.permute(np.asarray(xs), "bit-reverse")
            assert type(got) is np.ndarray and got.dtype == np.asarray(xs).dtype and np.array_equal(got, want)
        assert np.array_equal(bmmc.permute([[1, 2], [3, 4]], "bit-reverse"), [[1, 3], [2, 4]])
        s = bmmc.permute(5, "identity")
        assert type(s) is np.ndarray and s.shape == () and s == 5
        t = bmmc.transpose([[1, 2, 3, 4], [5, 6, 7, 8]], (1, 0))
        assert type(t) is np.ndarray and np.array_equal(t, np.transpose([[1, 2, 3, 4], [5, 6, 7, 8]]))
        assert np.array_equal(bmmc.transpose(((1, 2), (3, 4))), [[1, 3], [2, 4]])
        assert bmmc.transpose(2.5, ()).shape == ()
        out = np.empty(4, np.int64)
        assert bmmc.permute([1, 2, 3, 4], "reverse", out=out) is out and list(out) == [4, 3, 2, 1]


@pytest.mark.parametrize("bad", [[[1], [1, 2]], {"a": 1}, ["a", "b"], None, object()])
def test_what_numpy_cannot_read_as_numbers_is_a_type_error_saying_what_is_accepted(bad):
    for call in (lambda: bmmc.permute(bad, "identity"), lambda: bmmc.transpose(bad),
                 lambda: general_permute(bad, "identity"), lambda: general_transpose(bad)):
        kind, text = message(call)
        assert kind is TypeError, (kind, text)
        assert "expected an array" in text and "list, tuple or scalar" in text, text


def test_swap_index_bits_refuses_a_list_it_cannot_permute_in_place():
    xs = [0, 1, 2, 3]
    kind, text = message(lambda: bmmc.swap_index_bits(xs, [(0, 1)]))
    assert kind is TypeError and "not an array" in text and "in place" in text, text
    assert xs == [0, 1, 2, 3]


# ---- transpose's out ---------------------------------------------------------------------------------------

def test_transpose_out_must_have_the_result_shape():
    x = np.arange(32, dtype=np.float64).reshape(4, 8)
    for _ in range(2):  # uncached, then with the key hot
        for out in (np.zeros((4, 8)), np.zeros(32), np.zeros((2, 16)), np.zeros((8, 4, 1))):
            before = out.copy()
            for call in (lambda: bmmc.transpose(x, (1, 0), out=out), lambda: general_transpose(x, (1, 0), out)):
                kind, text = message(call)
                assert kind is ValueError, text
                assert f"out has shape {out.shape}; expected the result's shape (8, 4)" in text, text
            assert np.array_equal(out, before)  # nothing written
        out = np.zeros((8, 4))
        assert bmmc.transpose(x, (1, 0), out=out) is out and np.array_equal(out, x.T)
    # In place keeps x's shape, so only axes that keep the shape may run in place.
    y = np.arange(32.0).reshape(4, 8)
    kind, text = message(lambda: bmmc.transpose(y, (1, 0), out=y))
    assert kind is ValueError and "expected the result's shape (8, 4)" in text
    assert np.array_equal(y, np.arange(32.0).reshape(4, 8))
    sq = np.arange(16.0).reshape(4, 4)
    assert bmmc.transpose(sq, (1, 0), out=sq) is sq and np.array_equal(sq, np.arange(16.0).reshape(4, 4).T)


# ---- from_matrix and dtypes --------------------------------------------------------------------------------

def test_from_matrix_takes_integral_floats_and_refuses_fractions():
    want = bmmc.Bmmc.from_matrix(np.eye(4, dtype=bool)[::-1], c=1)
    for m in (np.eye(4)[::-1], np.eye(4, dtype=np.float32)[::-1], np.eye(4)[::-1].tolist()):
        assert bmmc.Bmmc.from_matrix(m, c=1) == want
    half = np.eye(3)
    half[1, 2] = 0.5
    kind, text = message(lambda: bmmc.Bmmc.from_matrix(half))
    assert kind is ValueError and "entries must be 0 or 1, got 0.5 at [1, 2]" in text, text
    nan = np.eye(2)
    nan[0, 0] = np.nan
    assert message(lambda: bmmc.Bmmc.from_matrix(nan))[0] is ValueError
    kind, text = message(lambda: bmmc.Bmmc.from_matrix(np.full((2, 2), 2)))
    assert kind is ValueError and "got 2 at [0, 0]" in text, text
    kind, text = message(lambda: bmmc.Bmmc.from_matrix(np.eye(2, dtype=complex)))
    assert kind is TypeError and "bool, integer or float" in text and "complex128" in text, text


@pytest.mark.parametrize("x_dtype, out_dtype", [(np.float64, np.float32), (np.int32, np.float32),
                                                (np.uint8, np.bool_), (np.complex64, np.int64)])
def test_out_of_another_dtype_names_both_dtypes(x_dtype, out_dtype):
    x, out = np.zeros(8, x_dtype), np.zeros(8, out_dtype)
    xn, on = np.dtype(x_dtype).name, np.dtype(out_dtype).name
    for _ in range(2):
        for call in (lambda: bmmc.permute(x, "gray", out=out), lambda: general_permute(x, "gray", out)):
            kind, text = message(call)
            assert kind is TypeError, text
            assert f"out has dtype {on} but x has dtype {xn}" in text, text
