"""The fast path of bmmc.permute and bmmc.transpose: prepared permutations, found by the call's key.

A call of bmmc.transpose(x, axes) through the general path builds a Bmmc (axes_permutation), exports x and
out through DLPack, validates both and looks the Permuter up in the library's cache: tens of µs of host time
per call, while the GPU work of a small array is a few µs. Everything but the pointers and the stream
depends only on (shape, axes or spec, dtype, device, threads), so it is computed once per such key and kept;
a call that hits reads the pointers, the stream and a few flags the cheapest way its framework allows and
calls the prepared native Permuter (bmmc._bmmc._Prepared) with raw integers.

Where entries live. The Permuters are made and kept by the library's PermuterCache (LRU, shared with the
general path); an entry holds a _Prepared that shares one (an evicted Permuter lives on while an entry does).
NumPy entries are in the native NumPy table (python/src/numpy_fast.hpp), which serves NumPy hits in one C++
call and hands everything else to the NumPy handlers here; those look the call up in the same table (with axes
made a tuple of ints) and fill it. torch and CuPy entries are in this module's dict `_entries`: their hit path
reads torch / CuPy objects (device, autograd and conj bits, the current stream, an allocation template), which
the native table — built on NumPy's C API alone, without torch or CuPy — cannot, so a key for them must hold
those frameworks' objects.

torch / CuPy key (the first element tags the operation and the framework, so entries of different frameworks or
of transpose and permute never mix):
    (tag, x.shape, axes or spec, x.dtype, device, threads)
  - axes: the caller's axes as a tuple (None for the default), spec: the caller's string or Bmmc;
  - device: torch.device / the CuPy device id;
  - threads: the caller's CPU thread count (it changes the CPU Permuter; on CUDA it only splits entries).
The entry holds the prepared native call, the output shape, and what the per-call checks need. It is built
and validated on a miss (dtype kind and size, axes a permutation — a transpose whose dimensions are not all powers
of two is prepared as a bmmc.DigitMap, see bmmc/_digit.py —, the spec parsed,
the device type); anything the fast path does not handle returns None and the caller takes the general path,
which raises exactly the errors it always raised. The per-call checks are only those that can differ
between calls with one key: x's contiguity (and, for torch, autograd / conj / neg bits), `out` (type,
shape, dtype, device, contiguity, writability), the pointers' alignment; the native Permuter itself checks
null and overlapping (aliased) pointers. The stream is read on every call, never cached.

The dict is bounded (CAPACITY entries, oldest inserted out first: a hit costs one dict lookup, no LRU
bookkeeping), as is the native table (cleared when full). An entry dropped from either is rebuilt on its next
use from the PermuterCache, without planning again.

torch.compile: the torch handlers start with torch.compiler.is_compiling(), and while Dynamo traces they
call the custom ops torch.ops.bmmc.transpose / permute (bmmc/_torch_ops.py) instead, so bmmc.transpose and
bmmc.permute can be used inside compiled functions (fullgraph=True too).
"""

from __future__ import annotations

import atexit
import operator
import sys

from . import _bmmc

CAPACITY = 512

_entries: dict = {}
_index = operator.index
_Bmmc = _bmmc.Bmmc


def _plain_spec(spec) -> bool:
    """A spec the cache keys: an exact str or Bmmc. An object merely equal to one (a str subclass, anything with
    its own __eq__) could find another spec's entry; the general path validates it instead."""
    return type(spec) is str or type(spec) is _Bmmc

# Tags: the first element of every key (NumPy's entries are in the native table, not here).
_T_TORCH, _P_TORCH, _T_CUPY, _P_CUPY = range(1, 5)

# CPU calls on arrays of at least this many bytes release the GIL (see python/src/prepared.hpp).
NOGIL_BYTES = 1 << 18
# The CPU executor runs arrays below this size on one thread when threads = 0 (src/cpu/executor.cpp,
# kBytesPerThread). Working that out costs the library ~20 µs per call (std::thread::hardware_concurrency()
# reads sysfs every time), so for such arrays the fast path asks for the 1 thread explicitly: same result.
_ONE_THREAD_BYTES = 512 << 10


