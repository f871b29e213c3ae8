"""Any-shape permutations of arrays: bmmc.transpose of any extents with flips and rolls, and bmmc.contiguous.

A call is described by one bmmc.DigitMap (bmmc/core/digit_map.hpp) from a dense block of memory to the C-order
result: the block is x itself when x is C-contiguous, or the dense block that a permuted / flipped view x shows
(found from x's strides, _dense_block); the map is x's view map followed by the caller's transpose, flip and
roll. Everything is checked here before the library is called, so that an error leaves `out` as it was; the
map then runs through a prepared Permuter of the front door (python/src/prepared.hpp, made by
Permuter(DigitMap, elem_bytes, options)) kept in a small cache keyed by (block shape, axes, flips, rolls, element
bytes, device, threads, in place). NumPy arrays run on the CPU, PyTorch tensors and CuPy arrays on their own
device (CUDA on the framework's current stream). Elements of any size run: the native part treats sizes other
than 1, 2, 4, 8 and 16 bytes as bytes with one more, innermost axis. Arrays of zero elements return an empty
result without calling the library.
"""

from __future__ import annotations

import operator

from . import _bmmc

DigitMap = _bmmc.DigitMap

CAPACITY = 256
NOGIL_BYTES = 1 << 18
_ONE_THREAD_BYTES = 512 << 10  # see bmmc/_fast.py: arrays below this run on one thread when threads = 0
_prepared: dict = {}


def _framework(x) -> str:
    mod = type(x).__module__.split(".")[0]
    return mod if mod in ("torch", "cupy", "numpy") else "other"


class _Array:
    """What a call needs of one array: framework, data pointer, shape, strides (in elements, and as the framework
    gives them with their unit, for messages), element bytes, device (-1: the CPU) and C-contiguity."""

    __slots__ = ("fw", "ptr", "shape", "strides", "raw", "unit", "itemsize", "device", "contiguous", "dtype")


