"""CPU tests of the bmmc Python package: the algebra against docs/DESIGN.md's worked examples, and permute /
transpose against a NumPy reference (fancy indexing: out[perm] = x) — run by scripts/test.sh in a clean
virtualenv after `pip install ./python`."""

import pickle

import numpy as np
import pytest

import bmmc


def reference(x, b):
    """out[A·i ⊕ c] = x[i] over the flat index, by NumPy fancy indexing."""
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    out[b.apply(np.arange(flat.size, dtype=np.uint64)).astype(np.int64)] = flat
    return out.reshape(x.shape)


# ---- the algebra -------------------------------------------------------------------------------------------

def test_worked_examples():
    assert bmmc.bit_reverse(4).apply(7) == 14
    assert bmmc.rotate(5, 1).apply(0b11001) == 0b11100
    assert bmmc.transpose_matrix(4, 2).apply(6) == 9
    assert bmmc.Bmmc.transpose(4, 2) == bmmc.transpose_matrix(4, 2)
    assert all(bmmc.reverse(4).apply(x) == 15 - x for x in range(16))
    assert bmmc.parm_matrix(3, 0b110).rows == [0b001, 0b100, 0b110]
    assert bmmc.gray(5).apply(0b10110) == 0b10110 ^ 0b01011


def test_spec_strings_and_named_constructors_agree():
    assert bmmc.Bmmc("bit-reverse", n=10) == bmmc.bit_reverse(10)
    assert bmmc.Bmmc("rotate:1*bit-reverse", n=4) == bmmc.rotate(4, 1) @ bmmc.bit_reverse(4)
    assert bmmc.Bmmc("random-bmmc:7", n=12) == bmmc.random_bmmc(12, 7)
    assert bmmc.Bmmc("random-bpc:3", n=9) == bmmc.random_bpc(9, 3)
    assert bmmc.Bmmc("axes:4x8x2:2,0,1") == bmmc.axes_permutation([4, 8, 2], [2, 0, 1])
    assert bmmc.Bmmc("bits:2,0,1") == bmmc.bit_permutation([2, 0, 1])
    assert bmmc.Bmmc("matrix:0b11,0b10") == bmmc.from_rows([0b11, 0b10])
    assert bmmc.Bmmc("gray^0b101", n=3).c == 0b101


def test_properties_matrix_and_from_matrix():
    b = bmmc.random_bmmc(9, 42)
    assert b.n == 9
    m = b.matrix
    assert m.dtype == np.uint8 and m.shape == (9, 9)
    for i, row in enumerate(b.rows):
        assert [int(m[i, j]) for j in range(9)] == [(row >> j) & 1 for j in range(9)]
    assert bmmc.Bmmc.from_matrix(m, c=b.c) == b
    assert bmmc.Bmmc.from_matrix(m.astype(bool), c=b.c) == b
    assert bmmc.Bmmc.from_matrix(m.astype(np.int64).tolist(), b.c) == b
    assert bmmc.Bmmc.from_matrix(np.eye(4, dtype=bool), c=0b1111) == bmmc.reverse(4)


def test_compose_inverse_apply():
    f, g = bmmc.random_bmmc(10, 1), bmmc.random_bmmc(10, 2)
    xs = np.arange(1024, dtype=np.uint64)
    assert np.array_equal((f @ g).apply(xs), f.apply(g.apply(xs)))  # f @ g applies g first
    assert f @ f.inverse() == bmmc.identity(10)
    assert f.inverse() @ f == bmmc.identity(10)
    assert int(f.inverse().apply(f.apply(123))) == 123
    assert f(5) == f.apply(5)
    assert sorted(f.apply(xs).tolist()) == list(range(1024))  # a permutation
    assert f.apply(np.arange(6).reshape(2, 3)).shape == (2, 3)
    assert f.apply(np.int32(3)) == f.apply(3)


def test_classify_eq_hash_repr_pickle():
    assert bmmc.bit_reverse(8).classify() == "BP"
    assert bmmc.reverse(8).classify() == "BPC"
    assert bmmc.gray(4).classify() == "tiled"  # every BMMC with n <= 5 is tiled
    assert bmmc.random_bmmc(20, 5).classify() in ("tiled", "general")
    b = bmmc.random_bmmc(11, 3)
    assert b == bmmc.random_bmmc(11, 3) and b != bmmc.random_bmmc(11, 4)
    assert hash(b) == hash(bmmc.random_bmmc(11, 3))
    assert len({b, bmmc.random_bmmc(11, 3), bmmc.identity(11)}) == 2
    assert eval(repr(b), {"bmmc": bmmc}) == b
    assert pickle.loads(pickle.dumps(b)) == b
    assert "c = 0x" in str(b)


def test_copies_of_immutable_maps_are_the_maps_themselves():
    # copy.copy / copy.deepcopy (torch.compile deep-copies what it traces) make no second native object.
    import copy

    b = bmmc.random_bmmc(11, 3)
    m = bmmc.DigitMap([3, 5], [1, 0])
    for x in (b, m):
        assert copy.copy(x) is x and copy.deepcopy(x) is x
        assert copy.deepcopy([x, x])[0] is x