def _cpu_threads(threads: int, n: int, elem_bytes: int) -> int:
    return 1 if threads == 0 and (elem_bytes << n) < _ONE_THREAD_BYTES else threads


def clear() -> None:
    """Drop every cached entry: torch's and CuPy's here, NumPy's in the native table (the library's Permuter
    cache keeps its Permuters: an entry made again takes its Permuter from there, without planning)."""
    _entries.clear()
    _bmmc._np_clear()


def stats() -> dict:
    """size / capacity: torch and CuPy entries (this module's dict); native_numpy / native_numpy_capacity: the
    native NumPy table's; permuters: the library's Permuter cache (hits, misses, evictions, size, capacity)."""
    return {"size": len(_entries), "capacity": CAPACITY, "native_numpy": _bmmc._np_size(),
            "native_numpy_capacity": _bmmc._np_capacity(), "permuters": _bmmc._permuter_cache_stats()}


def _insert(key, entry):
    if len(_entries) >= CAPACITY:
        try:
            del _entries[next(iter(_entries))]
        except (StopIteration, KeyError, RuntimeError):  # another thread got there first
            pass
    _entries[key] = entry
    return entry


def _pow2_shape(shape) -> bool:
    for d in shape:
        if d <= 0 or d & (d - 1):
            return False
    return True


def _log2_numel(shape) -> int:
    size = 1
    for d in shape:
        size *= d
    return size.bit_length() - 1


def _transpose_plan(shape, axes):
    """(Bmmc, output shape) for transpose(shape, axes) — a DigitMap in place of the Bmmc where an extent is not a
    power of two —, or None where the general path must decide (errors, zero elements)."""
    from . import _normalise_axes, axes_permutation, identity

    shape = [int(d) for d in shape]
    try:
        norm = _normalise_axes(len(shape), axes)
    except (TypeError, ValueError):
        return None
    if _pow2_shape(shape):
        b = axes_permutation(shape, norm) if shape else identity(0)
    elif all(d > 0 for d in shape):
        b = _bmmc.DigitMap.transpose(shape, norm)  # any extents: the any-shape class (bmmc/_digit.py)
    else:
        return None  # zero elements: the general path returns an empty result
    return b, tuple(shape[a] for a in norm)


def _permute_bmmc(spec, n):
    """The Bmmc of a permute call, or None where the general path must decide (errors)."""
    from . import Bmmc, parse_spec

    if isinstance(spec, str):
        try:
            return parse_spec(spec, n)
        except ValueError:
            return None
    if isinstance(spec, Bmmc) and spec.n == n:
        return spec
    return None


def _plain_threads(threads) -> bool:
    """An int that the library takes as a thread count (a C int); anything else is the general path's to refuse."""
    return type(threads) is int and 0 <= threads < 1 << 31


def _transpose_miss(shape, axes, threads, make_entry):
    """A transpose cache miss, the same for every framework: the Bmmc and output shape of these axes (None:
    leave the call to the general path, which says what is wrong), then make_entry(n, bmmc, out_shape)."""
    plan = _transpose_plan(shape, axes)
    if plan is None or not _plain_threads(threads):
        return None
    return make_entry(_log2_numel(shape), plan[0], plan[1])


def _permute_miss(shape, spec, threads, make_entry):
    """A permute cache miss, the same for every framework: the Bmmc for this shape (None: leave the call to
    the general path, which says what is wrong), then the framework's entry make_entry(n, bmmc)."""
    if not _pow2_shape(shape) or not _plain_threads(threads):
        return None
    n = _log2_numel(shape)
    b = _permute_bmmc(spec, n)
    return None if b is None else make_entry(n, b)


