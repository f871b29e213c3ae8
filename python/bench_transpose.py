"""bmmc.transpose against PyTorch's x.permute(axes).contiguous() and a copy_ of the same bytes, as a PyTorch
user calls them: host time per call, a sweep of sizes 1 MiB … 4 GiB, and CUDA graph replay.

Sections (--sections, default all three on a GPU; `host` alone with --device cpu):
  host   host time per call with a CPU timer over --host-calls (>= 1000) calls on a tiny tensor (4 × 8 float32;
         on CUDA in batches of 100 calls with torch.cuda.synchronize() between them, only the calls timed, so
         the launch queue never fills and the GPU's kernel rate never shows), median of --host-repeats loops,
         loops of every case taken in interleaved rounds, for:
         bmmc.transpose (cached fast path), the same with out=, bmmc.permute with a spec string and with a
         Bmmc, the general path (what every call cost before the fast path), torch.ops.bmmc.transpose (the
         custom op called eagerly), torch's permute().contiguous(), copy_ of the same bytes, a bare
         allocation, and each step of the cached call alone ("part" rows: key lookup, checks, pointers,
         stream, the native call, allocations). On --device cpu the same for NumPy arrays and CPU tensors.
  sweep  sizes 1 MiB … --max-mib (powers of two), --shapes random power-of-two shapes per size (rank 2–6,
         dtypes float16 / float32 / int64 / complex64 / uint8, random non-identity axes, fixed --seed); with
         --odd, shapes of about that many bytes whose extents are all odd (rank 2–4; bench_sweep_odd.csv).
         CUDA events, median of --reps, the four calls of a shape interleaved: "lat" times each call alone
         (event, call, event, synchronize: host time + GPU time, what one call costs), "pipe" times --reps
         calls back to back between two events (divided by --reps: the cost per call in a stream of calls). bmmc.transpose allocates its output
         like torch does; bmmc_out passes out=. Every bmmc result is compared with torch's.
  graph  CUDA graph replay: graphs of --graph-ops back-to-back 4 MiB transposes (bmmc.transpose with out=,
         the custom op, torch's permute().contiguous()) and of copy_ of the same bytes; replay timed with CUDA
         events, median of --reps, per op. Replays are checked against eager results with fresh input.

Outputs (in --out-dir, default $EXTRA_OUT or the current directory): bench_host.csv, bench_sweep.csv,
bench_graph.csv, and a human table on stdout. Exit status 1 when a result differed.

Usage: python3 python/bench_transpose.py [--sections host sweep graph] [--max-mib 4096] [--shapes 4]
       python3 python/bench_transpose.py --device cpu --sections host      (no GPU needed)
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import statistics
import sys
import time

# Run as `python3 python/bench_transpose.py`, Python puts python/ first on sys.path, where the bmmc source
# folder (without its compiled module) would shadow the installed package.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

import numpy as np  # noqa: E402

import bmmc  # noqa: E402

DTYPES = ["float16", "float32", "int64", "complex64", "uint8"]


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    print(f"# wrote {path}")


# ---- host time per call ------------------------------------------------------------------------------------

def host_loop_us(fn, calls, sync=None, batch=100):
    """Host µs per call of fn() over one loop of `calls` calls, timed with perf_counter.

    Without `sync` (CPU work) the loop is `calls` calls back to back. With `sync` (GPU work) it is `calls`
    calls in batches of `batch`: only the batches' enqueue time is timed and sync() runs, untimed, between
    batches. Timing long runs of GPU calls with one sync at the end would measure the GPU instead of the host:
    once the launch queue (about a thousand launches) is full, every call waits for a kernel to finish, so a
    loop of 2000 tiny launches runs at the GPU's kernel rate, a few µs per kernel whatever the host costs."""
    if sync is None:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) / calls * 1e6
    spent, done = 0.0, 0
    while done < calls:
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        spent += time.perf_counter() - t0
        done += batch
        sync()
    return spent / done * 1e6


