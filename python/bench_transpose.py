"""bmmc.transpose vs PyTorch's x.permute(axes).contiguous() on the GPU, for power-of-two shapes.

For each case (2-D transpose, 3-D axis permutations, [2]*n bit-level permutations; n = 24 and 30 by
default) it times, with CUDA events on the current stream, after warm-up, the median of --reps runs of:
  - bmmc.transpose(x, axes)              (one pass, JIT-compiled kernel; Python call overhead included)
  - x.permute(axes).contiguous()         (PyTorch's strided copy)
  - out.copy_(x)                         (a device-to-device copy of the same bytes: the speed limit)
and checks once that both results are equal. Prints a table and writes a CSV.

Usage: python3 python/bench_transpose.py [--n 24 30] [--dtype float32] [--reps 20] [--csv FILE]
       (the CSV goes to $EXTRA_OUT/bench_transpose.csv when --csv is not given and EXTRA_OUT is set)
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import statistics
import sys

import torch

# Run as `python3 python/bench_transpose.py`, Python puts python/ first on sys.path, where the bmmc source
# folder (without its compiled module) would shadow the installed package.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
import bmmc  # noqa: E402


def cases(n: int):
    """(name, shape, axes) for one n: the shapes the issue asks for, each a power of two per dimension."""
    h = n // 2
    a, b = n // 3, n // 3
    c = n - a - b
    rnd = list(range(n))
    random.Random(n).shuffle(rnd)
    return [
        ("2-D transpose", (1 << h, 1 << (n - h)), (1, 0)),
        ("2-D tall transpose", (1 << (n - 5), 1 << 5), (1, 0)),
        ("3-D (2,0,1)", (1 << a, 1 << b, 1 << c), (2, 0, 1)),
        ("3-D (0,2,1) batched", (1 << a, 1 << b, 1 << c), (0, 2, 1)),
        ("3-D (1,0,2)", (1 << a, 1 << b, 1 << c), (1, 0, 2)),
        ("[2]*n reversed", (2,) * n, tuple(reversed(range(n)))),
        ("[2]*n random", (2,) * n, tuple(rnd)),
    ]


def time_ms(fn, reps: int) -> float:
    """Median of `reps` timings of fn() in milliseconds (CUDA events on the current stream), after warm-up."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[24, 30])
    p.add_argument("--dtype", default="float32")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--csv", default=None)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("bench_transpose: no CUDA GPU visible to PyTorch", file=sys.stderr)
        return 2
    dtype = getattr(torch, args.dtype)
    csv_path = args.csv or (os.path.join(os.environ["EXTRA_OUT"], "bench_transpose.csv")
                            if os.environ.get("EXTRA_OUT") else None)

    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, bmmc {bmmc.__version__}, "
          f"dtype {args.dtype}, median of {args.reps}")
    header = ["n", "case", "shape", "axes", "MiB", "memcpy_ms", "bmmc_ms", "torch_ms", "bmmc_pct_memcpy",
              "torch_pct_memcpy", "speedup", "equal"]
    print(f"{'n':>3} {'case':<22} {'memcpy ms':>10} {'bmmc ms':>9} {'torch ms':>9} {'bmmc %':>7} {'torch %':>8} "
          f"{'speedup':>8}  equal")
    rows = []
    failed = False
    for n in args.n:
        x = torch.rand(1 << n, device=dev, dtype=torch.float32).to(dtype)
        copy_out = torch.empty_like(x)
        memcpy_ms = time_ms(lambda: copy_out.copy_(x), args.reps)
        del copy_out
        for name, shape, axes in cases(n):
            xs = x.reshape(shape)
            out = xs.new_empty([shape[a] for a in axes])
            bmmc_ms = time_ms(lambda: bmmc.transpose(xs, axes, out=out), args.reps)
            try:
                want = xs.permute(axes).contiguous()
                torch_ms = time_ms(lambda: xs.permute(axes).contiguous(), args.reps)
                equal = bool(torch.equal(out, want))
                del want
            except RuntimeError as e:  # e.g. more dimensions than PyTorch's kernels take
                torch_ms, equal = float("nan"), "torch failed: " + str(e).splitlines()[0][:60]
            failed |= equal is False
            del out
            torch.cuda.empty_cache()
            mib = x.numel() * x.element_size() / 2**20
            row = [n, name, "x".join(map(str, shape)) if len(shape) <= 4 else f"[2]*{n}",
                   ",".join(map(str, axes)), f"{mib:.0f}", f"{memcpy_ms:.4f}", f"{bmmc_ms:.4f}", f"{torch_ms:.4f}",
                   f"{100 * memcpy_ms / bmmc_ms:.1f}", f"{100 * memcpy_ms / torch_ms:.1f}",
                   f"{torch_ms / bmmc_ms:.2f}", equal]
            rows.append(row)
            print(f"{n:>3} {name:<22} {memcpy_ms:>10.3f} {bmmc_ms:>9.3f} {torch_ms:>9.3f} {row[8]:>7} {row[9]:>8} "
                  f"{row[10]:>8}  {equal}", flush=True)
        del x
        torch.cuda.empty_cache()
    if csv_path:
        with open(csv_path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)
        print(f"# wrote {csv_path}")
    if failed:
        print("bench_transpose: FAIL: a bmmc result differed from x.permute(axes).contiguous()", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