def _axes_key(axes):
    """The caller's axes as a key part: None, or a tuple or list as a tuple of ints. Anything else — an iterator
    (reading it would use it up), items that are not integers (1.0 and 1+0j equal 1 but are refused) — raises
    TypeError: the general path decides."""
    if axes is None:
        return None
    if type(axes) is not tuple and type(axes) is not list:
        raise TypeError("axes: the general path")
    return tuple(map(_index, axes))


# ---- NumPy -------------------------------------------------------------------------------------------------

_np_ndarray = None
_np_empty = None


def _numpy_elem_bytes(dtype):
    """Element bytes when the general path takes this NumPy dtype (DLPack kinds, native order), else None."""
    kind, size = dtype.kind, dtype.itemsize
    if kind not in "biufc" or not (dtype.isnative or size == 1) or dtype.fields is not None:
        return None
    if (kind == "f" and size > 8) or (kind == "c" and size > 16):  # long double: not IEEE, not in DLPack
        return None
    return size if size in (1, 2, 4, 8, 16) else None


def _prepared_of(n, b, eb, device, threads):
    """The prepared call of an entry: for a Bmmc on n bits its Permuter from the library's PermuterCache; for a
    DigitMap (a transpose of other extents) a Permuter of the front door's any-shape constructor. None: the
    general path decides."""
    if type(b) is _bmmc.DigitMap:
        t = 1 if device < 0 and threads == 0 and b.size * eb < _ONE_THREAD_BYTES else threads
        return _bmmc._Prepared(b, eb, device, t, NOGIL_BYTES, False)
    if b.n != n:
        return None
    return _bmmc._Prepared(b, eb, device, _cpu_threads(threads, n, eb) if device < 0 else threads, NOGIL_BYTES)


def _numpy_prepared(n, b, dtype, threads):
    """The prepared call of a NumPy entry, or None."""
    eb = _numpy_elem_bytes(dtype)
    return None if eb is None else _prepared_of(n, b, eb, -1, threads)


def _numpy_run(prep, shape, x, out):
    """The per-call part of a NumPy entry; None: take the general path."""
    if out is None:
        out = _np_empty(shape, x.dtype)  # x's own dtype object (an equal one may have made the entry)
    elif type(out) is not _np_ndarray or out.shape != shape or (out.dtype is not x.dtype and out.dtype != x.dtype):
        return None
    # call_buffers refuses (False) a non-contiguous x, a read-only or non-contiguous out, a wrong size.
    return out if prep.call_buffers(x, out) else None


# The NumPy handlers sit behind native ones (_bmmc._np_transpose / _np_permute, python/src/numpy_fast.hpp),
# which serve the calls they have an entry for and hand everything else here. NumPy entries live only in that
# native table (no dict here): these handlers look the call up there with its argument made plain (axes as a
# tuple of ints), and on a miss build and validate the entry — its Permuter comes from the library's
# PermuterCache, so an entry dropped from the table (full, cleared) is rebuilt without planning again — and
# hand it to the table with the operation (0 permute, 1 transpose) and the output's shape.

def numpy_transpose(x, axes, out, threads):
    # In place (the general path runs identical buffers in place) and a thread count that is not an int (2.0
    # would find the entry of 2): the general path.
    if out is x or type(threads) is not int:
        return None
    try:
        plain = _axes_key(axes)
    except TypeError:  # axes not iterable, or not integers: the general path says what is wrong
        return None
    e = _bmmc._np_lookup(1, x, plain, threads)
    if e is None:
        if not x.flags.c_contiguous:  # no entry could serve it: the general path decides
            return None
        e = _transpose_miss(x.shape, axes, threads,
                            lambda n, b, shape: (_numpy_prepared(n, b, x.dtype, threads), shape))
        if e is None or e[0] is None:
            return None
        _bmmc._np_remember(1, x, plain, threads, e[0], e[1])
    return _numpy_run(e[0], e[1], x, out)