def host_us_interleaved(cases, calls, repeats, sync):
    """[(median, min)] of host µs per call for each (framework, name, fn) in cases, over `repeats` loops
    taken in rounds: round r times one loop of every case, starting at a rotating case, so that the host's
    drift (clock changes, other processes, the allocator) spreads over every row instead of landing on the
    rows timed last. NumPy rows run without sync."""
    per = [[] for _ in cases]
    for r in range(repeats):
        k = r % len(cases)
        for i in list(range(k, len(cases))) + list(range(k)):
            fw, _name, fn = cases[i]
            per[i].append(host_loop_us(fn, calls, None if fw == "numpy" else sync))
    return [(statistics.median(p), min(p)) for p in per]


def host_parts(torch, x, o, dev):
    """The steps of one cached torch call of bmmc.transpose(x, (1, 0)) (python/bmmc/_fast.py), each timed alone,
    so that the host time per call can be read as a sum: what to make cheaper first."""
    from bmmc import _fast

    bmmc.transpose(x, (1, 0))  # the cache entry exists
    key = (_fast._T_TORCH, x.shape, (1, 0), x.dtype, x.device, 0)
    entry = _fast._entries.get(key)
    if entry is None:
        return []
    prep, shape, _amask, index, _cplx, like = entry
    shape = tuple(x.shape) if shape is None else shape
    xp, op = x.data_ptr(), o.data_ptr()
    stream = _fast._torch_stream(index) if index >= 0 else 0
    return [
        ("part", "torch.compiler.is_compiling()", _fast._compiling),
        ("part", "key tuple + dict lookup", lambda: _fast._entries.get(
            (_fast._T_TORCH, x.shape, (1, 0), x.dtype, x.device, 0))),
        ("part", "x.device", lambda: x.device),
        ("part", "checks (contiguous, grad, neg)", lambda: x.is_contiguous() and not x.requires_grad and not x.is_neg()),
        ("part", "two data_ptr()", lambda: (x.data_ptr(), o.data_ptr())),
        ("part", "current stream (raw)", (lambda: _fast._torch_stream(index)) if index >= 0 else (lambda: 0)),
        ("part", "prepared native call", lambda: prep(xp, op, stream)),
        ("part", "torch.empty(shape, dtype, device)", lambda: torch.empty(shape, dtype=x.dtype, device=x.device)),
        ("part", "torch.empty_like(x)", lambda: torch.empty_like(x)),
        ("part", "the entry's allocation (empty_like of its shape template)" if like is not None
         else "the entry's allocation (new_empty: no template)",
         (lambda: torch.empty_like(like)) if like is not None else (lambda: x.new_empty(shape))),
        ("part", "x.new_empty(shape)", lambda: x.new_empty(shape)),
        ("part", "torch.empty_like(x).view(shape)", lambda: torch.empty_like(x).view(shape)),
    ]


