"""GPU tests of the bmmc Python package with PyTorch (and CuPy where installed): skipped without a GPU.

On the GPU machine (scripts/gpu/python.sh) these check bmmc.transpose against x.permute(axes).contiguous()
and bmmc.permute against a gather reference, on the framework's current stream."""

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU visible to PyTorch", allow_module_level=True)

import bmmc  # noqa: E402

if not bmmc.has_cuda():
    pytest.skip("this bmmc module was built without CUDA", allow_module_level=True)

DEV = torch.device("cuda")


def reference(x, b):
    """out[A·i ⊕ c] = x[i]: a scatter by the BMMC's index map, computed with torch on the GPU."""
    import numpy as np

    dest = torch.from_numpy(b.apply(np.arange(x.numel(), dtype=np.uint64)).astype(np.int64)).to(x.device)
    out = torch.empty_like(x.reshape(-1))
    out[dest] = x.reshape(-1)
    return out.reshape(x.shape)


def random_tensor(numel, dtype, seed=0):
    g = torch.Generator(device=DEV).manual_seed(seed)
    if dtype.is_floating_point:
        return torch.rand(numel, generator=g, device=DEV, dtype=torch.float32).to(dtype) + 1
    return torch.randint(1, 100, (numel,), generator=g, device=DEV, dtype=torch.int64).to(dtype)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float16, torch.float32, torch.int64, torch.complex128])
@pytest.mark.parametrize("n", [0, 4, 10, 16, 22])
def test_permute_random_bmmcs(dtype, n):
    if dtype == torch.complex128:
        x = torch.complex(random_tensor(1 << n, torch.float64), random_tensor(1 << n, torch.float64, 1))
    else:
        x = random_tensor(1 << n, dtype)
    for seed in range(2):
        for b in (bmmc.random_bmmc(n, seed), bmmc.random_bpc(n, seed)):
            got = bmmc.permute(x, b)
            assert got.device == x.device and got.dtype == x.dtype
            assert torch.equal(got, reference(x, b)), (n, seed, dtype)


@pytest.mark.parametrize("shape,axes", [
    ((1024, 2048), (1, 0)), ((64, 32), (1, 0)), ((256, 64, 128), (2, 0, 1)), ((32, 1024, 16), (1, 2, 0)),
    ((8, 16, 32), (0, 2, 1)), ((2,) * 20, tuple(reversed(range(20)))),
    ((2,) * 16, (3, 0, 15, 7, 1, 2, 9, 4, 5, 6, 8, 10, 11, 12, 13, 14)),
])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_transpose_matches_torch_permute(shape, axes, dtype):
    x = random_tensor(int(torch.tensor(shape).prod()) if shape else 1, dtype).reshape(shape)
    got = bmmc.transpose(x, axes)
    want = x.permute(axes).contiguous()
    assert got.shape == want.shape
    assert torch.equal(got, want)
    assert torch.equal(got, reference(x, bmmc.axes_permutation(list(shape), list(axes))).reshape(want.shape))


def test_runs_on_the_current_stream():
    x = random_tensor(1 << 20, torch.float32)
    b = bmmc.random_bmmc(20, 3)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        out = torch.empty_like(x)
        x2 = x * 2  # queued on s: the permutation must see it, so it must run on s too
        bmmc.permute(x2, b, out=out)
    s.synchronize()
    assert torch.equal(out, reference(x * 2, b))


def test_spec_string_and_out_argument():
    x = random_tensor(1 << 12, torch.int32).reshape(64, 64)
    out = torch.full_like(x, -1)
    r = bmmc.permute(x, "transpose:6", out=out)
    assert r is out
    assert torch.equal(out, x.t().contiguous())


def test_errors():
    x = random_tensor(1 << 10, torch.float32)
    with pytest.raises(ValueError, match="same device"):
        bmmc.permute(x, "gray", out=torch.empty(1 << 10))
    with pytest.raises(ValueError, match="C-contiguous"):
        bmmc.permute(x.reshape(32, 32).t(), "gray")
    with pytest.raises(ValueError, match="2\\^n elements"):
        bmmc.permute(x[:1000], "gray")


def test_cupy():
    cupy = pytest.importorskip("cupy")
    import numpy as np

    b = bmmc.random_bmmc(16, 5)
    x = cupy.arange(1 << 16, dtype=cupy.int32)
    got = bmmc.permute(x, b)
    assert isinstance(got, cupy.ndarray)
    want = np.empty(1 << 16, np.int32)
    want[b.apply(np.arange(1 << 16, dtype=np.uint64)).astype(np.int64)] = np.arange(1 << 16, dtype=np.int32)
    assert np.array_equal(cupy.asnumpy(got), want)
    a = cupy.arange(8 * 16 * 4, dtype=cupy.float64).reshape(8, 16, 4)
    assert bool((bmmc.transpose(a, (2, 0, 1)) == cupy.ascontiguousarray(a.transpose(2, 0, 1))).all())