def numpy_permute(x, spec, out, threads):
    # In place (bmmc::permute runs identical buffers in place) and a thread count that is not an int: the
    # general path.
    if out is x or type(threads) is not int or not _plain_spec(spec):
        return None
    e = _bmmc._np_lookup(0, x, spec, threads)
    if e is None:
        if not x.flags.c_contiguous:  # no entry could serve it: the general path decides
            return None
        prep = _permute_miss(x.shape, spec, threads, lambda n, b: _numpy_prepared(n, b, x.dtype, threads))
        if prep is None:
            return None
        e = (prep, x.shape)
        _bmmc._np_remember(0, x, spec, threads, prep, x.shape)
    return _numpy_run(e[0], e[1], x, out)


# ---- PyTorch -----------------------------------------------------------------------------------------------

_torch = None
_torch_tensor = None
_torch_elem_bytes: dict = {}
_compiling = None
_torch_stream = None
_torch_ops = None
_torch_empty_like = None


def _release_at_exit() -> None:
    """Drop, while the interpreter still runs, every reference that this package's caches and torch's
    process-wide state may hold to this module's native objects: the entries here (prepared calls, shape
    templates), the any-shape Permuters (bmmc/_digit.py), NumPy's native table, and torch's compile state —
    Dynamo's compiled code and guards (a guard on a Bmmc keeps the Bmmc it compares with), CUDA graph trees
    (the recorded callables and what they reach) and Inductor's loaded modules. torch keeps some of those in
    C++ objects that are never destroyed (a code object's extra data, thread-local storage), so anything they
    hold outlives the interpreter, and nanobind reports each native object still alive at its own teardown as a
    leak ("nanobind: leaked 1 instances ... leaked 33 functions"). Compiled code also keeps the module globals of
    what it compiled (a script's own Bmmc) for the interpreter's life, which no release can drop: where Dynamo is
    loaded, the handler turns nanobind's leak report off. Each release runs on its own, so one that
    fails (an exit handler must not raise) leaves the others to run. Registered when bmmc first sees a torch
    tensor; python/tests check that it leaves a Bmmc used by compiled code with no reference but the caller's."""
    compiled = _torch_compiled()
    _entries.clear()
    _bmmc._np_clear()
    digit = sys.modules.get(__package__ + "._digit")
    if digit is not None:
        digit.clear()
    for release in _TORCH_RELEASES:
        try:
            release()
        except Exception:  # noqa: BLE001 - at worst nanobind reports a leak; the next release still runs
            pass
    # What the releases cannot reach: compiled code (Dynamo's cache entries, held by code objects' extra data)
    # keeps the module globals of the functions it compiled — `b = bmmc.Bmmc(...)` in a script's __main__ — for
    # as long as the interpreter exists, so nanobind, which checks at its own teardown, would report the caller's
    # own Bmmc as leaked (seen on the H200: no report when the script deletes its global, one when it does not).
    # Where torch.compile traced bmmc's ops, that report says nothing about bmmc: it is turned off.
    if compiled:
        _bmmc._set_leak_warnings(False)


_traced = False  # a fake (meta) implementation of bmmc's torch ops ran: torch.compile traced bmmc


def note_traced() -> None:
    """Called by the fake implementations of bmmc's torch ops (bmmc/_torch_ops.py), which run only while torch
    traces (torch.compile, FakeTensorMode): compiled code that calls bmmc may exist from then on."""
    global _traced
    _traced = True


def _torch_compiled() -> bool:
    """Whether torch.compile traced bmmc's ops in this process. (Dynamo being loaded is no sign: registering the
    ops loads it; nor are its frame counters: torch 2.11 on the H200 left them empty after torch.compile ran.)"""
    return _traced


def _dynamo_reset() -> None:
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None:
        dynamo.reset()


def _cudagraph_trees_reset() -> None:
    # torch._dynamo.reset() does this only where CUDA is available / initialised (it differs by version) and
    # only when nothing before it in reset() raised: here it runs whenever the trees' module was loaded.
    trees = sys.modules.get("torch._inductor.cudagraph_trees")
    if trees is not None:
        trees.reset_cudagraph_trees()


