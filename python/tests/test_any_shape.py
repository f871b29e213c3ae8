"""Any shape: bmmc.transpose with flips and rolls on arrays of any extents, rank and dtype; bmmc.contiguous of
permuted / flipped views; bmmc.DigitMap; every bad input refused before anything is written.

The reference is the definition: numpy.roll(numpy.flip(numpy.transpose(x, axes), flip), roll, axis=range(k))
made contiguous (and torch's own permute / flip / roll for tensors). Shapes are random over seeds: ranks 1 to
30, small and prime extents, extent-1 and extent-2/3 axes. CUDA tests run where torch sees a GPU and say so
loudly when skipped.
"""

import pickle

import numpy as np
import pytest

import bmmc

PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 97, 101, 251, 257]


def reference(x, axes=None, flip=(), roll=()):
    """The definition, in NumPy: roll(flip(transpose(x, axes), flip), roll, axis=range(k)), C-contiguous."""
    y = np.transpose(x, axes)
    if flip not in ((), None):
        y = np.flip(y, tuple(flip) if hasattr(flip, "__iter__") else flip)
    if roll not in ((), None) and len(roll):
        y = np.roll(y, tuple(roll), axis=tuple(range(y.ndim)))
    return np.array(y, order="C", copy=True)  # (numpy.ascontiguousarray makes a 0-d array 1-d)


def random_shape(rng, rank, max_size=3000):
    """A shape of `rank` axes of at most max_size elements: extents 1, 2, 3, small primes and odd sizes."""
    shape = []
    size = 1
    for _ in range(rank):
        choices = [1, 2, 3, 5, 7, 11, 13, 31, 97, 6, 10, 12]
        d = int(rng.choice([c for c in choices if size * c <= max_size] or [1]))
        shape.append(d)
        size *= d
    rng.shuffle(shape)
    return tuple(shape)


def random_call(rng, rank):
    shape = random_shape(rng, rank)
    axes = tuple(int(a) for a in rng.permutation(rank))
    flip = tuple(int(j) - (rank if rng.random() < 0.3 else 0) for j in range(rank) if rng.random() < 0.4)
    roll = tuple(int(s) for s in rng.integers(-40, 40, size=rank)) if rng.random() < 0.6 else ()
    return shape, axes, flip, roll


def values(shape, dtype, rng):
    """Distinct-ish values of any dtype (bytes for the ones without arithmetic)."""
    dt = np.dtype(dtype)
    size = int(np.prod(shape))
    raw = rng.integers(0, 256, size=size * dt.itemsize, dtype=np.uint8)
    if dt.kind == "b":
        return (raw[: size] & 1).astype(bool).reshape(shape)
    if dt.kind in "fc":  # no NaNs: equality must hold element by element
        return rng.integers(-1000, 1000, size=size).astype(dt).reshape(shape)
    return raw.view(dt).reshape(shape)


def same(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()


# ---- transpose against the definition ------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(40))
def test_random_shapes_flips_and_rolls_match_numpy(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 31))
    shape, axes, flip, roll = random_call(rng, rank)
    x = values(shape, np.int32, rng)
    same(bmmc.transpose(x, axes, flip=flip, roll=roll), reference(x, axes, flip, roll))
    out = np.empty(reference(x, axes).shape, np.int32)
    assert bmmc.transpose(x, axes, out, flip=flip, roll=roll, threads=2) is out
    same(out, reference(x, axes, flip, roll))


DTYPES = [np.bool_, np.int8, np.uint8, np.float16, np.int16, np.float32, np.float64, np.complex64,
          np.complex128, np.longdouble, "S3", "V5", "S12", np.dtype([("a", "<i2"), ("b", "u1")]), ">i4",
          "datetime64[s]"]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_and_element_size(dtype):
    rng = np.random.default_rng(7)
    for _ in range(4):
        shape, axes, flip, roll = random_call(rng, int(rng.integers(1, 7)))
        x = values(shape, dtype, rng)
        same(bmmc.transpose(x, axes, flip=flip, roll=roll), reference(x, axes, flip, roll))


