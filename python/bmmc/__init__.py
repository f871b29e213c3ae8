"""bmmc: BMMC permutations of arrays of 2^n elements, y = A·x ⊕ c on the index bits (out[A·x ⊕ c] = in[x]), and
axis permutations, flips and rolls of arrays of any shape (bmmc.transpose, bmmc.contiguous, bmmc.DigitMap).

NumPy arrays run on the CPU (the library's multi-threaded executor); PyTorch tensors and CuPy arrays on a
CUDA device run on the GPU, zero-copy (DLPack), on the framework's current stream. Example::

    import numpy as np, bmmc
    x = np.arange(16, dtype=np.int32)
    y = bmmc.permute(x, "bit-reverse")           # y[bitrev(i)] = x[i]
    f = bmmc.Bmmc("rotate:1", n=4) @ bmmc.gray(4) # apply gray first
    t = bmmc.transpose(np.zeros((4, 8, 2)), (2, 0, 1))  # == np.transpose(..., (2, 0, 1)).copy()
    u = bmmc.transpose(np.zeros((3, 5, 7)), (2, 0, 1), flip=(0,), roll=(0, 1, 2))  # any shape

This module is the thin layer over the native part (bmmc._bmmc) that knows the frameworks: it allocates
`out` like `x` and finds the current CUDA stream. Everything else (checks, planning, kernels) is C++.
Repeated calls take the fast path of bmmc/_fast.py (a cache of prepared permutations keyed by shape, axes or
spec, dtype, device and threads: a few µs of host time); anything else the general path below, which
exports both arrays through DLPack. For PyTorch, bmmc/_torch_ops.py adds the custom ops torch.ops.bmmc.*
(torch.compile, CUDA graphs).
"""

from __future__ import annotations

import ctypes
import glob
import operator
import os
import sys