def _inductor_modules_clear() -> None:
    codecache = sys.modules.get("torch._inductor.codecache")
    if codecache is not None:
        codecache.PyCodeCache.cache_clear()


def _guard_trees_release() -> None:
    # A guard tree outlives reset() where something still holds its Python wrapper: the weakref.finalize
    # callbacks Dynamo puts on guarded objects (bound to the CheckFunctionManager, so the wrapper stays until
    # the object dies), or a cycle through the C++ tree, which the garbage collector cannot see into. An
    # EQUALS_MATCH guard's tree keeps the value it compares with — a Bmmc read by compiled code. Each wrapper
    # left gets empty trees, which releases those values whatever still holds the wrapper.
    import gc

    guards = sys.modules.get("torch._dynamo.guards")
    wrapper = getattr(guards, "GuardManagerWrapper", None)
    if wrapper is None:
        return
    gc.collect()
    for obj in gc.get_objects():
        if type(obj) is wrapper:
            for name in ("root", "diff_guard_root"):
                tree = getattr(obj, name, None)
                if tree is not None:
                    setattr(obj, name, type(tree)())


def _collect() -> None:
    import gc

    gc.collect()  # cycles through what the releases above let go of


_TORCH_RELEASES = (_dynamo_reset, _cudagraph_trees_reset, _inductor_modules_clear, _guard_trees_release, _collect)


def _init_torch(torch) -> None:
    global _torch, _torch_tensor, _compiling, _torch_stream, _torch_ops, _torch_empty_like
    if _torch is None:
        atexit.register(_release_at_exit)
    _torch = torch
    _torch_tensor = torch.Tensor
    _torch_empty_like = torch.empty_like
    for name in ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
                 "bfloat16", "float32", "float64", "complex64", "complex128"):
        dt = getattr(torch, name, None)
        if dt is not None:
            _torch_elem_bytes[dt] = dt.itemsize if hasattr(dt, "itemsize") else torch.empty(0, dtype=dt).element_size()
    comp = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    if comp is None:
        comp = getattr(getattr(torch, "_dynamo", None), "is_compiling", None)
    _compiling = comp if comp is not None else (lambda: False)
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        _torch_stream = raw  # (device index) -> cudaStream_t as an int: what Inductor's generated code uses
    else:
        _torch_stream = lambda index: torch.cuda.current_stream(index).cuda_stream  # noqa: E731
    try:
        from . import _torch_ops as ops
    except Exception:  # noqa: BLE001 - torch too old for torch.library.custom_op: no ops, the fast path stays
        ops = None
    _torch_ops = ops


def _torch_entry(key, x, n, b, shape, threads):
    """Validate once per key: strided layout, a dtype DLPack takes, a CPU or CUDA device."""
    eb = _torch_elem_bytes.get(x.dtype)
    dev = x.device
    if eb is None or x.layout is not _torch.strided or dev.type not in ("cpu", "cuda"):
        return None
    if not _plain_threads(threads):
        return None
    index = -1 if dev.type == "cpu" else (dev.index if dev.index is not None else _torch.cuda.current_device())
    prep = _prepared_of(n, b, eb, index, threads)
    if prep is None:
        return None
    # empty_like(x) gives x's strides, which for a contiguous x with a dimension of 1 may be odd ones (a stride
    # of 999 on a size-1 axis is contiguous): such shapes allocate through the template, as transposes do.
    same = tuple(shape) == tuple(x.shape) and 1 not in tuple(x.shape)
    return _insert(key, (prep, None if same else shape, prep.alignment - 1, index, x.dtype.is_complex,
                         None if same else _shape_template(x, shape)))


