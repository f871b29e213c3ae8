#!/usr/bin/env python3
"""The any-shape suite (bench/any_shape_suite.txt) as a PyTorch user writes it, beside torch's own copy.

Each case is a shape, a digit spec (bmmc's any-shape spec language: a product of `axes:`, `flip`, `flip:J,..`,
`roll:S,..`, `fftshift` terms, rightmost first) and an element size. It becomes the torch expression a user
writes, e.g. "flip:0*axes:2,0,1" → x.permute(2, 0, 1).flip(0).contiguous(), "roll:100,-7" → x.roll((100, -7),
(0, 1)), "fftshift" → torch.fft.fftshift(x), and is timed eagerly ("torch-eager") and through torch.compile
("torch-compile"), beside y.copy_(x) of the same bytes ("memcpy", the denominator of pct_memcpy), in one
process. The compiled result is checked equal to the eager one. Timing: 3 warm-ups, CUDA events around each of
--reps runs, median. Dtypes by element size: 1 uint8, 2 bfloat16, 4 float32, 8 complex64, 16 complex128.
  python3 bench/any_shape_torch.py --suite bench/any_shape_suite.txt --reps 20 --out any_shape_torch.csv
`--selftest` checks the spec translation against NumPy on small shapes (no GPU needed).
"""
import argparse
import csv
import statistics
import sys

FIELDS = ["name", "case", "spec", "variant", "backend", "n", "elem_bytes", "median_ms", "min_ms", "max_ms", "gbps",
          "pct_memcpy", "first_use_ms", "verified"]


def terms(spec):
    """The spec's terms, rightmost (applied first) first, as (name, [ints])."""
    out = []
    for t in reversed(spec.split("*")):
        name, _, args = t.strip().partition(":")
        out.append((name, [int(a) for a in args.split(",")] if args else []))
    return out


def apply(x, spec, lib):
    """The spec applied to x with torch (lib='torch') or NumPy (lib='numpy')."""
    for name, args in terms(spec):
        nd = x.ndim
        if name == "axes":
            x = x.permute(*args) if lib == "torch" else x.transpose(args)
        elif name == "flip":
            dims = tuple(args) if args else tuple(range(nd))
            x = x.flip(dims) if lib == "torch" else __import__("numpy").flip(x, dims)
        elif name == "roll":
            x = x.roll(tuple(args), tuple(range(nd))) if lib == "torch" else __import__("numpy").roll(x, args, tuple(range(nd)))
        elif name in ("fftshift", "ifftshift"):
            if lib == "torch":
                import torch
                x = getattr(torch.fft, name)(x)
            else:
                import numpy
                x = getattr(numpy.fft, name)(x)
        else:
            raise ValueError(f"{spec}: term {name} has no torch translation here")
    return x.contiguous() if lib == "torch" else x.copy()


def selftest():
    import numpy as np
    x = np.arange(2 * 3 * 5).reshape(2, 3, 5)
    assert (apply(x, "flip:0*axes:2,0,1", "numpy") == np.flip(np.transpose(x, (2, 0, 1)), 0)).all()
    assert (apply(x, "roll:1,-1,2", "numpy") == np.roll(x, (1, -1, 2), (0, 1, 2))).all()
    assert (apply(x, "fftshift*axes:1,0,2", "numpy") == np.fft.fftshift(np.transpose(x, (1, 0, 2)))).all()
    print("selftest ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="bench/any_shape_suite.txt")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", default="-")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    import torch
    dtypes = {1: torch.uint8, 2: torch.bfloat16, 4: torch.float32, 8: torch.complex64, 16: torch.complex128}

    def timed(fn, reps):
        for _ in range(3):
            fn()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for s, e in ev:
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        ms = [s.elapsed_time(e) for s, e in ev]
        return statistics.median(ms), min(ms), max(ms)

    rows = []
    for line in open(a.suite):
        if not line.strip() or line.startswith("#"):
            continue
        name, shape, spec, eb = line.strip().split(";")
        eb = int(eb)
        dims = [int(d) for d in shape.split("x")]
        x = torch.randint(0, 250, dims, dtype=torch.uint8, device="cuda").to(dtypes[eb])
        nbytes = x.numel() * eb
        y = torch.empty_like(x)
        base = {"name": name, "case": spec, "spec": f"{spec} --shape {shape}", "backend": "torch", "n": -1,
                "elem_bytes": eb, "first_use_ms": 0}
        results = {"memcpy": (timed(lambda: y.copy_(x), a.reps), True)}
        eager = apply(x, spec, "torch")
        results["torch-eager"] = (timed(lambda: apply(x, spec, "torch"), a.reps), True)
        if not a.no_compile:
            torch._dynamo.reset()  # each case compiles afresh: no recompile limit across dtypes and ranks
            try:
                f = torch.compile(lambda t: apply(t, spec, "torch"))
                ok = bool(torch.equal(f(x), eager))
                results["torch-compile"] = (timed(lambda: f(x), a.reps), ok)
            except Exception as e:  # noqa: BLE001 — a compile failure is a row-less result, reported
                print(f"{name}: torch.compile failed: {type(e).__name__}: {e}"[:300], file=sys.stderr)
        mem = results["memcpy"][0][0]
        for variant, ((med, lo, hi), ok) in results.items():
            rows.append(dict(base, variant=variant, median_ms=f"{med:.4f}", min_ms=f"{lo:.4f}", max_ms=f"{hi:.4f}",
                             gbps=f"{2 * nbytes / (med * 1e6):.1f}", pct_memcpy=f"{100 * mem / med:.1f}", verified=ok))
            print(f"{name:<22} {variant:<14} {med:8.3f} ms {100 * mem / med:6.1f}% memcpy", file=sys.stderr)
        del x, y, eager
        torch.cuda.empty_cache()
    out = sys.stdout if a.out == "-" else open(a.out, "w", newline="")
    w = csv.DictWriter(out, FIELDS)
    w.writeheader()
    w.writerows(rows)


if __name__ == "__main__":
    main()
