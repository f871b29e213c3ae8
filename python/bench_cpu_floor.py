"""Per-call cost of bmmc.permute on small NumPy arrays, beside NumPy's own floor (issue 15).

The goal for arrays of at most 2^12 elements: a cached bmmc.permute call within 2x of x.copy() plus the call
overhead of a NumPy ufunc (np.negative(x, out=...) of the same array stands for that overhead). Every figure is the
best of 7 repeats of N back-to-back calls, in microseconds per call, on the calling thread (arrays below 1 MiB
never use the worker pool).

    python python/bench_cpu_floor.py            (needs the bmmc package: pip install ./python)
"""
import os
import sys
import timeit

# Run as `python python/bench_cpu_floor.py`, Python puts python/ first on sys.path, where the bmmc source folder
# (without its compiled module) would shadow the installed package (as in bench_transpose.py).
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

import numpy as np  # noqa: E402

import bmmc  # noqa: E402


def per_call_us(f, number):
    return min(timeit.repeat(f, number=number, repeat=7)) / number * 1e6


def main():
    from bmmc import _fast

    print("n   | permute us | permute out= us | Python path us | x.copy() us | ufunc out= us | 2 x copy + ufunc")
    warm = np.zeros(16, np.float32)
    per_call_us(lambda: bmmc.permute(warm, "gray"), 50000)  # clocks up and code paths warm before the first row
    for bits in (4, 6, 8, 10, 12, 14, 16):
        x = np.arange(1 << bits, dtype=np.float32)
        out = np.empty_like(x)
        bmmc.permute(x, "bit-reverse")  # the first call prepares the permutation; the rest reuse it
        number = 20000 if bits <= 12 else 2000
        perm = per_call_us(lambda: bmmc.permute(x, "bit-reverse"), number)
        perm_out = per_call_us(lambda: bmmc.permute(x, "bit-reverse", out=out), number)
        # The Python fast path that the native one (python/src/numpy_fast.hpp) serves in front of: what a call
        # cost before it, and what calls the native path hands back (a first call, a mismatched out=) cost.
        python_path = per_call_us(lambda: _fast.numpy_permute(x, "bit-reverse", None, 0), number)
        copy = per_call_us(lambda: x.copy(), number)
        ufunc = per_call_us(lambda: np.negative(x, out=out), number)
        print(f"{bits:<3} | {perm:10.2f} | {perm_out:15.2f} | {python_path:14.2f} | {copy:11.2f} | {ufunc:13.2f} | "
              f"{2 * copy + ufunc:8.2f}")


if __name__ == "__main__":
    main()
