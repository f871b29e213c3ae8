"""The fast path (bmmc/_fast.py) with PyTorch CPU tensors, where torch imports: every dtype, cache keys that never
mix frameworks, allocated outputs, errors identical to the general path's, the custom ops (eager, autograd) and
torch.compile."""

import numpy as np
import pytest

import bmmc
from bmmc import _fast
from fast_support import error_of, fresh_cache, general_transpose as _general_transpose, reference  # noqa: F401
from fast_support import same_error, same_outcome


def _torch():
    return pytest.importorskip("torch")


def torch_reference(x, b):
    """out[A·i ⊕ c] = x[i] by index assignment on an integer view of the same element size."""
    import torch

    flat = x.reshape(-1)
    eb = x.element_size()
    v = flat.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[eb]) if eb <= 8 else flat
    dest = torch.from_numpy(b.apply(np.arange(flat.numel(), dtype=np.uint64)).astype(np.int64)).to(x.device)
    out = torch.empty_like(v)
    out[dest] = v
    return out.view(x.dtype).reshape(x.shape)


TORCH_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                "complex64", "complex128", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("name", TORCH_DTYPES)
def test_torch_cpu_every_dtype(name):
    torch = _torch()
    dtype = getattr(torch, name, None)
    if dtype is None:
        pytest.skip(f"torch has no {name}")
    base = torch.arange(1, 2 * 16 * 4 + 1).reshape(2, 16, 4)
    x = (base % 2 == 0) if dtype == torch.bool else base.to(dtype)
    for _ in range(2):
        got = bmmc.transpose(x, (2, 0, 1))
        assert got.dtype == x.dtype and torch.equal(got, x.permute(2, 0, 1).contiguous())
    p = bmmc.permute(x, "bit-reverse")
    assert p.dtype == x.dtype and torch.equal(p, torch_reference(x, bmmc.bit_reverse(7)))
    assert _fast.stats()["size"] == 2


def test_torch_cpu_cache_keys_and_frameworks_never_mix():
    torch = _torch()
    xs = [torch.arange(32, dtype=torch.int32).reshape(4, 8), torch.arange(32, dtype=torch.float32).reshape(4, 8),
          torch.arange(32, dtype=torch.int32).reshape(8, 4), np.arange(32, dtype=np.int32).reshape(4, 8)]
    for _ in range(2):
        for x in xs:
            got = bmmc.transpose(x, (1, 0))
            assert type(got) is type(x) and got.dtype == x.dtype and tuple(got.shape) == tuple(x.shape)[::-1]
            want = x.T.copy() if isinstance(x, np.ndarray) else x.t().contiguous()
            assert (got == want).all()
    assert _fast.stats()["size"] == 3 and _fast.stats()["native_numpy"] == 1  # torch's here, NumPy's native


def test_torch_cpu_allocated_outputs_are_plain_contiguous_tensors():
    # A cached transpose allocates its output through a shape template (_fast._shape_template): every rank, a
    # 4-d shape (where torch may suggest channels-last for odd strides) and a 1-sized axis included.
    torch = _torch()
    for shape, axes in [((4, 8), (1, 0)), ((2, 4, 8, 16), (0, 2, 3, 1)), ((2, 4, 8, 16), (3, 1, 0, 2)),
                        ((1, 8, 2, 4), (2, 3, 0, 1)), ((2, 2, 2, 2, 2, 4), (5, 3, 1, 0, 2, 4))]:
        x = torch.arange(int(np.prod(shape)), dtype=torch.float32).reshape(shape)
        want = x.permute(axes).contiguous()
        for _ in range(3):  # a miss, then hits through the template
            got = bmmc.transpose(x, axes)
            assert got.shape == want.shape and got.stride() == want.stride() and got.is_contiguous()
            assert not got.requires_grad and got.dtype == x.dtype and torch.equal(got, want)
        got.fill_(0)  # a fresh allocation every call: the last result does not alias the next
        assert torch.equal(bmmc.transpose(x, axes), want) and not torch.equal(got, want)
    # A contiguous x whose size-1 axis has an odd stride: the output has the plain strides all the same.
    odd = torch.empty_strided((1, 4, 4), (999, 4, 1))
    odd.copy_(torch.arange(16.0).reshape(1, 4, 4))
    assert odd.is_contiguous()
    for _ in range(2):
        got = bmmc.permute(odd, "bit-reverse")
        assert got.stride() == (16, 4, 1) and torch.equal(got, torch_reference(odd, bmmc.bit_reverse(4)))
        assert bmmc.transpose(odd, (0, 2, 1)).stride() == (16, 4, 1)


