"""The fast path (bmmc/_fast.py) with PyTorch CPU tensors, where torch imports: every dtype, cache keys that never
mix frameworks, allocated outputs, errors identical to the general path's, the custom ops (eager, autograd) and
torch.compile."""

import numpy as np
import pytest

import bmmc
from bmmc import _fast
from fast_support import error_of, fresh_cache, general_transpose as _general_transpose, reference  # noqa: F401


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
    assert _fast.stats()["size"] == 4


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
        (x.t(), (1, 0), None),                                   # not contiguous
        (x.clone().requires_grad_(), (1, 0), None),              # autograd: DLPack refuses
        (torch._neg_view(x), (1, 0), None),                      # negative bit
        (x, (1, 0), torch.empty(8, 4, dtype=torch.int32)),       # out of another dtype
        (x, (1, 0), torch.empty(16, 4)),                         # out of another size
        (x, (1, 0), torch.empty(4, 8)),                          # same size, other shape: accepted
        (x, (1, 0), torch.empty(4, 8).t()),                      # out not contiguous
        (x, (1, 0), np.empty((8, 4), np.float32)),               # out of another framework
        (x[:, :4], (1, 0), None),
        (x.reshape(32)[1:17].reshape(4, 4), (1, 0), None),      # an offset view: runs (narrower accesses)
        (torch.zeros(4, 8, device="meta"), (1, 0), None),
    ]
    for xx, axes, out in cases:
        want = error_of(lambda: _general_transpose(xx, axes, out))
        got = error_of(lambda: bmmc.transpose(xx, axes, out=out))
        assert got == want, (xx.shape, axes)
    c = torch.complex(torch.arange(16.), torch.ones(16)).reshape(4, 4)
    bmmc.transpose(c, (1, 0))
    conj = c.conj()
    assert error_of(lambda: bmmc.transpose(conj, (1, 0))) == error_of(lambda: _general_transpose(conj, (1, 0)))
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
