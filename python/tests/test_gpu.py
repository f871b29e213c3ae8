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


# ---- the fast path, the custom ops, torch.compile and CUDA graphs (issue 17) ---------------------------------

from bmmc import _fast  # noqa: E402

ALL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
              torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]


def int_view_reference(x, b):
    """reference() on an integer view of the same element size (works for every dtype)."""
    eb = x.element_size()
    if eb > 8:
        return reference(x, b)
    v = x.reshape(-1).view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[eb])
    return reference(v, b).view(x.dtype).reshape(x.shape)


def any_tensor(shape, dtype, seed=0):
    numel = 1
    for d in shape:
        numel *= d
    if dtype == torch.bool:
        return (random_tensor(numel, torch.int32, seed) % 2 == 0).reshape(shape)
    if dtype.is_complex:
        real = torch.float32 if dtype == torch.complex64 else torch.float64
        return torch.complex(random_tensor(numel, real, seed), random_tensor(numel, real, seed + 1)).reshape(shape)
    return random_tensor(numel, dtype, seed).reshape(shape)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_fast_path_every_dtype_on_the_gpu(dtype):
    _fast.clear()
    for shape, axes in [((64, 32), (1, 0)), ((8, 16, 4, 32), (3, 1, 0, 2)), ((2,) * 12, tuple(range(12))[::-1])]:
        x = any_tensor(shape, dtype)
        for _ in range(2):  # a miss, then a hit
            got = bmmc.transpose(x, axes)
            assert got.dtype == dtype and torch.equal(got, x.permute(axes).contiguous()), (dtype, shape)
            # allocated through the entry's shape template (_fast._shape_template): a plain contiguous tensor
            assert got.is_contiguous() and got.stride() == x.permute(axes).contiguous().stride()
            assert got.device == x.device and not got.requires_grad
        out = torch.empty_like(x.permute(axes).contiguous())
        assert bmmc.transpose(x, axes, out=out) is out and torch.equal(out, x.permute(axes).contiguous())
    x = any_tensor((1 << 14,), dtype, 3)
    for spec in ("bit-reverse", bmmc.random_bmmc(14, 1)):
        b = spec if isinstance(spec, bmmc.Bmmc) else bmmc.Bmmc(spec, n=14)
        for _ in range(2):
            assert torch.equal(bmmc.permute(x, spec), int_view_reference(x, b)), (dtype, spec)
    assert _fast.stats()["size"] == 5  # every call went through the fast path


def test_fast_path_cache_keys_on_the_gpu():
    _fast.clear()
    a = random_tensor(1 << 12, torch.int32).reshape(64, 64)
    xs = [a, a.view(torch.float32), a.reshape(32, 128), a.reshape(128, 32), a.cpu()]
    for _ in range(2):
        for x in xs:
            got = bmmc.transpose(x, (1, 0))
            assert got.device == x.device and got.dtype == x.dtype and torch.equal(got, x.t().contiguous())
    assert _fast.stats()["size"] == len(xs)


def test_fast_path_follows_the_current_stream():
    """One cached key used on two streams: each call must run on the stream current at the call."""
    _fast.clear()
    b = bmmc.random_bmmc(22, 5)
    x = random_tensor(1 << 22, torch.float32)
    bmmc.permute(x, b)  # cache the key on the default stream
    torch.cuda.synchronize()
    for s in (torch.cuda.Stream(), torch.cuda.Stream()):
        with torch.cuda.stream(s):
            big = x * 3  # queued on s before the permutation: it sees it only when it runs on s
            out = bmmc.permute(big, b)
        s.synchronize()
        assert torch.equal(out, reference(x * 3, b))
    assert _fast.stats()["size"] == 1


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_fast_path_never_mixes_devices():
    _fast.clear()
    for _ in range(2):
        for dev in ("cuda:0", "cuda:1"):
            x = random_tensor(1 << 12, torch.float32).to(dev).reshape(64, 64)
            got = bmmc.transpose(x, (1, 0))
            assert got.device == x.device and torch.equal(got, x.t().contiguous())
    assert _fast.stats()["size"] == 2