@pytest.mark.parametrize("shape,axes,flip,roll", [
    ((64, 27, 40, 3), (0, 3, 1, 2), (), ()),          # an image batch, channels first
    ((97, 101, 13), (2, 0, 1), (1,), ()),              # prime extents with a flip
    ((3,) * 12, tuple(range(11, -1, -1)), (), ()),    # a digit reversal of extent-3 axes
    ((6, 8), (1, 0), (), (4, 3)),                      # fftshift of the transpose
    ((5, 7), (0, 1), (0, 1), (-1, 9)),                 # negative and large shifts
    ((1, 1, 7, 1), (3, 2, 1, 0), (-2,), (0, 0, 0, 0)), # extent-1 axes
    ((11,), (0,), (0,), (3,)),
    ((), (), (), ()),                                  # a scalar
])
def test_worked_examples(shape, axes, flip, roll):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    same(bmmc.transpose(x, axes, flip=flip, roll=roll), reference(x, axes, flip, roll))


def test_flip_takes_one_axis_and_negative_axes():
    x = np.arange(30, dtype=np.int16).reshape(5, 6)
    same(bmmc.transpose(x, flip=-1), reference(x, None, (-1,)))
    same(bmmc.transpose(x, (1, 0), flip=(0, -1)), np.ascontiguousarray(x.T[::-1, ::-1]))


def test_fftshift_is_a_roll_by_half():
    x = np.arange(6 * 9, dtype=np.complex64).reshape(6, 9)
    same(bmmc.transpose(x, (0, 1), roll=(3, 4)), np.fft.fftshift(x))


def test_rank_above_25_numpy_and_torch_cpu():
    shape = (2,) * 10 + (3,) + (1,) * 8 + (2,) * 11  # 30 axes
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    axes = tuple(np.random.default_rng(3).permutation(30))
    same(bmmc.transpose(x, axes, flip=(0, 10, 29), roll=(1,) * 30), reference(x, axes, (0, 10, 29), (1,) * 30))
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(x)
    got = bmmc.transpose(t, axes, flip=(0, 10, 29))
    assert isinstance(got, torch.Tensor) and got.dim() == 30
    same(got.numpy(), reference(x, axes, (0, 10, 29)))