def _describe(x, what: str) -> _Array:
    a = _Array()
    a.fw = fw = _framework(x)
    if fw == "numpy":
        dt = x.dtype
        if dt.hasobject:
            raise TypeError(f"{what} has dtype {dt} (Python object references); expected an array of plain values")
        a.ptr = x.__array_interface__["data"][0]
        a.raw, a.unit, a.itemsize, a.device = tuple(x.strides), "bytes", dt.itemsize, -1
        a.contiguous = x.flags.c_contiguous
    elif fw == "torch":
        import torch

        if x.layout is not torch.strided:
            raise TypeError(f"{what} has layout {x.layout}; expected a strided (dense) tensor")
        if x.is_conj():
            raise ValueError(f"{what} has its conjugate bit set (a lazy conjugation, {what}.conj()); expected a "
                             f"tensor whose memory holds its values: pass {what}.resolve_conj()")
        if x.is_neg():
            raise ValueError(f"{what} has its negative bit set (a lazy negation); expected a tensor whose memory "
                             f"holds its values: pass {what}.resolve_neg()")
        dev = x.device
        if dev.type not in ("cpu", "cuda"):
            raise ValueError(f"{what} is on {dev}; expected a CPU or CUDA tensor")
        a.ptr = x.data_ptr()
        a.raw, a.unit, a.itemsize = tuple(x.stride()), "elements", x.element_size()
        a.device = -1 if dev.type == "cpu" else (dev.index if dev.index is not None else torch.cuda.current_device())
        a.contiguous = x.is_contiguous()
    elif fw == "cupy":
        a.ptr = x.data.ptr
        a.raw, a.unit, a.itemsize, a.device = tuple(x.strides), "bytes", x.dtype.itemsize, x.device.id
        a.contiguous = x.flags.c_contiguous
    else:
        raise TypeError(f"{what} is a {type(x).__module__}.{type(x).__name__}; expected a NumPy array, a PyTorch "
                        "tensor or a CuPy array")
    a.dtype = x.dtype
    a.shape = tuple(int(d) for d in x.shape)
    if a.unit == "bytes":
        a.strides = tuple(s // a.itemsize if s % a.itemsize == 0 else None for s in a.raw)
    else:
        a.strides = a.raw
    return a


def _data_ptr(a, fw: str) -> int:
    if fw == "numpy":
        return a.__array_interface__["data"][0]
    if fw == "torch":
        return a.data_ptr()
    return a.data.ptr


def _dense_block(a: _Array, what: str):
    """(offset in elements, block shape, axes, flips): the view `a` is the dense C-order block of that shape at
    a.ptr + offset·itemsize, transposed by axes (view axis j is block axis axes[j]) and flipped on the view axes
    with negative strides. Raises ValueError naming the stride of a view that is no such thing."""
    shape, k = a.shape, len(a.shape)
    if a.contiguous:
        return 0, list(shape), list(range(k)), [False] * k
    big = [j for j in range(k) if shape[j] != 1]
    for j in big:
        if a.strides[j] is None:
            raise ValueError(f"{what} has stride {a.raw[j]} ({a.unit}) on axis {j}, not a multiple of its "
                             f"{a.itemsize}-byte elements; expected a permuted or flipped view of a dense array")
    order = sorted(big, key=lambda j: abs(a.strides[j]), reverse=True)  # block axes, outermost first
    expect = 1
    for j in reversed(order):
        if abs(a.strides[j]) != expect:
            unit = a.itemsize if a.unit == "bytes" else 1
            raise ValueError(f"{what} (shape {shape}, strides {a.raw} in {a.unit}) is not a permuted or flipped "
                             f"view of a dense array: axis {j} has stride {a.raw[j]} where ±{expect * unit} was "
                             f"expected; pass a copy (its .copy() / .contiguous()) instead")
        expect *= shape[j]
    unit_axes = [j for j in range(k) if shape[j] == 1]
    block_of = {j: q for q, j in enumerate(order + unit_axes)}
    offset = sum((shape[j] - 1) * a.strides[j] for j in big if a.strides[j] < 0)
    return (offset, [shape[j] for j in order + unit_axes], [block_of[j] for j in range(k)],
            [j in big and a.strides[j] < 0 for j in range(k)])


def dense_view(x) -> bool:
    """Is x (a NumPy array, torch tensor or CuPy array) a permuted or flipped view of a dense array?"""
    try:
        _dense_block(_describe(x, "x"), "x")
    except (TypeError, ValueError):
        return False
    return True


def normalise_axes(k: int, axes) -> list:
    if axes is None:
        return list(range(k - 1, -1, -1))
    from . import _normalise_axes

    return _normalise_axes(k, axes)


def normalise_flip(k: int, flip) -> list:
    """flip (output axes, negative ones counted from the end) as one bool per output axis."""
    if flip is None:
        return [False] * k
    if isinstance(flip, (str, bytes)) or not hasattr(flip, "__iter__"):
        flip = (flip,)  # one axis, as numpy.flip takes it
    flags = [False] * k
    for f in flip:
        if isinstance(f, (bool, float)) or not hasattr(type(f), "__index__"):
            raise TypeError(f"flip {flip!r} must be output axes (ints)")
        j = operator.index(f)
        if not -k <= j < k:
            raise ValueError(f"flip names axis {j} but the result has {k} axes; expected axes in {-k}..{k - 1}")
        j %= k
        if flags[j]:
            raise ValueError(f"flip names axis {j} twice; expected each output axis at most once")
        flags[j] = True
    return flags


def normalise_roll(out_shape, roll) -> list:
    """roll (one shift per output axis, any integers, or empty) as shifts in [0, extent)."""
    k = len(out_shape)
    if roll is None:
        return [0] * k
    if isinstance(roll, (str, bytes)) or not hasattr(roll, "__iter__"):
        raise TypeError(f"roll {roll!r} must be a sequence of shifts, one per output axis")
    shifts = list(roll)
    if not shifts:
        return [0] * k
    if len(shifts) != k:
        raise ValueError(f"roll has {len(shifts)} shifts but the result has {k} axes (shape {tuple(out_shape)}); "
                         "expected one shift per output axis, or none")
    r = []
    for s, d in zip(shifts, out_shape):
        if isinstance(s, (bool, float)) or not hasattr(type(s), "__index__"):
            raise TypeError(f"roll {tuple(shifts)!r} must hold integer shifts")
        r.append(operator.index(s) % d if d else 0)
    return r


def _check_out(out, x, xa: _Array, out_shape, what_map) -> _Array:
    if _framework(out) != xa.fw:
        raise TypeError(f"out is a {type(out).__module__}.{type(out).__name__} but x is a {xa.fw} array; expected "
                        f"out of x's kind")
    oa = _describe(out, "out")
    if oa.shape != tuple(out_shape):
        raise ValueError(f"out has shape {oa.shape}; expected the result's shape {tuple(out_shape)} ({what_map()})")
    if out.dtype != x.dtype:
        raise TypeError(f"out has dtype {out.dtype} but x has dtype {x.dtype}; expected out of x's dtype, {x.dtype}")
    if oa.device != xa.device:
        raise ValueError(f"x is on {_device_name(xa)} but out is on {_device_name(oa)}; expected the same device")
    if not oa.contiguous:
        raise ValueError(f"out (shape {oa.shape}, strides {oa.raw} in {oa.unit}) is not C-contiguous; expected a "
                         "C-contiguous out")
    if xa.fw == "numpy" and not out.flags.writeable:
        raise ValueError("out is read-only; expected a writable array")
    if xa.fw == "torch" and out.requires_grad:
        raise ValueError("out requires grad; expected a tensor that autograd does not track (use torch.no_grad() "
                         "or out.detach())")
    return oa


def _device_name(a: _Array) -> str:
    return "the CPU" if a.device < 0 else f"CUDA device {a.device}"


def _empty(x, shape):
    fw = _framework(x)
    if fw == "torch":
        return x.new_empty(tuple(shape))
    if fw == "cupy":
        import cupy

        with cupy.cuda.Device(x.device.id):
            return cupy.empty(tuple(shape), dtype=x.dtype)
    import numpy as np

    return np.empty(tuple(shape), dtype=x.dtype)


def _stream(xa: _Array, x) -> int:
    if xa.device < 0:
        return 0
    if xa.fw == "torch":
        import torch

        return int(torch.cuda.current_stream(x.device).cuda_stream)
    import cupy

    return int(cupy.cuda.get_current_stream().ptr)


def _threads(threads) -> int:
    if type(threads) is int and 0 <= threads < 1 << 31:
        return threads
    from . import _threads as check

    return check(threads)


def prepared(shape, axes, flips, rolls, itemsize: int, device: int, threads: int, in_place: bool):
    """The prepared Permuter of a map (made once per key, kept in a bounded cache)."""
    key = (tuple(shape), tuple(axes), tuple(flips), tuple(rolls), itemsize, device, threads, in_place)
    p = _prepared.get(key)
    if p is None:
        size = 1
        for d in shape:
            size *= d
        t = 1 if device < 0 and threads == 0 and size * itemsize < _ONE_THREAD_BYTES else threads
        m = DigitMap(list(shape), list(axes), list(flips), list(rolls))
        p = _bmmc._Prepared(m, itemsize, device, t, NOGIL_BYTES, in_place)
        if len(_prepared) >= CAPACITY:
            try:
                del _prepared[next(iter(_prepared))]
            except (StopIteration, KeyError, RuntimeError):
                pass
        _prepared[key] = p
    return p


def clear() -> None:
    _prepared.clear()


def run(x, out, axes, flip, roll, threads, what_map):
    """out = roll(flip(transpose(x, axes), flip), roll) made C-contiguous, for any x that is a permuted or flipped
    view of a dense array (bmmc.transpose and bmmc.contiguous). Validates everything before anything is written.
    what_map() names the map in messages."""
    xa = _describe(x, "x")
    k = len(xa.shape)
    axes = normalise_axes(k, axes)
    out_shape = [xa.shape[a] for a in axes]
    flips = normalise_flip(k, flip)
    rolls = normalise_roll(out_shape, roll)
    threads = _threads(threads)
    offset, block, view_axes, view_flips = _dense_block(xa, "x")
    if out is None:
        out = _empty(x, out_shape)
        out_ptr = _data_ptr(out, xa.fw)
        in_place = False
    else:
        oa = _check_out(out, x, xa, out_shape, what_map)
        out_ptr = oa.ptr
        in_place = out is x or (out_ptr == xa.ptr and xa.ptr != 0)
    size = 1
    for d in xa.shape:
        size *= d
    if size == 0:
        return out
    # The whole map: from the block to the result (x's view map, then the caller's transpose, flip and roll).
    total_axes = [view_axes[a] for a in axes]
    total_flips = [view_flips[a] != f for a, f in zip(axes, flips)]
    if in_place:
        m = DigitMap(list(xa.shape), axes, flips, rolls)
        if not xa.contiguous or list(out_shape) != list(xa.shape) or not m.is_involution():
            raise ValueError(f"out is x: in place needs a C-contiguous x and a map that is its own inverse on x's "
                             f"shape {xa.shape} (flips, rolls by half an extent, transposes of equal extents), but "
                             f"{what_map()} is not; pass another out (or none)")
    p = prepared(block, total_axes, total_flips, rolls, xa.itemsize, xa.device, threads, in_place)
    stream = _stream(xa, x)
    if in_place:
        p.call_in_place(xa.ptr, stream)
    else:
        p(xa.ptr + offset * xa.itemsize, out_ptr, stream)
    return out


def describe_map(axes, flip, roll):
    """A callable naming the map for messages (made only when one is raised)."""
    return lambda: _describe_map(axes, flip, roll)


def _describe_map(axes, flip, roll) -> str:
    parts = [f"axes {tuple(axes) if axes is not None else 'reversed'}"]
    if flip not in (None, ()) and flip != []:
        parts.append(f"flip {flip!r}")
    if roll not in (None, ()) and roll != []:
        parts.append(f"roll {roll!r}")
    return ", ".join(parts)