def test_fast_path_errors_unchanged():
    x = random_tensor(1 << 10, torch.float32).reshape(32, 32)
    bmmc.transpose(x, (1, 0))
    for xx, out in [(x.t(), None), (x, torch.empty(32, 32)), (x, torch.empty(32, 32, dtype=torch.int32, device=DEV)),
                    (x.clone().requires_grad_(), None), (x.reshape(-1)[1:513].reshape(16, 32), None)]:
        def general():
            return bmmc._transpose_general(xx, (1, 0), out, 0)

        def fast():
            return bmmc.transpose(xx, (1, 0), out=out)

        want = got = None
        try:
            w = general()
        except Exception as e:  # noqa: BLE001
            want = (type(e), str(e))
        try:
            g = fast()
        except Exception as e:  # noqa: BLE001
            got = (type(e), str(e))
        assert got == want
        if want is None:
            assert torch.equal(g, w)


def test_custom_ops_eager_on_the_gpu():
    ops = bmmc.torch_ops()
    x = random_tensor(1 << 15, torch.float16).reshape(8, 64, 64)
    assert torch.equal(ops.transpose(x, [2, 0, 1]), x.permute(2, 0, 1).contiguous())
    b = bmmc.random_bmmc(15, 2)
    assert torch.equal(ops.permute(x.reshape(-1), bmmc._torch_ops.spec_of(b)), reference(x.reshape(-1), b))
    xr = x.float().requires_grad_()
    w = torch.rand(64, 8, 64, device=DEV)
    (ops.transpose(xr, [2, 0, 1]) * w).sum().backward()
    assert torch.equal(xr.grad, w.permute(1, 2, 0))


def _compiled_body(b):
    def f(x, o):
        y = bmmc.transpose(x * 2, (2, 0, 1))
        z = bmmc.permute(y + 1, b)
        bmmc.transpose(x, (1, 0, 2), out=o)
        return z.float().sum(0), z
    return f


@pytest.mark.parametrize("mode", ["aot_eager", "inductor", "reduce-overhead"])
def test_torch_compile_fullgraph_on_the_gpu(mode):
    b = bmmc.random_bmmc(15, 4)
    f = _compiled_body(b)
    if mode == "aot_eager":
        cf = torch.compile(f, fullgraph=True, backend="aot_eager")
    elif mode == "inductor":
        cf = torch.compile(f, fullgraph=True)
    else:
        cf = torch.compile(f, fullgraph=True, mode="reduce-overhead")
    for seed in range(3):  # reduce-overhead records a CUDA graph on a later call, then replays it
        x = random_tensor(1 << 15, torch.float32, seed).reshape(16, 64, 32)
        o1, o2 = torch.empty(64, 16, 32, device=DEV), torch.empty(64, 16, 32, device=DEV)
        got, want = cf(x, o1), f(x, o2)
        # The permuted tensor is exact; the float sum is not: Inductor reduces in another order than eager.
        assert torch.equal(got[1], want[1]), (mode, seed)
        assert torch.allclose(got[0], want[0], rtol=1e-5, atol=1e-3), (mode, seed)
        assert torch.equal(o1, o2) and torch.equal(o1, x.permute(1, 0, 2).contiguous())


def test_cuda_graph_capture_and_replay():
    """Several permutes recorded in one CUDA graph (after a warm-up, which prepares their kernels), replayed
    on new input: the results equal eager PyTorch."""
    ops = bmmc.torch_ops()
    b = bmmc.random_bmmc(20, 9)
    x = random_tensor(1 << 20, torch.float32).reshape(64, 128, 128)
    out = torch.empty(128, 64, 128, device=DEV)

    def body():
        y = bmmc.transpose(x, (2, 0, 1))            # allocates from the graph's pool
        bmmc.transpose(x, (1, 0, 2), out=out)       # into a static buffer
        z = bmmc.permute(y, b)                      # on the result of the first
        w = ops.transpose(z, [1, 2, 0])             # the custom op
        return y, z, w

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            body()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y, z, w = body()
    for seed in (11, 12):
        x.copy_(random_tensor(1 << 20, torch.float32, seed).reshape(64, 128, 128))
        g.replay()
        torch.cuda.synchronize()
        ey = x.permute(2, 0, 1).contiguous()
        ez = reference(ey, b)
        assert torch.equal(y, ey) and torch.equal(out, x.permute(1, 0, 2).contiguous())
        assert torch.equal(z, ez) and torch.equal(w, ez.permute(1, 2, 0).contiguous())