def test_errors_are_value_and_type_errors_with_messages():
    with pytest.raises(bmmc.SpecError, match="column"):
        bmmc.Bmmc("rotate", n=3)
    with pytest.raises(ValueError, match="column"):  # SpecError is a ValueError
        bmmc.Bmmc("bit-reverse*", n=3)
    with pytest.raises(ValueError):
        bmmc.Bmmc("bit-reverse")  # n missing
    with pytest.raises(ValueError, match="singular|rank"):
        bmmc.from_rows([1, 1])
    with pytest.raises(ValueError, match="0 or 1"):
        bmmc.Bmmc.from_matrix(np.full((2, 2), 2))
    with pytest.raises(ValueError, match="out of range"):
        bmmc.bit_reverse(4).apply(16)
    with pytest.raises(ValueError, match="negative"):
        bmmc.bit_reverse(4).apply(-1)
    with pytest.raises(TypeError):
        bmmc.bit_reverse(4).apply(np.array([0.5]))
    with pytest.raises(ValueError, match="same n|n ="):
        bmmc.gray(3) @ bmmc.gray(4)


# ---- permute -----------------------------------------------------------------------------------------------

DTYPES = [np.uint8, np.int16, np.float32, np.int64, np.complex128]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 3, 5, 9, 14, 17])
def test_permute_random_bmmcs_all_element_sizes(dtype, n):
    rng = np.random.default_rng(n)
    x = rng.integers(1, 100, size=1 << n).astype(dtype)
    for seed in range(3):
        for b in (bmmc.random_bmmc(n, seed), bmmc.random_bpc(n, seed)):
            got = bmmc.permute(x, b)
            assert got.dtype == x.dtype and got.shape == x.shape
            assert np.array_equal(got, reference(x, b)), (n, seed, b)


@pytest.mark.parametrize("spec", ["bit-reverse", "reverse", "rotate:3", "transpose:4", "gray", "gray-inverse",
                                  "parm:0b101", "inv(gray)*rotate:2^0b1", "random-bmmc:9"])
def test_permute_spec_strings_take_n_from_the_size(spec):
    x = np.arange(1 << 10, dtype=np.int32).reshape(32, 32)
    got = bmmc.permute(x, spec)
    assert got.shape == (32, 32)
    assert np.array_equal(got, reference(x, bmmc.Bmmc(spec, n=10)))


def test_permute_into_out_returns_out():
    x = np.arange(256, dtype=np.float64)
    out = np.full(256, -1.0)
    r = bmmc.permute(x, "bit-reverse", out=out)
    assert r is out
    assert np.array_equal(out, reference(x, bmmc.bit_reverse(8)))


def test_permute_large_multithreaded():
    x = np.random.default_rng(0).integers(0, 2**31, size=1 << 20, dtype=np.int32)
    b = bmmc.random_bmmc(20, 11)
    assert np.array_equal(bmmc.permute(x, b, threads=2), reference(x, b))


def test_permute_accepts_read_only_input():
    x = np.arange(64, dtype=np.int32)
    x.setflags(write=False)
    assert np.array_equal(bmmc.permute(x, "reverse"), x[::-1])


def test_permute_errors():
    with pytest.raises(ValueError, match="2\\^n elements"):
        bmmc.permute(np.zeros(12), "gray")
    with pytest.raises(ValueError, match="C-contiguous"):
        bmmc.permute(np.zeros(32)[::2], "gray")
    with pytest.raises(ValueError, match="expected a BMMC on n = 3"):
        bmmc.permute(np.zeros(8), bmmc.gray(4))
    with pytest.raises(TypeError, match="out has dtype float32 but x has dtype float64"):
        bmmc.permute(np.zeros(8), "gray", out=np.zeros(8, np.float32))
    with pytest.raises(ValueError, match="same size"):
        bmmc.permute(np.zeros(8), "gray", out=np.zeros(16))
    ro = np.zeros(8)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        bmmc.permute(np.zeros(8), "gray", out=ro)
    with pytest.raises(TypeError):
        bmmc.permute(np.zeros(8), 3)
    with pytest.raises(bmmc.SpecError):
        bmmc.permute(np.zeros(8), "rotate:")


# ---- transpose ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,axes", [
    ((4, 8), (1, 0)), ((32, 64), (1, 0)), ((4, 8, 2), (2, 0, 1)), ((16, 2, 32), (1, 2, 0)),
    ((8, 1, 4), (2, 1, 0)), ((2,) * 10, tuple(np.random.default_rng(1).permutation(10))),
    ((2, 4, 8, 16), (3, 1, 0, 2)), ((64,), (0,)), ((), ()),
])
def test_transpose_matches_numpy(shape, axes):
    x = np.random.default_rng(len(shape)).integers(0, 1000, size=shape).astype(np.int32)
    got = bmmc.transpose(x, axes)
    want = np.transpose(x, axes).copy()
    assert got.shape == want.shape
    assert np.array_equal(got, want)