def test_torch_cpu_errors_and_special_tensors_unchanged():
    torch = _torch()
    x = torch.arange(32, dtype=torch.float32).reshape(4, 8)
    bmmc.transpose(x, (1, 0))
    cases = [
        (x.t(), (1, 0), None),                                   # a transposed view: read where it lies
        (x.clone().requires_grad_(), (1, 0), None),              # autograd: runs on x's data
        (torch._neg_view(x), (1, 0), None),                      # negative bit: refused (it once ran unnegated)
        (x, (1, 0), torch.empty(8, 4, dtype=torch.int32)),       # out of another dtype
        (x, (1, 0), torch.empty(16, 4)),                         # out of another size
        (x, (1, 0), torch.empty(4, 8)),                          # same size, other shape: refused
        (x, (1, 0), torch.empty(4, 8).t()),                      # out not contiguous
        (x, (1, 0), np.empty((8, 4), np.float32)),               # out of another framework: accepted
        (x[:, :4], (1, 0), None),
        (x.reshape(32)[1:17].reshape(4, 4), (1, 0), None),      # an offset view: runs (narrower accesses)
        (torch.zeros(4, 8, device="meta"), (1, 0), None),
    ]
    kinds = []
    for xx, axes, out in cases:
        poison = (lambda: out.fill_(-7)) if isinstance(out, torch.Tensor) else None
        kinds.append(same_outcome(lambda: bmmc.transpose(xx, axes, out=out),
                                  lambda: _general_transpose(xx, axes, out), poison))
        if kinds[-1] == "returned":  # and right, not only equal on both paths
            got = bmmc.transpose(xx, axes, out=out)
            got = got.detach().numpy() if isinstance(got, torch.Tensor) else got
            want = xx.detach().resolve_neg().permute(*axes).contiguous().numpy()
            assert np.array_equal(got.reshape(-1), want.reshape(-1)), (xx.shape, axes)
    # Four of them run on both paths with equal, right results; the other seven raise the same error on both.
    R, E = "returned", "raised"
    assert kinds == [R, R, E, E, E, E, E, R, E, R, E], repr(kinds)
    neg = torch._neg_view(x)
    assert error_of(lambda: bmmc.transpose(neg, (1, 0)))[1].startswith("x has its negative bit set")
    assert error_of(lambda: bmmc.transpose(x, (1, 0), out=torch._neg_view(torch.empty(8, 4))))[1].startswith(
        "out has its negative bit set")
    assert torch.equal(bmmc.transpose(neg.resolve_neg(), (1, 0)), -x.t())
    c = torch.complex(torch.arange(16.), torch.ones(16)).reshape(4, 4)
    bmmc.transpose(c, (1, 0))
    conj = c.conj()
    # A conjugate view: refused on both paths (it once ran unconjugated), as is an out that is one.
    assert same_error(lambda: bmmc.transpose(conj, (1, 0)), lambda: _general_transpose(conj, (1, 0)))[1].startswith(
        "x has its conjugate bit set")
    assert error_of(lambda: bmmc.permute(c, "gray", out=torch.empty_like(c).conj()))[1].startswith(
        "out has its conjugate bit set")
    assert torch.equal(bmmc.transpose(conj.resolve_conj(), (1, 0)), c.t().conj().contiguous().resolve_conj())
    assert torch.equal(bmmc.transpose(c, (1, 0)), c.t().contiguous())