def host_section(args, torch, dev):
    rows = []
    cases = []
    if dev == "cpu":
        nx = np.arange(32, dtype=np.float32).reshape(4, 8)
        no = np.empty((8, 4), np.float32)
        nxf = nx.reshape(-1)
        nb = bmmc.bit_reverse(5)
        cases += [
            ("numpy", "bmmc.transpose(x, axes)", lambda: bmmc.transpose(nx, (1, 0))),
            ("numpy", "bmmc.transpose(x, axes, out=)", lambda: bmmc.transpose(nx, (1, 0), out=no)),
            ("numpy", "bmmc.permute(x, 'bit-reverse')", lambda: bmmc.permute(nxf, "bit-reverse")),
            ("numpy", "bmmc.permute(x, Bmmc)", lambda: bmmc.permute(nxf, nb)),
            ("numpy", "general path (before)", lambda: bmmc._transpose_general(nx, (1, 0), None, 0)),
            ("numpy", "np.transpose(x, axes).copy()", lambda: np.transpose(nx, (1, 0)).copy()),
            ("numpy", "np.empty", lambda: np.empty((8, 4), np.float32)),
        ]
    sync = None
    if torch is not None:
        d = torch.device(dev)
        x = torch.arange(32, dtype=torch.float32, device=d).reshape(4, 8)
        o = torch.empty(8, 4, device=d)
        xf = x.reshape(-1)
        xt = x.t()
        b = bmmc.bit_reverse(5)
        ops = bmmc.torch_ops()
        sync = torch.cuda.synchronize if dev == "cuda" else None
        cases += [
            ("torch", "bmmc.transpose(x, axes)", lambda: bmmc.transpose(x, (1, 0))),
            ("torch", "bmmc.transpose(x, axes, out=)", lambda: bmmc.transpose(x, (1, 0), out=o)),
            ("torch", "bmmc.permute(x, 'bit-reverse')", lambda: bmmc.permute(xf, "bit-reverse")),
            ("torch", "bmmc.permute(x, Bmmc)", lambda: bmmc.permute(xf, b)),
            ("torch", "general path (before)", lambda: bmmc._transpose_general(x, (1, 0), None, 0)),
            ("torch", "torch.ops.bmmc.transpose (eager op)", lambda: ops.transpose(x, [1, 0])),
            ("torch", "x.permute(axes).contiguous()", lambda: x.permute(1, 0).contiguous()),
            ("torch", "out.copy_(x.t())", lambda: o.copy_(xt)),
            ("torch", "out.copy_(x) same bytes", lambda: o.view(4, 8).copy_(x)),
            ("torch", "x.new_empty (allocation)", lambda: x.new_empty((8, 4))),
        ]
        cases += host_parts(torch, x, o, dev)
    # Warm every case first: the first case timed otherwise pays for clocks ramping up and first-touch costs
    # (on the H100 the first row measured 14.9 µs and 10 µs when timed again).
    for _fw, _name, fn in cases:
        for _ in range(args.host_calls):
            fn()
    if sync:
        sync()
    print(f"\n## host time per call, {args.host_calls} calls × {args.host_repeats} loops (interleaved rounds), "
          f"tiny arrays on {dev}")
    print(f"{'framework':<9} {'call':<40} {'median us':>10} {'min us':>8}")
    for (fw, name, _fn), (med, mn) in zip(cases, host_us_interleaved(cases, args.host_calls, args.host_repeats, sync)):
        rows.append([dev, fw, name, f"{med:.3f}", f"{mn:.3f}", args.host_calls, args.host_repeats])
        print(f"{fw:<9} {name:<40} {med:>10.2f} {mn:>8.2f}", flush=True)
    write_csv(os.path.join(args.out_dir, "bench_host.csv"),
              ["device", "framework", "call", "median_us", "min_us", "calls", "loops"], rows)
    return True


# ---- the sweep ------------------------------------------------------------------------------------------------

