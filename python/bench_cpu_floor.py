"""Per-call cost of bmmc.permute on small NumPy arrays, beside NumPy's own floor (issue 15).

The goal for arrays of at most 2^12 elements: a cached bmmc.permute call within 2x of x.copy() plus the call
overhead of a NumPy ufunc (np.negative(x, out=...) of the same array stands for that overhead). The variants are
timed in turn, ROUNDS times (each time the best of 3 repeats of N back-to-back calls), so that a VM's slow spells
fall on all of them alike; every figure is the median over the rounds in microseconds per call, and "ratio" is
the median of each round's permute / (2 x copy + ufunc), max its worst round. Calls run on the calling thread
(arrays below 1 MiB never use the worker pool).

    python python/bench_cpu_floor.py [ROUNDS]   (default 15; needs the bmmc package: pip install ./python)
"""
import os
import statistics
import sys
import timeit

# Run as `python python/bench_cpu_floor.py`, Python puts python/ first on sys.path, where the bmmc source folder
# (without its compiled module) would shadow the installed package (as in bench_transpose.py).
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

import numpy as np  # noqa: E402

import bmmc  # noqa: E402


def per_call_us(f, number, repeat=7):
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number * 1e6


def main(rounds):
    from bmmc import _fast

    print("n   | permute us | permute out= us | Python path us | x.copy() us | ufunc out= us | 2 x copy + ufunc "
          "| ratio (max)")
    warm = np.zeros(16, np.float32)
    per_call_us(lambda: bmmc.permute(warm, "gray"), 50000)  # clocks up and code paths warm before the first row
    for bits in (4, 6, 8, 10, 12, 14, 16):
        x = np.arange(1 << bits, dtype=np.float32)
        out = np.empty_like(x)
        bmmc.permute(x, "bit-reverse")  # the first call prepares the permutation; the rest reuse it
        number = 5000 if bits <= 12 else 500
        variants = {
            "permute": lambda: bmmc.permute(x, "bit-reverse"),
            "permute_out": lambda: bmmc.permute(x, "bit-reverse", out=out),
            # The Python fast path that the native one (python/src/numpy_fast.hpp) serves in front of: what a
            # call cost before it, and what calls the native path hands back (a first call, a mismatched out=)
            # cost.
            "python_path": lambda: _fast.numpy_permute(x, "bit-reverse", None, 0),
            "copy": lambda: x.copy(),
            "ufunc": lambda: np.negative(x, out=out),
        }
        times = {k: [] for k in variants}
        for _ in range(rounds):
            for k, f in variants.items():
                times[k].append(per_call_us(f, number, repeat=3))
        ratios = [p / (2 * c + u) for p, c, u in zip(times["permute"], times["copy"], times["ufunc"])]
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{bits:<3} | {med['permute']:10.2f} | {med['permute_out']:15.2f} | {med['python_path']:14.2f} | "
              f"{med['copy']:11.2f} | {med['ufunc']:13.2f} | {2 * med['copy'] + med['ufunc']:16.2f} | "
              f"{statistics.median(ratios):.2f} ({max(ratios):.2f})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