def test_zero_size_arrays_return_empty_results_without_the_library(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the library was called for an array of zero elements")

    monkeypatch.setattr(bmmc._digit, "prepared", refuse)
    x = np.zeros((0, 3, 5), np.float32)
    got = bmmc.transpose(x, (2, 0, 1), flip=(1,), roll=(1, 0, 2))
    assert got.shape == (5, 0, 3) and got.dtype == np.float32
    assert bmmc.contiguous(x.transpose(1, 0, 2)).shape == (3, 0, 5)
    with pytest.raises(ValueError, match="out has shape"):  # still checked
        bmmc.transpose(x, (2, 0, 1), np.zeros((5, 3, 0), np.float32))


# ---- in place ---------------------------------------------------------------------------------------------

def test_in_place_for_involutions():
    x = np.arange(35, dtype=np.float64).reshape(5, 7)
    want = reference(x, (0, 1), (0, 1))
    assert bmmc.transpose(x, (0, 1), x, flip=(0, 1)) is x
    same(x, want)
    sq = np.arange(49, dtype=np.int8).reshape(7, 7)
    want = np.ascontiguousarray(sq.T)
    bmmc.transpose(sq, (1, 0), sq)
    same(sq, want)
    r = np.arange(10, dtype=np.uint16)
    bmmc.transpose(r, roll=(5,), out=r)  # a roll by half the extent is its own inverse
    same(r, np.roll(np.arange(10, dtype=np.uint16), 5))


def test_in_place_refused_where_the_map_is_no_involution():
    x = np.arange(35, dtype=np.float64).reshape(5, 7)
    before = x.copy()
    with pytest.raises(ValueError, match="out is x: in place needs .* own inverse"):
        bmmc.transpose(x, (0, 1), x, roll=(1, 0))
    with pytest.raises(ValueError, match="out has shape"):
        bmmc.transpose(x, (1, 0), x)
    same(x, before)


# ---- contiguous -----------------------------------------------------------------------------------------------

def test_contiguous_of_permuted_and_flipped_views():
    rng = np.random.default_rng(11)
    base = values((5, 6, 7), np.float32, rng)
    views = [base.T, base.transpose(2, 0, 1), base[::-1], base[:, ::-1, ::-1].transpose(1, 2, 0),
             np.asfortranarray(base), base[::-1].T[:, ::-1], base[2:3].transpose(2, 1, 0), base[1:4, ::-1],
             np.transpose(values((3,) * 9, np.int8, rng), (8, 0, 7, 1, 6, 2, 5, 3, 4))[::-1]]
    for v in views:
        same(bmmc.contiguous(v), np.ascontiguousarray(v))
        out = np.empty(v.shape, v.dtype)
        assert bmmc.contiguous(v, out) is out
        same(out, np.ascontiguousarray(v))


def test_transpose_of_a_view_composes_with_its_strides():
    x = np.arange(4 * 5 * 6, dtype=np.int32).reshape(4, 5, 6)[::-1, :, ::-1].transpose(2, 0, 1)
    same(bmmc.transpose(x, (1, 2, 0), flip=(0,), roll=(1, 2, 3)), reference(x, (1, 2, 0), (0,), (1, 2, 3)))


@pytest.mark.parametrize("make,stride", [
    (lambda: np.zeros((6, 8), np.int32)[:, ::2], "axis 1 has stride 8"),
    (lambda: np.zeros((6, 8), np.int32)[:, :4], "axis 0 has stride 32"),
    (lambda: np.broadcast_to(np.zeros(5, np.int32), (3, 5)), "axis 0 has stride 0"),
    (lambda: np.zeros((6, 8), np.int32)[::-2], "axis 0 has stride -64"),
])
def test_contiguous_refuses_views_that_are_not_a_dense_block(make, stride):
    v = make()
    out = np.full(v.shape, 7, np.int32)
    with pytest.raises(ValueError, match=stride):
        bmmc.contiguous(v, out)
    assert (out == 7).all()


def test_contiguous_torch_cpu_views():
    torch = pytest.importorskip("torch")
    x = torch.arange(3 * 5 * 7, dtype=torch.bfloat16).reshape(3, 5, 7)
    for v in (x.permute(2, 0, 1), x.transpose(0, 1), x[1:2].permute(2, 0, 1), x[1:].permute(1, 2, 0)):
        got = bmmc.contiguous(v)
        assert got.is_contiguous() and torch.equal(got, v.contiguous())
    with pytest.raises(ValueError, match=r"axis 1 has stride 2 where ±1 was expected"):
        bmmc.contiguous(torch.zeros(4, 8)[:, ::2])


# ---- torch CPU ------------------------------------------------------------------------------------------------

def test_torch_cpu_any_shape_every_dtype():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    for dtype in (torch.bool, torch.int8, torch.uint8, torch.float16, torch.bfloat16, torch.float32, torch.float64,
                  torch.complex64, torch.complex128, torch.int64):
        for _ in range(3):
            shape, axes, flip, roll = random_call(rng, int(rng.integers(1, 8)))
            x = (torch.arange(int(np.prod(shape))) % 251).to(dtype).reshape(shape)
            want = x.permute(axes)
            if flip:
                want = torch.flip(want, [f % len(shape) for f in flip])
            if roll:
                want = torch.roll(want, list(roll), list(range(len(shape))))
            got = bmmc.transpose(x, axes, flip=flip, roll=roll)
            assert got.dtype == dtype and got.is_contiguous() and torch.equal(got, want.contiguous()), (dtype, shape)


def test_torch_ops_take_flip_and_roll():
    torch = pytest.importorskip("torch")
    ops = bmmc.torch_ops()
    x = torch.arange(3 * 5 * 4, dtype=torch.float32).reshape(3, 5, 4)
    want = torch.roll(torch.flip(x.permute(2, 0, 1), [1]), [1, 2, 3], [0, 1, 2]).contiguous()
    assert torch.equal(ops.transpose(x, [2, 0, 1], [1], [1, 2, 3]), want)
    out = torch.empty(4, 3, 5)
    ops.transpose_out(x, [2, 0, 1], out, [1], [1, 2, 3])
    assert torch.equal(out, want)

    def f(t):
        return bmmc.transpose(t, (2, 0, 1), flip=(1,), roll=(1, 2, 3)) * 2

    compiled = torch.compile(f, fullgraph=True, backend="eager")
    assert torch.equal(compiled(x), want * 2)
    # autograd: the gradient goes back through the inverse map
    xg = x.clone().requires_grad_()
    y = ops.transpose(xg, [2, 0, 1], [1], [1, 2, 3])
    w = torch.arange(y.numel(), dtype=torch.float32).reshape(y.shape)
    (y * w).sum().backward()
    ref = x.clone().requires_grad_()
    (torch.roll(torch.flip(ref.permute(2, 0, 1), [1]), [1, 2, 3], [0, 1, 2]) * w).sum().backward()
    assert torch.equal(xg.grad, ref.grad)
    assert torch.equal(ops.contiguous(x.permute(2, 0, 1)), x.permute(2, 0, 1).contiguous())


# ---- CUDA (torch) -----------------------------------------------------------------------------------------------

def _cuda_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or not bmmc.gpu_available():
        pytest.skip("NO GPU: the CUDA any-shape tests did not run (they run on the GPU machine, "
                    "scripts/gpu/python.sh)")
    return torch


def test_cuda_any_shape_matches_torch():
    torch = _cuda_torch()
    rng = np.random.default_rng(9)
    for dtype in (torch.uint8, torch.bfloat16, torch.float32, torch.float64, torch.complex128):
        for _ in range(6):
            shape, axes, flip, roll = random_call(rng, int(rng.integers(1, 12)))
            x = (torch.arange(int(np.prod(shape)), device="cuda") % 251).to(dtype).reshape(shape)
            want = x.permute(axes)
            if flip:
                want = torch.flip(want, [f % len(shape) for f in flip])
            if roll:
                want = torch.roll(want, list(roll), list(range(len(shape))))
            got = bmmc.transpose(x, axes, flip=flip, roll=roll)
            assert got.device == x.device and torch.equal(got, want.contiguous()), (dtype, shape, axes, flip, roll)
    big = torch.randint(0, 255, (64, 135, 240, 3), dtype=torch.uint8, device="cuda")
    assert torch.equal(bmmc.transpose(big, (0, 3, 1, 2)), big.permute(0, 3, 1, 2).contiguous())
    v = big.permute(3, 1, 0, 2)
    assert torch.equal(bmmc.contiguous(v), v.contiguous())


def test_cuda_graph_captures_an_odd_shape_transpose():
    torch = _cuda_torch()
    x = torch.randn(97, 101, 13, device="cuda")
    out = torch.empty(13, 97, 101, device="cuda")
    bmmc.transpose(x, (2, 0, 1), out, flip=(1,))  # warm up: plan and compile outside the capture
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        bmmc.transpose(x, (2, 0, 1), out, flip=(1,))
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, torch.flip(x.permute(2, 0, 1), [1]).contiguous())