def test_torch_ops_eager_and_autograd():
    torch = _torch()
    ops = bmmc.torch_ops()
    x = torch.arange(2 * 4 * 8, dtype=torch.float32).reshape(2, 4, 8)
    assert torch.equal(ops.transpose(x, [2, 0, 1]), x.permute(2, 0, 1).contiguous())
    assert torch.equal(ops.transpose(x.transpose(0, 2), [1, 0, 2]), x.transpose(0, 2).permute(1, 0, 2).contiguous())
    flat = x.reshape(-1)
    assert np.array_equal(ops.permute(flat, "bit-reverse").numpy(), reference(flat.numpy(), bmmc.bit_reverse(6)))
    out = torch.empty(8, 2, 4)
    ops.transpose_out(x, [2, 0, 1], out)
    assert torch.equal(out, x.permute(2, 0, 1).contiguous())
    out = torch.empty(64)
    ops.permute_out(flat, "gray", out)
    assert np.array_equal(out.numpy(), reference(flat.numpy(), bmmc.gray(6)))
    b = bmmc.random_bmmc(6, 9)
    spec = bmmc._torch_ops.spec_of(b) if hasattr(bmmc, "_torch_ops") else None
    assert bmmc.Bmmc(spec) == b and bmmc.Bmmc(bmmc._torch_ops.spec_of(bmmc.identity(0)), n=0) == bmmc.identity(0)
    # autograd: the gradient is the inverse permutation of the incoming gradient
    xr = x.clone().requires_grad_()
    w = torch.arange(64, dtype=torch.float32).reshape(8, 2, 4)
    (ops.transpose(xr, [2, 0, 1]) * w).sum().backward()
    assert torch.equal(xr.grad, w.permute(1, 2, 0))
    fr = flat.clone().requires_grad_()
    wf = torch.arange(64, dtype=torch.float32)
    (ops.permute(fr, spec) * wf).sum().backward()
    expect = torch.from_numpy(wf.numpy()[b.apply(np.arange(64, dtype=np.uint64)).astype(np.int64)])
    assert torch.equal(fr.grad, expect)


def test_torch_compile_fullgraph_cpu():
    torch = _torch()
    try:
        import torch._dynamo  # noqa: F401
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no torch._dynamo: {e}")

    g = bmmc.gray(9)

    def f(x, o):
        y = bmmc.transpose(x * 2, (2, 0, 1))
        z = bmmc.permute(y + 1, "bit-reverse")
        bmmc.transpose(x, (1, 0, 2), out=o)
        return z, bmmc.permute(x, g)

    x = torch.randn(8, 16, 4)
    o1, o2 = torch.empty(16, 8, 4), torch.empty(16, 8, 4)
    cf = torch.compile(f, fullgraph=True, backend="aot_eager")
    got, want = cf(x, o1), f(x, o2)
    assert all(torch.equal(a, b) for a, b in zip(got, want))
    assert torch.equal(o1, o2) and torch.equal(o1, x.permute(1, 0, 2).contiguous())