def _shape_template(x, shape):
    """A one-element tensor like x broadcast to `shape`, whose empty_like is a contiguous tensor of that shape, or
    None where it is not (then the output is allocated with x.new_empty(shape)).

    Why: on the H100 host torch.empty_like costs ~1.8 µs a call and x.new_empty(shape) ~2.4 µs (it parses the
    shape and the options anew; BENCHMARKS.md, issue 17 session 14), of a cached call's ~9 µs. empty_like of a tensor that is not dense
    (strides 0) lays out contiguously in its shape; that is checked here once, so no torch version can slip a
    channels-last or strided output past the cache."""
    if x.is_cuda and _torch.cuda.is_current_stream_capturing():
        return None  # made inside CUDA graph capture, the template would hold the graph's private pool
    try:
        t = x.new_empty(()).expand(shape)
        probe = _torch_empty_like(t)
    except Exception:  # noqa: BLE001 - any surprise: the plain allocation
        return None
    ok = (probe.is_contiguous() and tuple(probe.shape) == tuple(shape) and probe.dtype == x.dtype
          and probe.device == x.device and not probe.requires_grad)
    return t if ok else None


def _torch_run(e, x, out):
    """The per-call part of a cached torch entry: what can change under one key is checked, then the prepared
    permutation runs on the tensors' pointers and the current stream. None: take the general path."""
    prep, shape, amask, index, cplx, like = e
    if not x.is_contiguous() or x.requires_grad or x.is_neg() or (cplx and x.is_conj()):
        return None
    if out is None:
        # empty_like of x where the shape is x's (x is contiguous, so its result is), of the entry's shape
        # template otherwise; new_empty(shape) only where the template was refused (_shape_template says why).
        if shape is None:
            out = _torch_empty_like(x)
        elif like is not None:
            out = _torch_empty_like(like)
        else:
            out = x.new_empty(shape)
    elif not _torch_out_ok(out, x, x.shape if shape is None else shape, cplx):
        return None
    xp = x.data_ptr()
    op = out.data_ptr()
    if (xp | op) & amask or xp == op:
        return None  # an offset view (the general path narrows the lane accesses), or out x's own data (in place)
    prep(xp, op, _torch_stream(index) if index >= 0 else 0)
    return out


def _torch_out_ok(out, x, shape, cplx) -> bool:
    return (type(out) is _torch_tensor and out.shape == shape and out.dtype == x.dtype and out.device == x.device
            and out.is_contiguous() and not out.requires_grad and not out.is_neg() and not (cplx and out.is_conj()))


# The two handlers below are the hot path: written out in full (no helper calls) because each Python call
# and attribute lookup is ~0.05-0.1 µs of the few µs a cached call costs.

def torch_transpose(x, axes, out, threads):
    if _compiling():
        return _torch_ops.traced_transpose(x, axes, out)
    # In place, and a thread count that is not an int (2.0 or True would find the entry of 2 or 1): the
    # general path decides.
    if out is x or type(threads) is not int:
        return None
    try:
        key = (_T_TORCH, x.shape, _axes_key(axes), x.dtype, x.device, threads)
        e = _entries.get(key)
    except TypeError:  # axes not iterable or not hashable: the general path says what is wrong
        return None
    if e is None:
        e = _transpose_miss(x.shape, axes, threads, lambda n, b, shape: _torch_entry(key, x, n, b, shape, threads))
        if e is None:
            return None
    return _torch_run(e, x, out)


def torch_permute(x, spec, out, threads):
    if _compiling():
        return _torch_ops.traced_permute(x, spec, out)
    # In place (bmmc::permute runs identical buffers in place) and a thread count that is not an int: the
    # general path.
    if out is x or type(threads) is not int or not (type(spec) is str or type(spec) is _Bmmc):
        return None
    try:
        key = (_P_TORCH, x.shape, spec, x.dtype, x.device, threads)
        e = _entries.get(key)
    except TypeError:
        return None
    if e is None:
        e = _permute_miss(x.shape, spec, threads, lambda n, b: _torch_entry(key, x, n, b, tuple(x.shape), threads))
        if e is None:
            return None
    return _torch_run(e, x, out)