def test_cuda_torch_compile_fullgraph_with_flip_and_roll():
    torch = _cuda_torch()
    x = torch.randn(6, 7, 5, device="cuda")

    def f(t):
        return bmmc.transpose(t, (2, 0, 1), flip=(0,), roll=(0, 3, 1)) + 1

    want = torch.roll(torch.flip(x.permute(2, 0, 1), [0]), [0, 3, 1], [0, 1, 2]) + 1
    for mode in ("default", "reduce-overhead"):
        compiled = torch.compile(f, fullgraph=True, mode=mode)
        for _ in range(3):
            assert torch.equal(compiled(x), want)


def test_cupy_any_shape():
    cupy = pytest.importorskip("cupy")
    if not bmmc.gpu_available():
        pytest.skip("NO GPU: the CuPy any-shape test did not run")
    x = cupy.arange(5 * 6 * 7, dtype=cupy.complex64).reshape(5, 6, 7)
    want = cupy.ascontiguousarray(cupy.roll(cupy.flip(x.transpose(1, 2, 0), 2), (1, 2, 3), axis=(0, 1, 2)))
    assert bool((bmmc.transpose(x, (1, 2, 0), flip=(2,), roll=(1, 2, 3)) == want).all())
    v = x[::-1].transpose(2, 0, 1)
    assert bool((bmmc.contiguous(v) == cupy.ascontiguousarray(v)).all())