_TORCH_AT_EXIT = r"""
import numpy as np
import torch
import bmmc

x = torch.arange(512, dtype=torch.float32).reshape(8, 16, 4)
g = bmmc.gray(9)
for _ in range(2):  # the fast path's entries (a miss, then a hit), NumPy's native table beside them
    bmmc.transpose(x, (2, 0, 1))
    bmmc.permute(x, g)
    bmmc.permute(x.numpy(), "bit-reverse")
torch.ops.bmmc.permute(x, "gray")
torch.ops.bmmc.transpose(x, [1, 0, 2])
xg = x.clone().requires_grad_()
torch.ops.bmmc.permute(xg, "gray").sum().backward()


def f(t):
    return bmmc.permute(bmmc.transpose(t * 2, (2, 0, 1)), g), bmmc.permute(t, "bit-reverse")


cf = torch.compile(f, fullgraph=True, backend=BACKEND)
for got, want in zip(cf(x), f(x)):
    assert torch.equal(got, want)
print("ran")
"""


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_no_nanobind_leak_report_after_the_torch_ops_and_torch_compile(backend):
    # A process that used the custom ops, their autograd formulas and torch.compile (whose guards and graphs
    # hold bmmc objects) must end without nanobind's "leaked instances / types / functions" report on stderr.
    import subprocess
    import sys

    _torch()
    code = _TORCH_AT_EXIT.replace("BACKEND", repr(backend))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    if backend == "inductor" and r.returncode != 0 and "CppCompileError" in r.stderr + r.stdout:
        pytest.skip("Inductor cannot compile C++ here: " + r.stderr[-300:])
    assert r.returncode == 0 and r.stdout.strip() == "ran", r.stderr
    assert "leak" not in r.stderr, r.stderr


_TORCH_RELEASE = r"""
import sys
import torch
import bmmc

b = bmmc.random_bmmc(15, 4)


def make(spec):
    def g(t):
        return bmmc.permute(t, spec)  # a Bmmc captured by a closure
    return g


g = make(bmmc.gray(15))
c = g.__closure__[0].cell_contents
base = sys.getrefcount(b), sys.getrefcount(c)


def f(t):
    return bmmc.permute(bmmc.transpose(t * 2, (2, 0, 1)), b)  # a Bmmc read from the module's globals


x = torch.arange(1 << 15, dtype=torch.float32).reshape(16, 64, 32)
y = torch.arange(60, dtype=torch.float32).reshape(3, 4, 5)  # extents not powers of two: the any-shape class
for fn, arg in ((f, x), (g, x), (lambda t: bmmc.transpose(t, (2, 0, 1), flip=1), y)):
    cf = torch.compile(fn, fullgraph=True, backend=BACKEND)
    for _ in range(2):
        assert torch.equal(cf(arg), fn(arg))
del cf
held = sys.getrefcount(b), sys.getrefcount(c)
assert held[0] > base[0] and held[1] > base[1], (base, held)  # the guards and the cache keys hold them now
bmmc._fast._release_at_exit()
print((base, held, (sys.getrefcount(b), sys.getrefcount(c)), bmmc._fast.stats()["size"], len(bmmc._digit._prepared)))
"""


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_the_exit_handler_leaves_a_compiled_bmmc_to_its_caller(backend):
    # What nanobind's report at exit comes from: after bmmc's exit handler, no cache of bmmc's and no compile
    # state of torch's (guards comparing with the Bmmc, whatever still holds their trees) may keep a Bmmc that
    # compiled code read from globals or a closure: its reference count is back to what the caller holds, and
    # the caches are empty.
    import subprocess
    import sys

    _torch()
    code = _TORCH_RELEASE.replace("BACKEND", repr(backend))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    base, held, after, size, digit = eval(r.stdout.strip().splitlines()[-1])
    assert after == base and size == 0 and digit == 0, (base, held, after, size, digit)
    assert "leak" not in r.stderr, r.stderr


def test_tracing_bmmc_ops_is_noted_for_the_exit_handler():
    # The exit handler silences nanobind's leak report only where torch.compile traced bmmc's ops: eager calls
    # leave the note unset, a compiled call sets it (the ops' fake implementations run only while tracing).
    import subprocess
    import sys

    _torch()
    code = ("import torch, bmmc\nx = torch.arange(64.0).reshape(8, 8)\nbmmc.transpose(x, (1, 0))\n"
            "print(bmmc._fast._torch_compiled())\n"
            "cf = torch.compile(lambda t: bmmc.transpose(t, (1, 0)), backend='eager', fullgraph=True)\n"
            "assert torch.equal(cf(x), x.t().contiguous())\nprint(bmmc._fast._torch_compiled())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-2:] == ["False", "True"], r.stdout + r.stderr