def test_cupy_fast_path_and_graph_capture():
    cupy = pytest.importorskip("cupy")
    import numpy as np

    _fast.clear()
    a = cupy.arange(8 * 16 * 4, dtype=cupy.float32).reshape(8, 16, 4)
    for _ in range(2):
        assert bool((bmmc.transpose(a, (2, 0, 1)) == cupy.ascontiguousarray(a.transpose(2, 0, 1))).all())
        assert bool((bmmc.transpose(a.view(cupy.int32), (2, 0, 1)).view(cupy.float32)
                     == cupy.ascontiguousarray(a.transpose(2, 0, 1))).all())
    assert _fast.stats()["size"] == 2
    b = bmmc.random_bmmc(16, 5)
    x = cupy.arange(1 << 16, dtype=cupy.int32)
    out = cupy.empty_like(x)
    bmmc.permute(x, b, out=out)  # warm up: prepares the kernel
    want = np.empty(1 << 16, np.int32)
    want[b.apply(np.arange(1 << 16, dtype=np.uint64)).astype(np.int64)] = np.arange(1 << 16, dtype=np.int32)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        bmmc.permute(x, b, out=out)
        graph = s.end_capture()
    out.fill(0)
    graph.launch(s)
    s.synchronize()
    assert np.array_equal(cupy.asnumpy(out), want)


_GPU_AT_EXIT = r"""
import torch
import bmmc

dev = torch.device("cuda")
b = bmmc.random_bmmc(15, 4)


def f(x):
    return bmmc.permute(bmmc.transpose(x * 2, (2, 0, 1)), b)


x = torch.arange(1 << 15, dtype=torch.float32, device=dev).reshape(16, 64, 32)
for mode in ("default", "reduce-overhead"):
    cf = torch.compile(f, fullgraph=True, mode=mode)
    for _ in range(3):  # reduce-overhead records a CUDA graph on a later call, then replays it
        assert torch.equal(cf(x), f(x))
g = torch.cuda.CUDAGraph()
bmmc.transpose(x, (1, 0, 2))  # warm-up: the kernel is prepared outside the capture
with torch.cuda.graph(g):
    y = bmmc.transpose(x, (1, 0, 2))
g.replay()
torch.cuda.synchronize()
assert torch.equal(y, x.permute(1, 0, 2).contiguous())
print("ran")
"""


def test_no_nanobind_leak_report_after_torch_compile_and_cuda_graphs():
    # torch keeps compiled code, guards and CUDA graph trees in C++ state that is never destroyed: bmmc's exit
    # handler (bmmc._fast._release_at_exit) drops what they hold of it, so nanobind reports no leak at exit.
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _GPU_AT_EXIT], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0 and r.stdout.strip() == "ran", r.stderr
    assert "leak" not in r.stderr, r.stderr


_GPU_RELEASE = "import gc\nimport sys\n" + _GPU_AT_EXIT.replace("b = bmmc.random_bmmc(15, 4)\n", "b = bmmc.random_bmmc(15, 4)\nbase = sys.getrefcount(b)\n").replace(
    'print("ran")', """held = sys.getrefcount(b)
bmmc._fast._release_at_exit()
after = sys.getrefcount(b)
if after != base:  # name what still holds it (a holder the garbage collector cannot see is not listed)
    for r in gc.get_referrers(b):
        if r is not globals():
            print("held by", type(r), repr(r)[:300], file=sys.stderr)
print((base, held, after, bmmc._fast.stats()["size"], len(bmmc._digit._prepared)))""")


def test_the_exit_handler_leaves_a_bmmc_after_torch_compile_and_cuda_graphs_to_its_caller():
    # The same run as above; bmmc's exit handler is called before the end: the Bmmc that compiled code read
    # (guards compare with it; reduce-overhead records CUDA graph trees) is then held by its caller alone.
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _GPU_RELEASE], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    base, held, after, size, digit = eval(r.stdout.strip().splitlines()[-1])
    assert held > base and after == base and size == 0 and digit == 0, ((base, held, after, size, digit), r.stderr)
    assert "leak" not in r.stderr, r.stderr
