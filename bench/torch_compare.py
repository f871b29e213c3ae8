#!/usr/bin/env python3
"""The bmmc benchmark permutations through PyTorch, for BENCHMARKS.md's "PyTorch" section.

What a PyTorch user writes for each of our cases (int32, arrays of 2^n elements, on the GPU):
  bit-reverse     x.view([2]*n).permute(n-1, ..., 0).contiguous()
  random-bpc:S    x.view([2]*n).permute(P).flip(C).contiguous()   (P, C from `bmmc show --json`: the same BPC
                  as ours; flip of the complemented bits' axes, skipped when c = 0)
  transpose:R     x.view(2**R, 2**(n-R)).t().contiguous()
  copy baselines  y.copy_(x) (a cudaMemcpy D2D: case "copy", variant "memcpy", the denominator of pct_memcpy)
                  and x.clone() (case "copy", variant "clone")
Timing as in `bmmc bench`: 3 warm-ups, CUDA events around each of --reps repetitions, median; bandwidth
counts bytes read + written; first_use_ms is the host wall time of the first call (with a sync).
Each output is checked at 2^20 random indices (and all of them for n <= 20) against y = A·x ^ c.
PyTorch's CUDA kernels take at most 25 dimensions: past that, the [2]*n views fail; the error text goes to
--errors (and stderr), no timing row is written.

Rows go to --out in the `bmmc bench --csv` schema with backend "torch" and variant "permute-contiguous"
(the whole permutation as a user writes it), "permute-only" (a BPC's bit permutation without its complement:
PyTorch needs a separate flip for that, a second copy), or "memcpy" / "clone" for case "copy". Run on the GPU machine (scripts/bench-gpu.sh does when torch imports):
  python3 bench/torch_compare.py --bmmc build-gpu/bin/bmmc --n 20 25 30 --out torch.csv --errors torch_errors.csv
`--selftest` checks the index mappings with numpy on small n (no GPU, no torch needed).
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time

FIELDS = ["case", "spec", "variant", "backend", "n", "elem_bytes", "median_ms", "min_ms", "max_ms", "gbps",
          "pct_memcpy", "first_use_ms", "verified"]


# ---- the permutations as (rows, c): row i = output bit i, bit j of row i = a_ij (as `bmmc show --json`) ----
def bmmc_show(bmmc, spec, n):
    """(rows, c) of SPEC from the bmmc CLI, or None when the CLI is not usable."""
    if not bmmc or not os.path.exists(bmmc):
        return None
    try:
        r = subprocess.run([bmmc, "show", "--json", spec, "--n", str(n)], capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            return None
        j = json.loads(r.stdout)
        return list(j["rows"]), int(j["c"])
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        return None


def bit_reverse(n):
    return [1 << (n - 1 - i) for i in range(n)], 0


def transpose(n, r):
    """Row-major 2^r x 2^(n-r) -> its transpose: x = i*2^(n-r) + j goes to y = j*2^r + i."""
    rows = [0] * n
    for i in range(r):              # row-index bits: input bit (n-r)+i -> output bit i
        rows[i] = 1 << (n - r + i)
    for j in range(n - r):          # column-index bits: input bit j -> output bit r+j
        rows[r + j] = 1 << j
    return rows, 0


def bit_permutation(rows):
    """p with input bit j -> output bit p[j], or None when A is not a permutation matrix."""
    n = len(rows)
    p = [None] * n
    for i, row in enumerate(rows):
        if row == 0 or row & (row - 1):
            return None
        j = row.bit_length() - 1
        if p[j] is not None:
            return None
        p[j] = i
    return p


def torch_axes(rows, c):
    """(perm, flips) such that x.view([2]*n).permute(perm).flip(flips) is out[A x ^ c] = in[x].

    View dim k of a C-order [2]*n tensor is index bit n-1-k. Output dim j (bit n-1-j) comes from the input bit
    i with p[i] = n-1-j, i.e. input dim n-1-i; a complemented output bit b flips output dim n-1-b."""
    n = len(rows)
    p = bit_permutation(rows)
    if p is None:
        raise ValueError("not a bit permutation")
    pinv = [0] * n
    for i, o in enumerate(p):
        pinv[o] = i
    perm = [n - 1 - pinv[n - 1 - j] for j in range(n)]
    flips = [n - 1 - b for b in range(n) if (c >> b) & 1]
    return perm, sorted(flips)


def apply_map(rows, c, xs):
    """y = A x ^ c for python ints."""
    out = []
    for x in xs:
        y = c
        for i, row in enumerate(rows):
            y ^= (bin(row & x).count("1") & 1) << i
        out.append(y)
    return out


# ---- self test with numpy (numpy's transpose/flip have torch's permute/flip semantics) --------------------
def selftest():
    import numpy as np
    import random
    rng = random.Random(1)
    checked = 0
    for n in range(1, 11):
        cases = [bit_reverse(n)] + [transpose(n, r) for r in range(n + 1)]
        for _ in range(5):
            p = list(range(n)); rng.shuffle(p)
            rows = [0] * n
            for j, o in enumerate(p):
                rows[o] = 1 << j
            cases.append((rows, rng.randrange(1 << n)))
        for rows, c in cases:
            x = np.arange(1 << n, dtype=np.int64) * 7 + 1
            perm, flips = torch_axes(rows, c)
            y = np.transpose(x.reshape([2] * n), perm)
            if flips:
                y = np.flip(y, flips)
            y = np.ascontiguousarray(y).reshape(-1)
            idx = apply_map(rows, c, range(1 << n))
            assert all(y[idx[i]] == x[i] for i in range(1 << n)), (n, rows, c)
            checked += 1
    for n in (4, 6, 9):  # the 2-D transpose route
        for r in range(1, n):
            rows, c = transpose(n, r)
            x = np.arange(1 << n, dtype=np.int64)
            y = np.ascontiguousarray(x.reshape(1 << r, 1 << (n - r)).T).reshape(-1)
            idx = apply_map(rows, c, range(1 << n))
            assert all(y[idx[i]] == x[i] for i in range(1 << n)), (n, r)
            checked += 1
    assert apply_map(*transpose(4, 2), [6]) == [9] and apply_map(*bit_reverse(4), [7]) == [14]
    print(f"selftest: {checked} mappings agree with numpy transpose/flip")


# ---- GPU timing -------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bmmc", default=os.environ.get("BMMC", "build-gpu/bin/bmmc"),
                    help="bmmc CLI, for the exact random-bpc matrices (`bmmc show --json`)")
    ap.add_argument("--n", type=int, nargs="+", default=[20, 25, 30], help="index bits (arrays of 2^n int32)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1], help="random-bpc seeds")
    ap.add_argument("--out", default="torch.csv")
    ap.add_argument("--errors", default="torch_errors.csv")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        selftest()
        return 0

    import torch
    if not torch.cuda.is_available():
        print("torch_compare: torch has no CUDA device", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}) on {torch.cuda.get_device_name(0)}", file=sys.stderr)
    elem_bytes = 4
    rows_out, errors = [], []

    def time_it(fn, reps):
        t0 = time.perf_counter()
        r = fn()
        torch.cuda.synchronize()
        first_ms = (time.perf_counter() - t0) * 1e3
        del r
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for s, e in ev:
            s.record()
            r = fn()
            e.record()
            del r
        torch.cuda.synchronize()
        ms = [s.elapsed_time(e) for s, e in ev]
        return statistics.median(ms), min(ms), max(ms), first_ms

    def check(out, x, rows, c, n):
        """out[A x ^ c] == x at sampled (or all) x, computed on the device with int64 indices."""
        flat = out.reshape(-1)
        if n <= 20:
            xs = torch.arange(1 << n, device=dev, dtype=torch.int64)
        else:
            xs = torch.randint(0, 1 << n, (1 << 20,), device=dev, dtype=torch.int64)
        ys = torch.full_like(xs, c)
        for j in range(n):  # y ^= bit_j(x) * column_j(A)
            col = sum(((rows[i] >> j) & 1) << i for i in range(n))
            if col:
                ys ^= ((xs >> j) & 1) * col
        return bool(torch.equal(flat[ys], x[xs]))

    for n in a.n:
        size = 1 << n
        nbytes = size * elem_bytes
        torch.cuda.empty_cache()
        g = torch.Generator(device=dev)
        g.manual_seed(n * 131 + elem_bytes)
        x = torch.randint(1, 2**31 - 1, (size,), device=dev, dtype=torch.int32, generator=g)
        y = torch.empty_like(x)

        cases = [("bit-reverse", bit_reverse(n))]
        for s in a.seeds:
            m = bmmc_show(a.bmmc, f"random-bpc:{s}", n)
            if m is None:
                errors.append({"case": f"random-bpc:{s}", "spec": f"random-bpc:{s} --n {n}", "variant": "permute-contiguous",
                               "backend": "torch", "n": n, "error": f"bmmc CLI not usable at {a.bmmc}: cannot get the matrix"})
                continue
            cases.append((f"random-bpc:{s}", m))
        r = n // 2
        cases.append((f"transpose:{r}", transpose(n, r)))

        # Copies first: memcpy is the denominator of pct_memcpy, as in bmmc bench.
        timed = []
        med, lo, hi, first = time_it(lambda: y.copy_(x), a.reps)
        timed.append(("memcpy", "memcpy", "y.copy_(x)", med, lo, hi, first, True))
        med, lo, hi, first = time_it(lambda: x.clone(), a.reps)
        timed.append(("clone", "clone", "x.clone()", med, lo, hi, first, True))
        memcpy_ms = timed[0][3]

        jobs = []  # (case, variant, fn, expr, rows, c)
        for name, (rows, c) in cases:
            if name.startswith("transpose"):
                jobs.append((name, "permute-contiguous", lambda r=r: x.view(1 << r, 1 << (n - r)).t().contiguous(),
                             f"x.view(2**{r}, 2**{n - r}).t().contiguous()", rows, c))
                continue
            perm, flips = torch_axes(rows, c)
            if flips:
                # PyTorch has no negative strides: the complement is a flip, a second copy (flip keeps the
                # permuted strides, then contiguous() permutes). Also time the bit permutation alone.
                jobs.append((name, "permute-contiguous",
                             lambda perm=perm, flips=flips: x.view([2] * n).permute(perm).flip(flips).contiguous(),
                             f"x.view([2]*{n}).permute(...).flip({len(flips)} dims).contiguous()", rows, c))
                jobs.append((name, "permute-only", lambda perm=perm: x.view([2] * n).permute(perm).contiguous(),
                             f"x.view([2]*{n}).permute(...).contiguous() (complement dropped)", rows, 0))
            else:
                jobs.append((name, "permute-contiguous", lambda perm=perm: x.view([2] * n).permute(perm).contiguous(),
                             f"x.view([2]*{n}).permute(...).contiguous()", rows, c))
        for name, variant, fn, expr, rows, c in jobs:
            try:
                med, lo, hi, first = time_it(fn, a.reps)
                ok = check(fn(), x, rows, c, n)
                timed.append((name, variant, expr, med, lo, hi, first, ok))
                print(f"n={n} {name} {variant}: {med:.4f} ms ({100 * memcpy_ms / med:.1f}% of memcpy) verified={ok}", file=sys.stderr)
            except Exception as e:  # noqa: BLE001 - PyTorch reports dimension limits and OOMs as RuntimeError
                text = " ".join(str(e).split())[:400]
                errors.append({"case": name, "spec": f"{name} --n {n}", "variant": variant, "backend": "torch",
                               "n": n, "error": f"{type(e).__name__}: {text}"})
                print(f"n={n} {name}: {expr} failed: {type(e).__name__}: {text}", file=sys.stderr)
                torch.cuda.empty_cache()

        for name, variant, expr, med, lo, hi, first, ok in timed:
            case = "copy" if name in ("memcpy", "clone") else name
            rows_out.append({"case": case, "spec": f"{case} --n {n}", "variant": variant, "backend": "torch", "n": n,
                             "elem_bytes": elem_bytes, "median_ms": f"{med:.4f}", "min_ms": f"{lo:.4f}", "max_ms": f"{hi:.4f}",
                             "gbps": f"{2 * nbytes / (med * 1e-3) / 1e9:.1f}", "pct_memcpy": f"{100 * memcpy_ms / med:.1f}",
                             "first_use_ms": f"{first:.1f}", "verified": "true" if ok else "false"})
        del x, y

    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows_out)
    with open(a.errors, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["case", "spec", "variant", "backend", "n", "error"])
        w.writeheader()
        w.writerows(errors)
    print(f"torch_compare: {len(rows_out)} rows -> {a.out}, {len(errors)} failures -> {a.errors}", file=sys.stderr)
    return 0 if all(r["verified"] == "true" for r in rows_out) else 1


if __name__ == "__main__":
    sys.exit(main())