def test_transpose_default_and_negative_axes():
    x = np.arange(2 * 4 * 8, dtype=np.int16).reshape(2, 4, 8)
    assert np.array_equal(bmmc.transpose(x), np.transpose(x).copy())
    assert np.array_equal(bmmc.transpose(x, (-1, 0, -2)), np.transpose(x, (2, 0, 1)).copy())
    out = np.empty((8, 2, 4), np.int16)
    assert bmmc.transpose(x, (2, 0, 1), out=out) is out


def test_transpose_errors():
    with pytest.raises(ValueError, match="not a permutation"):
        bmmc.transpose(np.zeros((3, 4)), (1, 1))
    with pytest.raises(ValueError, match="permutation"):
        bmmc.transpose(np.zeros((2, 4)), (0, 0))
    with pytest.raises(ValueError, match="one per dimension"):
        bmmc.transpose(np.zeros((2, 4)), (0,))


def test_cuda_flags_are_booleans():
    assert isinstance(bmmc.has_cuda(), bool)
    assert isinstance(bmmc.gpu_available(), bool)


def run_python_example(doc):
    """Run the first python block of DOC's "## Python" section verbatim (skipped outside a repository checkout)."""
    import pathlib
    import re

    path = pathlib.Path(__file__).resolve().parents[2] / doc
    if not path.exists():
        pytest.skip(f"{doc} not found next to python/")
    section = path.read_text().split("\n## Python\n", 1)
    # A document without the section would leave its example unchecked: that fails, it is not skipped.
    assert len(section) == 2, f"{doc} has no '## Python' section (the example this test runs)"
    code = re.search(r"```python\n(.*?)```", section[1], re.S)
    assert code, f"the Python section of {doc} has no python example"
    exec(compile(code.group(1), doc, "exec"), {})


def test_readme_python_example_runs():
    """The README's "Python" example, run verbatim."""
    run_python_example("README.md")


def test_guide_python_example_runs():
    """The user's guide's (docs/GUIDE.md) longer "Python" example, run verbatim."""
    run_python_example("docs/GUIDE.md")


# ---- in place (docs/DESIGN.md §8) ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.complex64, np.complex128])
@pytest.mark.parametrize("spec", ["bit-reverse", "gray", "random-bmmc:3", "swap:0,9", "random-bpc:5"])
def test_permute_in_place_matches_out_of_place(dtype, spec):
    x = (np.arange(1 << 12) * 7 + 1).astype(dtype)
    want = bmmc.permute(x, spec)
    y = x.copy()
    bmmc.permute(y, spec, out=y)
    assert np.array_equal(y, want)


def test_swap_index_bits_like_custatevec():
    n = 10
    x = np.arange(1 << n, dtype=np.complex64)
    y = x.copy()
    assert bmmc.swap_index_bits(y, [(0, 9), (3, 4)]) is y
    assert np.array_equal(y, bmmc.permute(x, bmmc.swap_index_bits_matrix(n, [(0, 9), (3, 4)])))
    # With a mask: only indices whose bit 5 is 1 move.
    z = x.copy()
    bmmc.swap_index_bits(z, [(0, 9)], mask={5: 1})
    f = bmmc.swap_index_bits_matrix(n, [(0, 9)])
    want = x.copy()
    for i in range(1 << n):
        if (i >> 5) & 1:
            want[int(f.apply(i))] = x[i]
    assert np.array_equal(z, want)


def test_swap_index_bits_errors_leave_the_data_alone():
    x = np.arange(256, dtype=np.int32)
    before = x.copy()
    with pytest.raises(ValueError, match="reuses bit|disjoint|already"):
        bmmc.swap_index_bits(x, [(0, 1), (1, 2)])
    with pytest.raises(ValueError, match="mask bit 1 is moved"):
        bmmc.swap_index_bits(x, [(1, 2)], mask={1: 0})
    with pytest.raises(ValueError, match="outside"):
        bmmc.swap_index_bits(x, [(1, 2)], mask={9: 1})
    ro = x.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        bmmc.swap_index_bits(ro, [(1, 2)])
    with pytest.raises(ValueError, match=r"threads is -1; expected 0 \(all cores\) or a positive count"):
        bmmc.swap_index_bits(x, [(1, 2)], threads=-1)
    with pytest.raises(ValueError, match="threads is -1"):
        bmmc.permute(x, "bit-reverse", out=x, threads=-1)
    assert np.array_equal(x, before)


def test_factor_involutions_reconstructs():
    f = bmmc.random_bmmc(12, 7)
    factors, route = bmmc.factor_involutions(f)
    assert 1 <= len(factors) <= 4 and route
    g = bmmc.identity(12)
    for h in factors:
        assert h @ h == bmmc.identity(12)
        g = h @ g
    assert g == f