def random_case(rng, size_bytes):
    dtype = rng.choice(DTYPES)
    eb = {"float16": 2, "float32": 4, "int64": 8, "complex64": 8, "uint8": 1}[dtype]
    n = (size_bytes // eb).bit_length() - 1
    rank = rng.randint(2, min(6, n))
    cuts = sorted(rng.sample(range(1, n), rank - 1))
    bits = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    shape = tuple(1 << k for k in bits)
    axes = list(range(rank))
    while axes == sorted(axes):
        rng.shuffle(axes)
    return dtype, shape, tuple(axes)


def random_odd_case(rng, size_bytes):
    """--odd: a shape of about size_bytes whose extents are all odd (rank 2-4, random non-identity axes): what
    the any-shape planner serves, where no axis splits into bits."""
    dtype = rng.choice(DTYPES)
    eb = {"float16": 2, "float32": 4, "int64": 8, "complex64": 8, "uint8": 1}[dtype]
    rest = size_bytes // eb
    rank = rng.randint(2, 4)
    shape = []
    for i in range(rank - 1):
        d = max(3, int(rest ** (1 / (rank - i)) * rng.uniform(0.5, 2)) | 1)
        shape.append(d)
        rest = max(1, rest // d)
    shape.append(max(3, rest | 1))
    rng.shuffle(shape)
    axes = list(range(rank))
    while axes == sorted(axes):
        rng.shuffle(axes)
    return dtype, tuple(shape), tuple(axes)


def event_ms(torch, fns, reps):
    """{name: (lat, pipe)} for the calls in fns ({name: fn}), measured interleaved so that every call sees the
    same clocks, allocator state and neighbours: lat = median of reps rounds in which each call runs alone
    between two events (synchronised each; the order rotates from round to round), pipe = reps calls back to
    back between two events divided by reps, median of 3 rounds (each round runs every call once, the order
    rotating too).

    Timing one call's reps and then the next call's (as this function did until session 14) let a drift of
    the GPU's clocks or of the caching allocator land on one call only: allocating calls lost 20-80% in one
    sweep and won in the next."""
    names = list(fns)
    for _ in range(3):
        for name in names:
            fns[name]()
    torch.cuda.synchronize()
    lat = {name: [] for name in names}
    for r in range(reps):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fns[name]()
            b.record()
            b.synchronize()
            lat[name].append(a.elapsed_time(b))
    pipe = {name: [] for name in names}
    for r in range(3):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            fn = fns[name]
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(reps):
                fn()
            b.record()
            b.synchronize()
            pipe[name].append(a.elapsed_time(b) / reps)
    return {name: (statistics.median(lat[name]), statistics.median(pipe[name])) for name in names}


def make_tensor(torch, dtype, numel, dev, seed):
    g = torch.Generator(device=dev).manual_seed(seed)
    t = getattr(torch, dtype)
    if dtype == "complex64":
        return torch.complex(torch.rand(numel, generator=g, device=dev), torch.rand(numel, generator=g, device=dev))
    if dtype in ("float16", "float32"):
        return torch.rand(numel, generator=g, device=dev, dtype=torch.float32).to(t)
    hi = 255 if dtype == "uint8" else 1 << 40
    return torch.randint(0, hi, (numel,), generator=g, device=dev, dtype=torch.int64).to(t)


def sweep_section(args, torch):
    dev = torch.device("cuda")
    free, _ = torch.cuda.mem_get_info()
    sizes = []
    mib = 1
    while mib <= args.max_mib:
        if 4 * mib * 2**20 < free * 0.9:
            sizes.append(mib)
        else:
            print(f"# skipping {mib} MiB: needs 4 × that much free memory, {free / 2**30:.1f} GiB free")
        mib *= 2
    header = ["size_mib", "dtype", "shape", "axes", "copy_ms", "bmmc_ms", "bmmc_out_ms", "torch_ms", "speedup",
              "speedup_out", "bmmc_pct_copy", "torch_pct_copy", "copy_pipe_ms", "bmmc_pipe_ms", "bmmc_out_pipe_ms",
              "torch_pipe_ms", "speedup_pipe", "equal"]
    rows, failed = [], False
    print(f"\n## sweep: {args.shapes} random shapes per size, CUDA events, median of {args.reps}; "
          "lat = one call alone (host + GPU), pipe = back to back; speedup = torch / bmmc")
    print(f"{'MiB':>5} {'dtype':<9} {'shape':<26} {'axes':<13} {'copy ms':>8} {'bmmc ms':>8} {'b out ms':>8} "
          f"{'torch ms':>8} {'speedup':>7} {'sp out':>6} {'sp pipe':>7}  eq")
    summary = []
    for mib in sizes:
        rng = random.Random(args.seed * 100003 + mib)
        speeds, speeds_pipe = [], []
        for k in range(args.shapes):
            dtype, shape, axes = (random_odd_case if args.odd else random_case)(rng, mib * 2**20)
            numel = 1
            for d in shape:
                numel *= d
            x = make_tensor(torch, dtype, numel, dev, args.seed + k).reshape(shape)
            new_shape = tuple(shape[a] for a in axes)
            out = x.new_empty(new_shape)
            flat_out, flat_x = out.view(-1), x.view(-1)
            got = bmmc.transpose(x, axes)
            want = x.permute(axes).contiguous()
            equal = bool(torch.equal(got, want))
            failed |= not equal
            del got, want
            t = event_ms(torch, {"copy": lambda: flat_out.copy_(flat_x), "bmmc": lambda: bmmc.transpose(x, axes),
                                 "out": lambda: bmmc.transpose(x, axes, out=out),
                                 "torch": lambda: x.permute(axes).contiguous()}, args.reps)
            (c_lat, c_pipe), (b_lat, b_pipe), (o_lat, o_pipe), (t_lat, t_pipe) = t["copy"], t["bmmc"], t["out"], t["torch"]
            sp, sp_out, sp_pipe = t_lat / b_lat, t_lat / o_lat, t_pipe / b_pipe
            speeds.append(sp)
            speeds_pipe.append(sp_pipe)
            shape_s = "x".join(map(str, shape))
            axes_s = ",".join(map(str, axes))
            rows.append([mib, dtype, shape_s, axes_s, f"{c_lat:.4f}", f"{b_lat:.4f}", f"{o_lat:.4f}", f"{t_lat:.4f}",
                         f"{sp:.3f}", f"{sp_out:.3f}", f"{100 * c_lat / b_lat:.1f}", f"{100 * c_lat / t_lat:.1f}",
                         f"{c_pipe:.4f}", f"{b_pipe:.4f}", f"{o_pipe:.4f}", f"{t_pipe:.4f}", f"{sp_pipe:.3f}", equal])
            print(f"{mib:>5} {dtype:<9} {shape_s:<26} {axes_s:<13} {c_lat:>8.4f} {b_lat:>8.4f} {o_lat:>8.4f} "
                  f"{t_lat:>8.4f} {sp:>7.2f} {sp_out:>6.2f} {sp_pipe:>7.2f}  {equal}", flush=True)
            x = out = flat_out = flat_x = None  # free before the next case (the lambdas above are done)
            torch.cuda.empty_cache()
        summary.append((mib, min(speeds), statistics.median(speeds), min(speeds_pipe), statistics.median(speeds_pipe)))
    print("\n## speedup (torch time / bmmc time) per size: min and median over the shapes")
    print(f"{'MiB':>5} {'lat min':>8} {'lat median':>10} {'pipe min':>9} {'pipe median':>11}")
    for mib, mn, med, pmn, pmed in summary:
        print(f"{mib:>5} {mn:>8.2f} {med:>10.2f} {pmn:>9.2f} {pmed:>11.2f}")
    won = [mib for mib, mn, *_ in summary if mn >= 1.0]
    cross = next((m for m, *_ in summary if all(mn >= 1.0 for mm, mn, *_ in summary if mm >= m)), None)
    allv = [float(r[8]) for r in rows]
    if allv:
        print(f"# lat: bmmc >= torch on {sum(v >= 1 for v in allv)}/{len(allv)} shapes, median speedup "
              f"{statistics.median(allv):.2f}×, min {min(allv):.2f}×; sizes where every shape wins: {won}; "
              f"crossover (every shape wins from here up): {cross} MiB")
    write_csv(os.path.join(args.out_dir, "bench_sweep_odd.csv" if args.odd else "bench_sweep.csv"), header, rows)
    return not failed


# ---- CUDA graphs ----------------------------------------------------------------------------------------------

def graph_section(args, torch):
    dev = torch.device("cuda")
    ops = bmmc.torch_ops()
    k = args.graph_ops
    rows, ok = [], True
    print(f"\n## CUDA graph replay: {k} ops per graph, 4 MiB, median of {args.reps} replays, per op")
    print(f"{'case':<34} {'dtype':<8} {'shape':<18} {'axes':<10} {'us/op':>8} {'vs copy_':>8}  equal")
    for dtype, shape, axes in [("float32", (1024, 1024), (1, 0)), ("float16", (32, 64, 16, 64), (3, 1, 0, 2)),
                               ("uint8", (16, 256, 1024), (2, 0, 1))]:
        numel = 1
        for d in shape:
            numel *= d
        x = make_tensor(torch, dtype, numel, dev, 7).reshape(shape)
        new_shape = tuple(shape[a] for a in axes)
        outs = [x.new_empty(new_shape) for _ in range(2)]
        copy_out = x.new_empty(shape)
        results = {}

        def bmmc_out():
            for i in range(k):
                bmmc.transpose(x, axes, out=outs[i % 2])

        def bmmc_alloc():
            r = None
            for _ in range(k):
                r = bmmc.transpose(x, axes)
            results["bmmc_alloc"] = r

        def op_alloc():
            r = None
            for _ in range(k):
                r = ops.transpose(x, list(axes))
            results["op_alloc"] = r

        def torch_perm():
            r = None
            for _ in range(k):
                r = x.permute(axes).contiguous()
            results["torch"] = r

        def copy():
            for _ in range(k):
                copy_out.copy_(x)

        timed = {}
        for name, body in [("copy_ (same bytes)", copy), ("bmmc.transpose(out=)", bmmc_out),
                           ("bmmc.transpose (allocating)", bmmc_alloc), ("torch.ops.bmmc.transpose", op_alloc),
                           ("torch permute().contiguous()", torch_perm)]:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):  # warm up on a side stream, as PyTorch asks before capture
                for _ in range(3):
                    body()
            torch.cuda.current_stream().wait_stream(s)
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                body()
            for _ in range(3):
                g.replay()
            torch.cuda.synchronize()
            times = []
            for _ in range(args.reps):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                g.replay()
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b) * 1000 / k)
            timed[name] = (statistics.median(times), g)
        # Correctness of the replays with fresh input.
        x.copy_(make_tensor(torch, dtype, numel, dev, 8).reshape(shape))
        for name in timed:
            timed[name][1].replay()
        torch.cuda.synchronize()
        want = x.permute(axes).contiguous()
        checks = {"copy_ (same bytes)": torch.equal(copy_out, x),
                  "bmmc.transpose(out=)": torch.equal(outs[(k - 1) % 2], want),
                  "bmmc.transpose (allocating)": torch.equal(results["bmmc_alloc"], want),
                  "torch.ops.bmmc.transpose": torch.equal(results["op_alloc"], want),
                  "torch permute().contiguous()": torch.equal(results["torch"], want)}
        copy_us = timed["copy_ (same bytes)"][0]
        for name, (us, _) in timed.items():
            eq = bool(checks[name])
            ok &= eq
            shape_s = "x".join(map(str, shape))
            axes_s = ",".join(map(str, axes))
            rows.append([name, dtype, shape_s, axes_s, k, f"{us:.3f}", f"{us / copy_us:.3f}", eq])
            print(f"{name:<34} {dtype:<8} {shape_s:<18} {axes_s:<10} {us:>8.2f} {us / copy_us:>8.2f}  {eq}", flush=True)
        timed = results = x = outs = copy_out = want = None  # free the graphs and buffers
        torch.cuda.empty_cache()
    write_csv(os.path.join(args.out_dir, "bench_graph.csv"),
              ["case", "dtype", "shape", "axes", "ops_per_graph", "us_per_op", "ratio_to_copy", "equal"], rows)
    return ok


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--sections", nargs="+", choices=["host", "sweep", "graph"], default=None)
    p.add_argument("--max-mib", type=int, default=4096)
    p.add_argument("--shapes", type=int, default=4, help="random shapes per size")
    p.add_argument("--odd", action="store_true",
                   help="sweep shapes whose extents are all odd (any-shape plans) instead of powers of two; "
                        "writes bench_sweep_odd.csv")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--host-calls", type=int, default=2000)
    p.add_argument("--host-repeats", type=int, default=7)
    p.add_argument("--graph-ops", type=int, default=8)
    p.add_argument("--out-dir", default=os.environ.get("EXTRA_OUT") or ".")
    args = p.parse_args()
    if args.host_calls < 1000:
        p.error("--host-calls must be at least 1000")
    os.makedirs(args.out_dir, exist_ok=True)
    try:
        import torch
    except ImportError:
        torch = None
    sections = args.sections or (["host", "sweep", "graph"] if args.device == "cuda" else ["host"])
    if args.device == "cuda":
        if torch is None or not torch.cuda.is_available():
            print("bench_transpose: no CUDA GPU visible to PyTorch (try --device cpu --sections host)", file=sys.stderr)
            return 2
        print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}, bmmc {bmmc.__version__} "
              f"({bmmc.__file__}), python {sys.version.split()[0]}")
    else:
        if set(sections) - {"host"}:
            p.error("--device cpu runs only the host section")
        print(f"# CPU, numpy {np.__version__}, torch {getattr(torch, '__version__', 'none')}, bmmc {bmmc.__version__}, "
              f"python {sys.version.split()[0]}")
    ok = True
    if "host" in sections:
        ok &= host_section(args, torch, args.device)
    if "sweep" in sections:
        ok &= sweep_section(args, torch)
    if "graph" in sections:
        ok &= graph_section(args, torch)
    if not ok:
        print("bench_transpose: FAIL: a bmmc result differed from PyTorch's", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