# ---- bad input: refused before anything is written ------------------------------------------------------------

BAD = [
    # (x shape, kwargs, error type, message)
    ((3, 4, 5), dict(axes=(0, 0, 1)), ValueError, "not a permutation"),
    ((3, 4, 5), dict(axes=(0, 1)), ValueError, "one per dimension"),
    ((3, 4, 5), dict(axes=(0, 1, 3)), ValueError, "not a permutation"),
    ((3, 4, 5), dict(flip=(3,)), ValueError, "flip names axis 3 but the result has 3 axes"),
    ((3, 4, 5), dict(flip=(-4,)), ValueError, "flip names axis -4"),
    ((3, 4, 5), dict(flip=(1, -2)), ValueError, "flip names axis 1 twice"),
    ((3, 4, 5), dict(flip=(1.0,)), TypeError, "flip"),
    ((3, 4, 5), dict(roll=(1, 2)), ValueError, r"roll has 2 shifts but the result has 3 axes \(shape \(5, 4, 3\)\)"),
    ((3, 4, 5), dict(roll=(1, 2, 3, 4)), ValueError, "roll has 4 shifts"),
    ((3, 4, 5), dict(roll=(1, 2.5, 3)), TypeError, "integer shifts"),
    ((3, 4, 5), dict(roll=3), TypeError, "one per output axis"),
    ((3, 4, 5), dict(threads=-1), ValueError, "threads is -1"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_arguments_leave_out_untouched(case):
    shape, kwargs, kind, message = BAD[case]
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    axes = kwargs.pop("axes", None)
    out = np.full(shape[::-1], -7, np.float32) if axes is None else None
    with pytest.raises(kind, match=message):
        bmmc.transpose(x, axes, out, **kwargs)
    if out is not None:
        assert (out == -7).all()


@pytest.mark.parametrize("out,kind,message", [
    (np.full((5, 4, 3), -7, np.float32), ValueError, r"out has shape \(5, 4, 3\); expected the result's shape"),
    (np.full((5, 3, 4), -7, np.float64), TypeError, "out has dtype float64 but x has dtype float32"),
    (np.full((4, 3, 5), -7, np.float32).transpose(2, 1, 0), ValueError, "not C-contiguous"),
    ("read-only", ValueError, "read-only"),
    ([0.0] * 60, TypeError, "out is a builtins.list"),
])
def test_bad_out_is_refused_and_left_as_it_was(out, kind, message):
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    if isinstance(out, str):
        out = np.full((5, 3, 4), -7, np.float32)
        out.setflags(write=False)
    before = np.array(out, copy=True)
    with pytest.raises(kind, match=message):
        bmmc.transpose(x, (2, 0, 1), out, flip=(0,))
    assert np.array_equal(np.asarray(out), before)


def test_an_out_overlapping_x_is_refused_before_writing():
    buf = np.arange(30, dtype=np.int32)
    with pytest.raises(ValueError, match="overlap"):
        bmmc.transpose(buf[:15].reshape(3, 5), (1, 0), buf[5:20].reshape(5, 3), flip=(1,))
    assert (buf == np.arange(30)).all()


def test_object_arrays_are_refused():
    with pytest.raises(TypeError, match="Python object references"):
        bmmc.transpose(np.empty((3, 5), object), (1, 0))


# ---- bmmc.DigitMap --------------------------------------------------------------------------------------------

def test_digit_map_worked_examples():
    assert bmmc.DigitMap.transpose([2, 3], [1, 0]).apply_linear(1) == 2
    assert bmmc.DigitMap.flip([5], [0]).apply_linear(0) == 4
    assert bmmc.DigitMap.roll([5], [2]).apply_linear(4) == 1
    assert bmmc.DigitMap.transpose([4, 8], [1, 0]).as_bmmc() == bmmc.axes_permutation([4, 8], [1, 0])
    assert bmmc.DigitMap.transpose([3, 8], [1, 0]).as_bmmc() is None
    m = bmmc.DigitMap([2, 3, 5], (2, 0, 1), flip=(0,), roll=(0, 1, 7))
    assert m.shape == [2, 3, 5] and m.out_shape == [5, 2, 3] and m.axes == [2, 0, 1]
    assert m.flips == [True, False, False] and m.rolls == [0, 1, 1] and m.rank == 3 and m.size == 30
    assert m.apply([1, 2, 3]) == [1, 0, 0]  # out0 = 5-1-3 = 1, out1 = (1+1)%2 = 0, out2 = (2+1)%3 = 0


@pytest.mark.parametrize("seed", range(12))
def test_digit_map_against_numpy_inverse_and_compose(seed):
    rng = np.random.default_rng(100 + seed)
    shape, axes, flip, roll = random_call(rng, int(rng.integers(1, 6)))
    m = bmmc.DigitMap(shape, axes, flip, roll or None)
    x = np.arange(m.size).reshape(shape)
    y = reference(x, axes, flip, roll).reshape(-1)
    # y[m(i)] = x[i]: the map sends input index i to output index m.apply_linear(i)
    for i in range(0, m.size, max(1, m.size // 50)):
        assert y[m.apply_linear(i)] == i
    inv = m.inverse()
    assert (inv @ m).is_identity() and (m @ inv).is_identity()
    assert inv.shape == m.out_shape and inv.inverse() == m
    g = bmmc.DigitMap(m.out_shape, tuple(rng.permutation(m.rank)), roll=tuple(rng.integers(0, 9, m.rank)))
    fg = g @ m
    for i in range(0, m.size, max(1, m.size // 50)):
        assert fg.apply_linear(i) == g.apply_linear(m.apply_linear(i))
    twin = bmmc.DigitMap(shape, axes, flip, roll or None)
    assert twin == m and hash(twin) == hash(m) and (m != inv or m.is_involution())
    assert pickle.loads(pickle.dumps(m)) == m
    assert m.canonical().size == m.size
    for i in range(0, m.size, max(1, m.size // 50)):
        assert m.canonical().apply_linear(i) == m.apply_linear(i)
    assert bmmc.DigitMap(shape, axes, m.flips, m.rolls) == m  # the flags round-trip


def test_digit_map_spec_text_and_errors():
    m = bmmc.DigitMap.parse("flip:0*axes:1,0", (2, 3))
    assert m == bmmc.DigitMap([2, 3], (1, 0), flip=(0,))
    assert bmmc.DigitMap.parse(str(m), (2, 3)) == m
    assert eval(repr(m), {"bmmc": bmmc}) == m
    with pytest.raises(bmmc.SpecError) as e:
        bmmc.DigitMap.parse("axes:0,1,3", (4, 5, 6))
    assert e.value.column > 0
    with pytest.raises(ValueError, match="not a permutation|permutation"):
        bmmc.DigitMap([2, 3], (0, 0))
    with pytest.raises(ValueError, match="flip names axis 2"):
        bmmc.DigitMap([2, 3], (1, 0), flip=(2,))
    with pytest.raises(ValueError, match="roll has 1 shifts"):
        bmmc.DigitMap([2, 3], (1, 0), roll=(1,))
    with pytest.raises(ValueError, match="out of range"):
        bmmc.DigitMap([2, 3], (1, 0)).apply([2, 0])
    with pytest.raises(ValueError, match="f.shape == g.out_shape"):
        bmmc.DigitMap.identity([2, 3]) @ bmmc.DigitMap.transpose([2, 3], [1, 0])
