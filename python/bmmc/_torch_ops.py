"""PyTorch custom ops over bmmc, so that bmmc runs inside torch.compile graphs and CUDA graphs.

Registered once, when bmmc first sees a torch tensor, by bmmc.torch_ops(), or at `import bmmc` when torch is
already imported (importing bmmc never imports torch):

    torch.ops.bmmc.transpose(Tensor x, int[] axes, int[]? flip=None, int[]? roll=None) -> Tensor
        == torch.roll(torch.flip(x.permute(axes), flip), roll, range(x.dim())).contiguous() (bmmc.transpose)
    torch.ops.bmmc.permute(Tensor x, str spec) -> Tensor                out[A·i ⊕ c] = x[i], flat C order
    torch.ops.bmmc.contiguous(Tensor x) -> Tensor                       == x.contiguous() (bmmc.contiguous)
    torch.ops.bmmc.transpose_out(Tensor x, int[] axes, Tensor(a!) out, int[]? flip=None, int[]? roll=None) -> ()
    torch.ops.bmmc.permute_out(Tensor x, str spec, Tensor(a!) out) -> ()

Each has a fake (meta) implementation giving the output's shape, so torch.compile traces it without running
it, and an autograd formula (the inverse permutation of the gradient). Unlike bmmc.transpose they accept
any strided tensor: a non-contiguous x is made contiguous first, a conjugate or negative view resolved. A
Bmmc is passed to the permute op as a spec string (`matrix:ROWS^C`, see spec_of).

Inside torch.compile, bmmc.transpose(x, axes) and bmmc.permute(x, spec) themselves call these ops (their
torch handlers check torch.compiler.is_compiling() first), so user code needs no change.

CUDA graphs: the ops (and bmmc.transpose / bmmc.permute in eager mode) enqueue their kernel on the current
stream and allocate `out` through PyTorch's allocator, so they can be captured by torch.cuda.graph and by
torch.compile(mode="reduce-overhead"). Warm up once before capturing (as PyTorch asks for any captured
code): the first call with a new (shape, axes or spec, dtype, device) plans and JIT-compiles its kernel,
which must not happen during capture. A spec whose plan has two passes allocates its temporary with
cudaMallocAsync on the stream, which capture records as a graph memory node.
"""

from __future__ import annotations

from typing import List, Optional

import torch

from . import _fast

_LIB = "bmmc"


def spec_of(spec) -> str:
    """A spec string for a Bmmc (or the string itself): what the permute op takes."""
    if isinstance(spec, str):
        return spec
    from . import Bmmc

    if not isinstance(spec, Bmmc):
        raise TypeError(f"expected a spec string or a bmmc.Bmmc, got {type(spec).__name__}")
    if spec.n == 0:
        return "identity"
    return "matrix:" + ",".join(hex(r) for r in spec.rows) + f"^{hex(spec.c)}"


# Dynamo cannot trace the native Bmmc's properties: inside torch.compile the spec string of a Bmmc is computed
# when tracing and kept as a constant of the graph. For that Dynamo must see a Bmmc as a constant value (it is
# immutable, with == and hash): register_constant says so; without it (torch before 2.6) Dynamo treats the
# Bmmc as an opaque object and assume_constant_result cannot take it (pass the spec string then).
def _register_bmmc_constant() -> None:
    from . import Bmmc

    register = getattr(getattr(torch.utils, "_pytree", None), "register_constant", None)
    if register is not None:
        try:
            register(Bmmc)
        except ValueError:  # already registered (a second import of this module)
            pass


_register_bmmc_constant()
_assume_constant = getattr(getattr(torch, "_dynamo", None), "assume_constant_result", None)
_spec_of_traced = _assume_constant(spec_of) if _assume_constant is not None else spec_of


def _normalise(ndim: int, axes) -> List[int]:
    from . import _normalise_axes

    return _normalise_axes(ndim, axes)


def _eager_transpose(x, axes, out=None, flip=None, roll=None):
    from . import transpose

    from . import _digit

    x = x.detach().resolve_conj().resolve_neg()  # lazy conjugate / negative views: their values, in memory
    if not _digit.dense_view(x):
        x = x.contiguous()  # a permuted view of a dense tensor is read where it lies; any other is copied first
    return transpose(x, list(axes), out=out, flip=tuple(flip or ()), roll=tuple(roll or ()))


def _eager_permute(x, spec, out=None):
    from . import permute

    x = x.detach().resolve_conj().resolve_neg()  # lazy conjugate / negative views: their values, in memory
    if not x.is_contiguous():
        x = x.contiguous()
    return permute(x, spec, out=out)