# ---- CuPy --------------------------------------------------------------------------------------------------

_cupy = None
_cupy_ndarray = None


def _cupy_entry(key, x, n, b, shape, threads):
    eb = _numpy_elem_bytes(x.dtype)
    prep = None if eb is None else _prepared_of(n, b, eb, key[4], threads)
    if prep is None:
        return None
    return _insert(key, (prep, shape, prep.alignment - 1, key[4], x.dtype))


def _cupy_run(e, x, out):
    prep, shape, amask, dev, dtype = e
    if not x.flags.c_contiguous:
        return None
    if out is None:
        out = _cupy.empty(shape, dtype)  # on the current device, as the general path allocates
        if out.device.id != dev:
            return None
    elif (type(out) is not _cupy_ndarray or out.shape != shape or out.dtype != dtype or out.device.id != dev
          or not out.flags.c_contiguous):
        return None
    xp = x.data.ptr
    op = out.data.ptr
    if (xp | op) & amask or xp == op:  # an offset view, or out x's own data (in place): the general path
        return None
    prep(xp, op, _cupy.cuda.get_current_stream().ptr)
    return out


def cupy_transpose(x, axes, out, threads):
    if out is x or type(threads) is not int:  # in place, or not an int: the general path
        return None
    try:
        key = (_T_CUPY, x.shape, _axes_key(axes), x.dtype, x.device.id, threads)
        e = _entries.get(key)
    except TypeError:
        return None
    if e is None:
        e = _transpose_miss(x.shape, axes, threads, lambda n, b, shape: _cupy_entry(key, x, n, b, shape, threads))
        if e is None:
            return None
    return _cupy_run(e, x, out)


def cupy_permute(x, spec, out, threads):
    if out is x or type(threads) is not int or not _plain_spec(spec):  # in place, not an int: the general path
        return None
    try:
        key = (_P_CUPY, x.shape, spec, x.dtype, x.device.id, threads)
        e = _entries.get(key)
    except TypeError:
        return None
    if e is None:
        e = _permute_miss(x.shape, spec, threads, lambda n, b: _cupy_entry(key, x, n, b, x.shape, threads))
        if e is None:
            return None
    return _cupy_run(e, x, out)


# ---- dispatch by the exact type of x -------------------------------------------------------------------------

def _classify(t):
    """(transpose handler, permute handler) for arrays of type t, or (None, None): the general path."""
    global _np_ndarray, _np_empty, _cupy, _cupy_ndarray
    mod = getattr(t, "__module__", "") or ""
    root = mod.split(".")[0]
    if root == "numpy":
        np = sys.modules["numpy"]
        if t is np.ndarray:
            _np_ndarray, _np_empty = np.ndarray, np.empty
            try:
                _bmmc._np_set_fallbacks(numpy_permute, numpy_transpose)
            except ImportError:  # a NumPy whose C API the module cannot use: the Python handlers alone, with no
                # table to keep entries in (each call prepares its own; the Permuter still comes from the cache)
                return numpy_transpose, numpy_permute
            return _bmmc._np_transpose, _bmmc._np_permute
    elif root == "torch":
        torch = sys.modules["torch"]
        if t is torch.Tensor:
            if _torch is None:
                _init_torch(torch)
            return torch_transpose, torch_permute
    elif root == "cupy":
        cupy = sys.modules.get("cupy")
        if cupy is not None and t is cupy.ndarray:
            _cupy, _cupy_ndarray = cupy, cupy.ndarray
            return cupy_transpose, cupy_permute
    return None, None


TRANSPOSE: dict = {}
PERMUTE: dict = {}


def learn(t) -> None:
    """Classify the array type t once (the first call with a new type goes through here)."""
    tr, pe = _classify(t)
    TRANSPOSE[t] = tr
    PERMUTE[t] = pe