def _preload_nvrtc() -> None:
    """Make libnvrtc.so.13 loadable before the native module needs it.

    A CUDA build of the module links NVRTC dynamically (the CUDA runtime itself is static). A source build
    carries an RPATH to its toolkit, but a wheel moved to another machine relies on the loader: when it
    cannot find the library we load it from the usual places (a CUDA toolkit, PyTorch's nvidia-* wheels)
    with RTLD_GLOBAL so the module's dependency is satisfied by name. CPU-only builds need none of this.
    """
    try:
        ctypes.CDLL("libnvrtc.so.13", mode=ctypes.RTLD_GLOBAL)
        return
    except OSError:
        pass
    candidates = []
    for root in filter(None, [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]):
        candidates += [os.path.join(root, d, "libnvrtc.so.13") for d in ("lib64", "lib", "targets/x86_64-linux/lib")]
    candidates += sorted(glob.glob("/usr/local/cuda-13*/lib64/libnvrtc.so.13"))
    for site in sys.path:
        candidates += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "libnvrtc.so.13")))
        candidates += sorted(glob.glob(os.path.join(site, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so*")))
    for path in candidates:
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                return
            except OSError:
                continue


try:
    from . import _bmmc
except ImportError as first_error:  # most likely libnvrtc.so.13 not on the loader's path
    if "nvrtc" not in str(first_error):
        raise
    _preload_nvrtc()
    from . import _bmmc

from ._bmmc import (  # noqa: E402  (re-exported API)
    Bmmc,
    DigitMap,
    SpecError,
    axes_permutation,
    bit_permutation,
    bit_reverse,
    from_rows,
    gpu_available,
    gray,
    gray_inverse,
    has_cuda,
    identity,
    parm_matrix,
    parse_spec,
    random_bmmc,
    random_bpc,
    reverse,
    rotate,
    swap_index_bits_matrix,
    factor_involutions,
    transpose_matrix,
)

__all__ = [
    "Bmmc", "SpecError", "permute", "transpose", "identity", "bit_reverse", "reverse", "rotate",
    "transpose_matrix", "gray", "gray_inverse", "parm_matrix", "bit_permutation", "axes_permutation",
    "from_rows", "random_bpc", "random_bmmc", "parse_spec", "has_cuda", "gpu_available", "torch_ops",
    "swap_index_bits", "swap_index_bits_matrix", "factor_involutions", "DigitMap", "contiguous",
]
__version__ = "0.1.0"


# ---- Bmmc methods that need NumPy conversions (kept in Python: the native part sees only uint64/uint8) ----

def _apply(self: Bmmc, x):
    """y = A·x ⊕ c for an int, or elementwise for an integer array (returns a NumPy uint64 array)."""
    import numbers

    if isinstance(x, numbers.Integral) and not hasattr(x, "dtype"):
        if x < 0:
            raise ValueError(f"index {x} is negative; expected 0 <= x < 2^{self.n}")
        return self._apply_int(int(x))
    import numpy as np

    a = np.asarray(x)
    if a.dtype.kind not in "iub":
        raise TypeError(f"apply expects integers or an integer array, got dtype {a.dtype}")
    if a.dtype.kind == "i" and a.size and a.min() < 0:
        raise ValueError(f"negative index {a.min()}; expected 0 <= x < 2^{self.n}")
    r = self._apply_u64(np.ascontiguousarray(a, dtype=np.uint64))
    return r[()] if a.ndim == 0 else r


def _from_matrix(a, c: int = 0) -> Bmmc:
    """From an n×n 0/1 matrix (a NumPy array of bool, integer or float dtype, or nested lists): row i = output
    bit i, column j = input bit j; and the complement c. Every entry must equal 0 or 1 (1.0 is 1; 0.5 is
    refused)."""
    import numpy as np

    m = np.asarray(a)
    if m.ndim != 2:
        raise ValueError(f"matrix must be a 2-D n×n array, got {m.ndim} dimensions (shape {m.shape})")
    if m.dtype.kind not in "biuf":
        raise TypeError(f"matrix must hold 0/1 values (a bool, integer or float dtype), got dtype {m.dtype}")
    bad = np.argwhere((m != 0) & (m != 1))
    if len(bad):
        i, j = (int(k) for k in bad[0])
        raise ValueError(f"matrix entries must be 0 or 1, got {m[i, j].item()!r} at [{i}, {j}]")
    return Bmmc._from_matrix_u8(np.ascontiguousarray(m, dtype=np.uint8), int(c))


def _transpose_static(n: int, r: int) -> Bmmc:
    """Transpose of a row-major 2^r × 2^(n−r) matrix (the spec's transpose:R): transpose_matrix(n, r)."""
    return transpose_matrix(n, r)


Bmmc.apply = _apply
Bmmc.__call__ = _apply
Bmmc.from_matrix = staticmethod(_from_matrix)


# A Bmmc (like a DigitMap) is an immutable value: a copy is the object itself, as for tuples and strings. So
# copy.copy and copy.deepcopy (which torch.compile applies to what it traces) make no second native object.
def _same(self, memo=None):
    return self


Bmmc.__copy__ = _same
Bmmc.__deepcopy__ = _same
DigitMap.__copy__ = _same
DigitMap.__deepcopy__ = _same
# Named constructors are also reachable from the class, e.g. bmmc.Bmmc.bit_reverse(10).
for _name, _fn in [("identity", identity), ("bit_reverse", bit_reverse), ("reverse", reverse), ("rotate", rotate),
                   ("transpose", _transpose_static), ("gray", gray), ("gray_inverse", gray_inverse),
                   ("parm_matrix", parm_matrix), ("bit_permutation", bit_permutation),
                   ("axes_permutation", axes_permutation), ("random_bpc", random_bpc),
                   ("random_bmmc", random_bmmc), ("parse", parse_spec)]:
    setattr(Bmmc, _name, staticmethod(_fn))
del _name, _fn


# ---- frameworks --------------------------------------------------------------------------------------------

def _framework(x) -> str:
    mod = type(x).__module__.split(".")[0]
    return mod if mod in ("torch", "cupy", "numpy") else "other"


def _size(x) -> int:
    if _framework(x) == "torch":
        return x.numel()
    return int(x.size)


def _empty_like(x, shape=None):
    """An uninitialised array of x's dtype and device, with x's shape or `shape` (C-contiguous)."""
    fw = _framework(x)
    if fw == "torch":
        return x.new_empty(tuple(x.shape) if shape is None else tuple(shape))
    if fw == "cupy":
        import cupy

        return cupy.empty(x.shape if shape is None else shape, dtype=x.dtype)
    import numpy as np

    if fw == "numpy" or hasattr(x, "__array_interface__"):
        return np.empty(x.shape if shape is None else shape, dtype=x.dtype)
    raise TypeError(f"cannot allocate an output like a {type(x).__module__}.{type(x).__name__}: pass out=")


def _stream(x) -> int:
    """The framework's current CUDA stream for x's device as an integer (0: the legacy default stream)."""
    fw = _framework(x)
    if fw == "torch":
        import torch

        if x.is_cuda:
            return int(torch.cuda.current_stream(x.device).cuda_stream)
        return 0
    if fw == "cupy":
        import cupy

        return int(cupy.cuda.get_current_stream().ptr)
    return 0


def _as_array(x):
    """x itself when it is an array (NumPy, PyTorch, CuPy, anything with DLPack or the array interface); else x
    read as numpy.asarray reads it (a list, a tuple, a scalar), so that permute and transpose take what
    NumPy's own functions take and return a NumPy array for it."""
    if _framework(x) != "other" or hasattr(x, "__dlpack__") or hasattr(x, "__array_interface__"):
        return x
    import numpy as np

    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"x is a {type(x).__name__} that numpy.asarray cannot read ({e}); expected an array "
                        "(NumPy, PyTorch, CuPy or any DLPack array), or a list, tuple or scalar of numbers") from None
    if a.dtype.kind not in "biufc":
        raise TypeError(f"x is a {type(x).__name__} that reads as an array of dtype {a.dtype}; expected an array "
                        "(NumPy, PyTorch, CuPy or any DLPack array), or a list, tuple or scalar of numbers")
    return a


def _as_bmmc(spec, n: int) -> Bmmc:
    if isinstance(spec, str):
        # n comes from x's size here, so the spec's messages name that rather than an argument n.
        return _bmmc._parse_spec_named(spec, n, "n = log2(x.size)")
    if isinstance(spec, Bmmc):
        if spec.n != n:
            raise ValueError(f"the BMMC has n = {spec.n} bits but the array has 2^{n} elements; "
                             f"expected a BMMC on n = {n}")
        return spec
    raise TypeError(f"expected a spec string or a bmmc.Bmmc, got {type(spec).__name__}")


def _log2_size(x, what: str = "x") -> int:
    size = _size(x)
    if size <= 0 or size & (size - 1):
        raise ValueError(f"{what} has {size} elements (shape {tuple(x.shape)}); a BMMC permutes arrays of 2^n elements")
    return size.bit_length() - 1


def permute(x, spec, out=None, *, threads: int = 0):
    """out[A·i ⊕ c] = x[i] over the flat C-order index i; returns `out`.

    x: any C-contiguous DLPack array (NumPy on the CPU; PyTorch / CuPy on CPU or CUDA) of 2^n elements of
    1, 2, 4, 8 or 16 bytes; a list, tuple or scalar is read as numpy.asarray reads it (the result is then a
    NumPy array). spec: a spec string (n = log2(x.size) where it does not define n) or a Bmmc on n bits.
    out: same size, dtype and device as x (allocated like x, same shape, when None). CUDA arrays run
    on the framework's current stream (asynchronously, like the framework's own operations). threads: CPU
    threads (0: all cores). out=x permutes x in place (docs/DESIGN.md §8: no second array, no scratch; any
    BMMC, as one pass per involution factor); an out that only partly overlaps x is an error.

    Repeated calls with the same (shape, spec, dtype, device, threads) reuse a prepared permutation (see
    bmmc/_fast.py); inside torch.compile it calls the custom op torch.ops.bmmc.permute.
    """
    fast = _PERMUTE.get(type(x), _MISSING)
    if fast is _MISSING:
        _fast.learn(type(x))
        fast = _PERMUTE[type(x)]
    if fast is not None:
        r = fast(x, spec, out, threads)
        if r is not None:
            return r
    return _permute_general(x, spec, out, threads)


def _permute_general(x, spec, out, threads):
    x = _as_array(x)
    b = _as_bmmc(spec, _log2_size(x))
    if out is None:
        out = _empty_like(x)
    _run(b, x, out, threads)
    return out


def _threads(threads) -> int:
    """threads as an int: ints and integer-likes (numpy.int64, ...) are taken; bool and float are refused, and
    so are negative counts and counts beyond a C int."""
    if isinstance(threads, (bool, float)) or not hasattr(type(threads), "__index__"):
        raise TypeError(f"threads is a {type(threads).__name__}; expected an int (0: all cores)")
    t = operator.index(threads)
    if not 0 <= t < 1 << 31:
        raise ValueError(f"threads is {t}; expected 0 (all cores) or a positive count below 2**31")
    return t


def _run(b: Bmmc, x, out, threads: int) -> None:
    threads = _threads(threads)
    flags = getattr(out, "flags", None)
    if _framework(out) == "numpy" and not flags.writeable:
        raise ValueError("out is read-only; expected a writable array")
    # A torch tensor with its conjugate or negative bit set shows the conjugate / negation of what its memory
    # holds, and DLPack hands over the memory: the permutation would read (or write) the values unconjugated.
    for name, a in (("x", x), ("out", out)):
        if _framework(a) == "torch":
            if a.is_conj():
                raise ValueError(f"{name} has its conjugate bit set (a lazy conjugation, {name}.conj()); expected "
                                 f"a tensor whose memory holds its values: pass {name}.resolve_conj()")
            if a.is_neg():
                raise ValueError(f"{name} has its negative bit set (a lazy negation, e.g. torch._neg_view or the "
                                 f"imaginary part of a conjugate view); expected a tensor whose memory holds its "
                                 f"values: pass {name}.resolve_neg()")
    try:
        _bmmc._permute(b, x, out, _stream(x), threads)
    except TypeError as e:
        if "incompatible function arguments" not in str(e):
            raise
        # nanobind could not import an argument as a DLPack array: say which and what is expected.
        for name, a in (("x", x), ("out", out)):
            if not hasattr(a, "__dlpack__") and not hasattr(a, "__array_interface__"):
                raise TypeError(f"{name} is a {type(a).__name__}, not an array: expected a NumPy, PyTorch or "
                                "CuPy array (any DLPack-capable array)") from None
        raise TypeError(f"x (dtype {getattr(x, 'dtype', '?')}) or out (dtype {getattr(out, 'dtype', '?')}) cannot "
                        "be passed as a DLPack array: expected a dtype DLPack supports (ints, floats, complex, "
                        "bool) of 1, 2, 4, 8 or 16 bytes") from None


def swap_index_bits(x, pairs, mask=None, *, threads: int = 0):
    """Swap index bits in place, cuStateVec's custatevecSwapIndexBits: for every pair (i, j), bit i and bit j of
    the flat C-order index trade places. Returns x, permuted in place (no second array, no scratch).

    x: a C-contiguous writable DLPack array (NumPy; PyTorch / CuPy on CPU or CUDA) of 2^n elements of 1, 2, 4,
    8 or 16 bytes. pairs: disjoint (i, j) pairs of bit positions in 0..n-1. mask: optional {bit: 0 or 1}; only
    the elements whose index has those bits move (the mask may not name a swapped bit). CUDA arrays run on the
    framework's current stream. Example: a 2^30 complex64 state vector, swap_index_bits(sv, [(0, 29)]).
    """
    if _framework(x) == "other" and not hasattr(x, "__dlpack__") and not hasattr(x, "__array_interface__"):
        raise TypeError(f"x is a {type(x).__name__}, not an array: swap_index_bits permutes x in place, so it "
                        "expects a writable NumPy, PyTorch or CuPy array (any DLPack array); for a list, "
                        "pass numpy.asarray(x) and keep that array")
    n = _log2_size(x)
    threads = _threads(threads)
    try:
        pairs = [(int(i), int(j)) for i, j in pairs]
    except (TypeError, ValueError):
        raise TypeError(f"pairs must be (i, j) pairs of bit positions, got {pairs!r}") from None
    mask_bits = mask_value = 0
    for bit, value in (mask or {}).items():
        bit = int(bit)
        if not 0 <= bit < n:
            raise ValueError(f"mask bit {bit} is outside the array's {n} index bits")
        if value not in (0, 1, True, False):
            raise ValueError(f"mask value for bit {bit} must be 0 or 1, got {value!r}")
        mask_bits |= 1 << bit
        mask_value |= int(value) << bit
    flags = getattr(x, "flags", None)
    if _framework(x) == "numpy" and not flags.writeable:
        raise ValueError("x is read-only; swap_index_bits permutes it in place")
    _bmmc._swap_index_bits(x, pairs, mask_bits, mask_value, _stream(x), threads)
    return x


def _normalise_axes(ndim: int, axes) -> list:
    if axes is None:
        return list(range(ndim))[::-1]
    given = axes
    try:
        axes = [operator.index(a) for a in axes]  # ints and integer-likes; not floats, strings or complex
    except TypeError:
        raise TypeError(f"axes {given!r} must be a sequence of ints") from None
    if len(axes) != ndim:
        raise ValueError(f"axes {tuple(axes)} has {len(axes)} entries; expected one per dimension ({ndim})")
    norm = [a + ndim if a < 0 else a for a in axes]
    if sorted(norm) != list(range(ndim)):
        raise ValueError(f"axes {tuple(axes)} is not a permutation of 0..{ndim - 1}")
    return norm


def transpose(x, axes=None, out=None, *, flip=(), roll=(), threads: int = 0):
    """Axis permutation, flips and rolls of an array of any shape and dtype, written C-contiguous in one pass.

    Returns what ``numpy.roll(numpy.flip(numpy.transpose(x, axes), flip), roll, axis=range(x.ndim))`` made
    contiguous returns (x.permute(axes).contiguous() for a torch tensor without flip or roll): an array of
    shape [x.shape[a] for a in axes] (axes=None reverses them, negative axes count from the end). flip: output
    axes to reverse (negative allowed; one int or a sequence). roll: one shift per output axis (any integers,
    negative too; an output axis of extent d moves element i to (i + shift) mod d), or empty for none. So
    ``transpose(x, (1, 0), roll=(h // 2, w // 2))`` is numpy.fft.fftshift of the transposed image.

    x: a NumPy array (the CPU), a PyTorch tensor or CuPy array (CPU or CUDA, on the framework's current stream)
    of any extents, any rank (also above torch's 25) and any dtype (elements of any size; not Python objects);
    x may also be any permuted or flipped view of a dense array (a transposed tensor, a slice with step -1),
    read where it lies. A list, tuple or scalar x is read as numpy.asarray reads it. out, when given, must have
    the result's shape, x's dtype and device, and be C-contiguous; out=x permutes x in place, with no second
    array, where the result has x's shape and either the dimensions are powers of two without flip or roll (any
    such axis permutation) or the map is its own inverse (flips, rolls by half an extent, swaps of equal
    extents); anything else is a ValueError saying why. Every argument is checked before anything is written.
    An array of zero elements gives an empty result of the right shape.

    Repeated calls with the same (shape, axes, flip, roll, dtype, device, threads) reuse a prepared permutation
    (see bmmc/_fast.py and bmmc/_digit.py); inside torch.compile it calls the custom op torch.ops.bmmc.transpose.
    Example::

        img = numpy.zeros((64, 1080, 1920, 3), numpy.uint8)
        planar = bmmc.transpose(img, (0, 3, 1, 2), flip=(2,))   # channels first, upside down
    """
    fast = _TRANSPOSE.get(type(x), _MISSING)
    if fast is _MISSING:
        _fast.learn(type(x))
        fast = _TRANSPOSE[type(x)]
    if _plain_flip_roll(flip, roll):
        if fast is not None:
            r = fast(x, axes, out, threads)
            if r is not None:
                return r
    elif fast is _fast.torch_transpose and _fast._compiling():
        return _fast._torch_ops.traced_transpose(x, axes, out, flip, roll)
    return _transpose_general(x, axes, out, threads, flip, roll)


def _plain_flip_roll(flip, roll) -> bool:
    """No flip and no roll (the empty defaults, or None): the power-of-two transposes' own paths serve the call."""
    return (flip is None or (type(flip) in (tuple, list) and not flip)) and \
        (roll is None or (type(roll) in (tuple, list) and not roll))


def _bmmc_transposable(x, shape) -> bool:
    """A C-contiguous x whose dimensions are powers of two and whose dtype DLPack carries: the Bmmc path."""
    for d in shape:
        if d <= 0 or d & (d - 1):
            return False
    fw = _framework(x)
    if fw == "numpy":
        return x.flags.c_contiguous and _fast._numpy_elem_bytes(x.dtype) is not None
    if fw == "cupy":
        return x.flags.c_contiguous and _fast._numpy_elem_bytes(x.dtype) is not None
    if fw == "torch":
        return x.is_contiguous()
    return True  # another DLPack array: the general path below as ever


def _transpose_general(x, axes, out, threads, flip=(), roll=()):
    x = _as_array(x)
    shape = [int(d) for d in x.shape]
    if not _plain_flip_roll(flip, roll) or not _bmmc_transposable(x, shape):
        return _digit.run(x, out, axes, flip, roll, threads, _digit.describe_map(axes, flip, roll))
    axes = _normalise_axes(len(shape), axes)
    new_shape = [shape[a] for a in axes]
    b = axes_permutation(shape, axes) if shape else identity(0)
    if out is None:
        out = _empty_like(x, new_shape)
    elif hasattr(out, "shape") and [int(d) for d in out.shape] != new_shape:
        raise ValueError(f"out has shape {tuple(int(d) for d in out.shape)}; expected the result's shape "
                         f"{tuple(new_shape)} (x's shape {tuple(shape)} with axes {tuple(axes)})")
    _run(b, x, out, threads)
    return out


def contiguous(view, out=None, *, threads: int = 0):
    """A C-contiguous copy of `view`, written in one pass: ``numpy.ascontiguousarray(view)`` / ``view.contiguous()``.

    view: any permutation of the axes of a dense array with some axes reversed — a transposed or permuted
    NumPy array, PyTorch tensor or CuPy array, a slice with step -1, a Fortran-order array — of any shape, rank
    and dtype. bmmc finds the dense block behind it from its strides (bytes for NumPy and CuPy, elements for
    torch) and permutes that block into `out`. A view that is not such a permutation (a slice with step 2, a
    broadcast axis of stride 0) is a ValueError naming the axis and stride that break it. out: C-contiguous, of
    view's shape, dtype and device (allocated when None). Returns out. Example::

        y = bmmc.contiguous(x.transpose(2, 0, 1)[::-1])
    """
    if _TRANSPOSE.get(type(view), _MISSING) is _MISSING:
        _fast.learn(type(view))
    if _TRANSPOSE[type(view)] is _fast.torch_transpose and _fast._compiling() and out is None:
        return _fast._torch_ops.traced_contiguous(view)
    view = _as_array(view)
    k = len(view.shape)
    return _digit.run(view, out, list(range(k)), (), (), threads, lambda: "a copy of view")


def torch_ops():
    """Register (once) and return the PyTorch custom ops, torch.ops.bmmc: transpose(x, axes), permute(x,
    spec) and their out variants transpose_out / permute_out. Importing bmmc never imports torch: the ops are
    registered by this call, by the first bmmc call on a torch tensor, or at import when torch was already
    imported."""
    import torch

    if _fast._torch is None:
        _fast._init_torch(torch)
    if _fast._torch_ops is None:
        raise RuntimeError(f"torch {torch.__version__} has no torch.library.custom_op (needs torch >= 2.4); "
                           "bmmc.transpose / bmmc.permute still work on tensors, outside torch.compile")
    return torch.ops.bmmc


_MISSING = object()
from . import _digit, _fast  # noqa: E402

_TRANSPOSE = _fast.TRANSPOSE  # type(x) -> fast-path handler (None: the general path); filled by _fast.learn
_PERMUTE = _fast.PERMUTE

if "torch" in sys.modules and hasattr(sys.modules["torch"], "Tensor"):
    try:
        _fast.learn(sys.modules["torch"].Tensor)
    except Exception:  # noqa: BLE001 - never fail `import bmmc` because of torch; the general path remains
        pass