@torch.library.custom_op(f"{_LIB}::transpose", mutates_args=())
def transpose(x: torch.Tensor, axes: List[int], flip: Optional[List[int]] = None,
              roll: Optional[List[int]] = None) -> torch.Tensor:
    return _eager_transpose(x, axes, None, flip, roll)


@transpose.register_fake
def _transpose_fake(x, axes, flip=None, roll=None):
    _fast.note_traced()
    from . import _digit

    norm = _normalise(x.dim(), axes)
    shape = [x.shape[a] for a in norm]
    _digit.normalise_flip(x.dim(), flip)  # the eager op's errors, raised while tracing
    if roll:
        _digit.normalise_roll(shape, roll)
    return x.new_empty(shape)


@torch.library.custom_op(f"{_LIB}::contiguous", mutates_args=())
def contiguous(x: torch.Tensor) -> torch.Tensor:
    from . import _digit, contiguous as run

    x = x.detach().resolve_conj().resolve_neg()
    return run(x) if _digit.dense_view(x) else x.contiguous()


@contiguous.register_fake
def _contiguous_fake(x):
    _fast.note_traced()
    return x.new_empty(x.shape)


@torch.library.custom_op(f"{_LIB}::permute", mutates_args=())
def permute(x: torch.Tensor, spec: str) -> torch.Tensor:
    return _eager_permute(x, spec)


@permute.register_fake
def _permute_fake(x, spec):
    _fast.note_traced()
    return x.new_empty(x.shape)


@torch.library.custom_op(f"{_LIB}::transpose_out", mutates_args=("out",))
def transpose_out(x: torch.Tensor, axes: List[int], out: torch.Tensor, flip: Optional[List[int]] = None,
                  roll: Optional[List[int]] = None) -> None:
    _eager_transpose(x, axes, out.detach(), flip, roll)


@transpose_out.register_fake
def _transpose_out_fake(x, axes, out, flip=None, roll=None):
    _fast.note_traced()
    return None


@torch.library.custom_op(f"{_LIB}::permute_out", mutates_args=("out",))
def permute_out(x: torch.Tensor, spec: str, out: torch.Tensor) -> None:
    _eager_permute(x, spec, out.detach())


@permute_out.register_fake
def _permute_out_fake(x, spec, out):
    _fast.note_traced()
    return None


# ---- autograd: the gradient of a permutation is the inverse permutation of the gradient ----------------------

def _transpose_setup(ctx, inputs, output):
    x, axes, flip, roll = inputs
    ctx.axes = _normalise(x.dim(), axes)
    ctx.shape = list(x.shape)
    ctx.flip = flip
    ctx.roll = roll


def _transpose_backward(ctx, grad):
    if not ctx.flip and not ctx.roll:
        inverse = [0] * len(ctx.axes)
        for i, a in enumerate(ctx.axes):
            inverse[a] = i
        return transpose(grad, inverse), None, None, None
    from . import DigitMap, _digit

    flags = _digit.normalise_flip(len(ctx.shape), ctx.flip)
    inv = DigitMap(ctx.shape, ctx.axes, flags, list(ctx.roll) if ctx.roll else None).inverse()
    flip = [j for j, f in enumerate(inv.flips) if f]
    return transpose(grad, inv.axes, flip, inv.rolls), None, None, None


def _contiguous_backward(ctx, grad):
    return grad


def _permute_setup(ctx, inputs, output):
    ctx.spec = inputs[1]


def _permute_backward(ctx, grad):
    return permute(grad, f"inv({ctx.spec})"), None


transpose.register_autograd(_transpose_backward, setup_context=_transpose_setup)
contiguous.register_autograd(_contiguous_backward)
permute.register_autograd(_permute_backward, setup_context=_permute_setup)


# ---- what bmmc.transpose / bmmc.permute call while Dynamo traces ---------------------------------------------

def traced_transpose(x, axes, out, flip=(), roll=()):
    axes = list(range(x.dim()))[::-1] if axes is None else [int(a) for a in axes]
    if isinstance(flip, int):
        flip = (flip,)
    flip = [int(f) for f in flip] if flip else None
    roll = [int(r) for r in roll] if roll else None
    if out is None:
        return torch.ops.bmmc.transpose(x, axes, flip, roll)
    torch.ops.bmmc.transpose_out(x, axes, out, flip, roll)
    return out


def traced_contiguous(x):
    return torch.ops.bmmc.contiguous(x)


def traced_permute(x, spec, out):
    if not isinstance(spec, str):
        spec = _spec_of_traced(spec)
    if out is None:
        return torch.ops.bmmc.permute(x, spec)
    torch.ops.bmmc.permute_out(x, spec, out)
    return out


__all__ = ["transpose", "permute", "contiguous", "transpose_out", "permute_out", "spec_of", "_fast"]
