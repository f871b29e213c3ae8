#!/usr/bin/env python3
"""Figures and markdown tables of BENCHMARKS.md from the CSVs of scripts/bench-gpu.sh.

  python3 bench/plot.py                      # PNGs of every figure the CSVs support -> bench/plots/
  python3 bench/plot.py --markdown           # every markdown table the CSVs support, to paste
  python3 bench/plot.py --markdown nsweep dist torch     # only those sections
  (bench/tables.py writes BENCHMARKS.md's tables, these among them, from the same CSVs)
  python3 bench/plot.py --results DIR --plots DIR

Figures (the paper's three, FHPNC'23 §6, then two it lacks):
  optimization_times.png  running time of naive / +tile / +banks / +iters / two-pass / one-pass   variants.csv
  max_bandwidth.png       effective bandwidth as % of cudaMemcpy and of our copy kernel           variants.csv
  speedup_wrt_n.png       speedup over naive for n = 20..30, the paper's best kernel and ours     n_sweep.csv
  bmmc_vs_n.png           random BMMC: one pass vs two passes vs copy for n = 20..30              n_sweep.csv
  random_dist.png         % of memcpy over many random BMMCs: one pass vs two passes              dist.csv
                          (without dist.csv: the 20 BMMCs / 20 BPCs of random.csv, random_bpc.csv)
  torch.png               PyTorch permute(...).contiguous() vs our one pass across n              torch.csv
Missing CSVs are reported and their figures and tables skipped. Runs here (matplotlib), not on the GPU.
"""
import argparse
import csv
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SECTIONS = ["variants", "transpose", "bandwidth", "nsweep", "bmmc-n", "dist", "torch"]
PAPER = {  # FHPNC'23, RTX 4090, 2^30 int32
    "copy_ms": 9.3, "naive_transpose_ms": 26.4, "tiled_transpose_ms": 12.2,
    "bpc_pct_max_bw": 92, "bmmc_pct_max_bw": 86,
}
VARIANT_LABEL = {
    "naive": "naive", "tiled": "+tile", "tiled-banks": "+banks", "tiled-banks-iters": "+iters",
    "two-pass": "two-pass (paper's BMMC)", "one-pass": "one-pass (ours)", "generic": "generic (ours, no JIT)",
}
CASE_LABEL = {"random-bpc:1": "random BPC", "random-bmmc:1": "random BMMC", "bit-reverse": "bit-reverse",
              "transpose:15": "transpose 2^15 x 2^15", "transpose": "transpose 2^(n/2) x 2^(n-n/2)"}


# ---- data -------------------------------------------------------------------------------------------------
def load(results, name):
    """Rows of a bench CSV (repeated header lines and malformed rows skipped), typed; [] if missing."""
    path = os.path.join(results, name)
    if not os.path.exists(path):
        return []
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("case") in (None, "case"):
                continue
            try:
                r["n"], r["elem_bytes"] = int(r["n"]), int(r["elem_bytes"])
                for k in ("median_ms", "min_ms", "max_ms", "gbps", "pct_memcpy", "first_use_ms"):
                    r[k] = float(r[k])
            except (KeyError, TypeError, ValueError):
                continue
            r["verified"] = str(r.get("verified", "")).lower() == "true"
            out.append(r)
    return out


def load_errors(results):
    path = os.path.join(results, "torch_errors.csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("case") not in (None, "case")]
    for r in rows:
        r["n"] = int(r["n"])
    return rows


def gpu_name(results):
    p = os.path.join(results, "gpu.txt")
    if not (os.path.exists(p) and os.path.getsize(p)):
        return "GPU: see BENCHMARKS.md".replace("GPU: ", "GPU ")
    return open(p).read().strip().splitlines()[0].split(",")[0].replace("NVIDIA ", "")


def family(case):
    return "transpose" if case.startswith("transpose") else case


def index(rows):
    """(case, n, variant) -> row (first wins); family keys too for transposes."""
    d = {}
    for r in rows:
        d.setdefault((r["case"], r["n"], r["variant"]), r)
        d.setdefault((family(r["case"]), r["n"], r["variant"]), r)
    return d


def memcpy_ms(rows, n=None):
    ms = [r["median_ms"] for r in rows if r["variant"] == "memcpy" and (n is None or r["n"] == n)]
    return statistics.median(ms) if ms else None


def paper_best(ix, case, n):
    """The paper's fastest applicable kernel: tiled-banks-iters for tiled (BPC) maps, else two passes."""
    for v in ("tiled-banks-iters", "two-pass"):
        if (case, n, v) in ix:
            return ix[(case, n, v)]
    return None


def quantile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


# ---- figures ------------------------------------------------------------------------------------------------
def setup_mpl():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 8, "axes.titlesize": 9, "legend.fontsize": 7, "figure.dpi": 90})
    return plt


def save(plt, fig, plots, name):
    path = os.path.join(plots, name)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    try:  # smaller PNGs: quantize to a palette when Pillow is there
        from PIL import Image
        im = Image.open(path).convert("RGB").quantize(colors=128)
        im.save(path, optimize=True)
    except Exception:  # noqa: BLE001 - optional
        pass
    return path


def fig_optimization_times(plt, R, plots, gpu):
    rows = R["variants"]
    if not rows:
        return None, "variants.csv missing"
    ix = index(rows)
    cases = [c for c in ("random-bpc:1", "random-bmmc:1", "bit-reverse", "transpose:15") if any(r["case"] == c for r in rows)]
    variants = [v for v in VARIANT_LABEL if any(r["variant"] == v for r in rows)]
    n = rows[0]["n"]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    w = 0.8 / len(variants)
    colors = plt.get_cmap("tab10")
    for k, v in enumerate(variants):
        xs, ys = [], []
        for i, c in enumerate(cases):
            r = ix.get((c, n, v))
            if r:
                xs.append(i + (k - (len(variants) - 1) / 2) * w)
                ys.append(r["median_ms"])
        bars = ax.bar(xs, ys, w, label=VARIANT_LABEL[v], color=colors(k))
        for b, y in zip(bars, ys):
            ax.text(b.get_x() + b.get_width() / 2, y * 1.06, f"{y:.1f}" if y >= 10 else f"{y:.2f}", ha="center",
                    va="bottom", rotation=90, fontsize=6)
    mc = memcpy_ms(rows, n)
    if mc:
        ax.axhline(mc, color="k", ls="--", lw=0.8, label=f"cudaMemcpy D2D {mc:.2f} ms")
    ax.set_yscale("log")
    ax.set_ylim(top=ax.get_ylim()[1] * 3)
    ax.set_xticks(range(len(cases)), [CASE_LABEL.get(c, c) for c in cases])
    ax.set_ylabel("median time (ms, log scale)")
    ax.set_title(f"Impact of the optimisations, 2^{n} int32, {gpu} (paper: RTX 4090, copy 9.3 ms)")
    ax.text(0.005, 0.985, "random BMMC: the paper's tiled kernels do not apply", transform=ax.transAxes, va="top", fontsize=6)
    ax.legend(ncol=4, loc="upper right")
    return save(plt, fig, plots, "optimization_times.png"), None


def bandwidth_rows(rows):
    """(label, % of memcpy, % of copy kernel, paper %) for the max-bandwidth figure/table. Two-pass counts the
    traffic of both passes (as the paper's BMMC bar does)."""
    ix = index(rows)
    n = rows[0]["n"]
    out = []
    mc = ix.get(("random-bpc:1", n, "memcpy")) or next((r for r in rows if r["variant"] == "memcpy"), None)
    if not mc:
        return out
    spec = [("copy kernel", "random-bpc:1", "copy-kernel", 1, None),
            ("random BPC naive", "random-bpc:1", "naive", 1, None),
            ("random BPC +tile+banks+iters", "random-bpc:1", "tiled-banks-iters", 1, PAPER["bpc_pct_max_bw"]),
            ("random BPC one-pass (ours)", "random-bpc:1", "one-pass", 1, None),
            ("random BMMC naive", "random-bmmc:1", "naive", 1, None),
            ("random BMMC two-pass (2x traffic)", "random-bmmc:1", "two-pass", 2, PAPER["bmmc_pct_max_bw"]),
            ("random BMMC one-pass (ours)", "random-bmmc:1", "one-pass", 1, None)]
    for label, case, v, traffic, paper in spec:
        r = ix.get((case, n, v))
        ck = ix.get((case, n, "copy-kernel"))
        m = ix.get((case, n, "memcpy")) or mc
        if not r:
            continue
        pm = traffic * 100 * m["median_ms"] / r["median_ms"]
        pc = traffic * 100 * ck["median_ms"] / r["median_ms"] if ck else float("nan")
        out.append((label, pm, pc, paper, traffic * r["gbps"]))
    return out


def fig_max_bandwidth(plt, R, plots, gpu):
    rows = R["variants"]
    if not rows:
        return None, "variants.csv missing"
    br = bandwidth_rows(rows)
    fig, ax = plt.subplots(figsize=(7, 3.4))
    xs = range(len(br))
    ax.bar([x - 0.2 for x in xs], [b[1] for b in br], 0.4, label="% of cudaMemcpy D2D bandwidth", color="tab:blue")
    ax.bar([x + 0.2 for x in xs], [b[2] for b in br], 0.4, label="% of our copy kernel (the paper's reference)",
           color="tab:orange")
    px = [x + 0.2 for x, b in zip(xs, br) if b[3] is not None]
    ax.scatter(px, [b[3] for b in br if b[3] is not None], marker="*", s=80, color="k", zorder=3,
               label="paper, RTX 4090 (% of its copy kernel)")
    for x, b in zip(xs, br):
        ax.text(x - 0.2, b[1] + 1, f"{b[1]:.0f}", ha="center", fontsize=6)
        ax.text(x + 0.2, b[2] + 1, f"{b[2]:.0f}", ha="center", fontsize=6)
    ax.set_xticks(list(xs), [b[0].replace("random ", "") for b in br], rotation=20, ha="right")
    ax.set_ylabel("effective bandwidth (%)")
    ax.set_ylim(0, 135)
    ax.set_yticks(range(0, 101, 20))
    ax.set_title(f"Bandwidth of naive and optimised kernels, 2^{rows[0]['n']} int32, {gpu}")
    ax.legend(loc="upper center", ncol=3, fontsize=6)
    return save(plt, fig, plots, "max_bandwidth.png"), None


def nsweep_families(rows):
    order = ["random-bpc:1", "random-bmmc:1", "bit-reverse", "transpose"]
    present = {family(r["case"]) for r in rows}
    return [f for f in order if f in present] + sorted(present - set(order))


def fig_speedup_wrt_n(plt, R, plots, gpu):
    rows = R["nsweep"]
    if not rows:
        return None, "n_sweep.csv missing (pending a GPU run of scripts/bench-gpu.sh)"
    ix = index(rows)
    ns = sorted({r["n"] for r in rows})
    fig, ax = plt.subplots(figsize=(6, 3.6))
    colors = plt.get_cmap("tab10")
    for k, f in enumerate(nsweep_families(rows)):
        pb = [(n, ix[(f, n, "naive")]["median_ms"] / paper_best(ix, f, n)["median_ms"]) for n in ns
              if (f, n, "naive") in ix and paper_best(ix, f, n)]
        op = [(n, ix[(f, n, "naive")]["median_ms"] / ix[(f, n, "one-pass")]["median_ms"]) for n in ns
              if (f, n, "naive") in ix and (f, n, "one-pass") in ix]
        lab = CASE_LABEL.get(f, f)
        if pb:
            ax.plot(*zip(*pb), "-o", ms=3, color=colors(k), label=f"{lab}: paper's best")
        if op:
            ax.plot(*zip(*op), "--s", ms=3, color=colors(k), label=f"{lab}: one-pass (ours)")
    ax.axhline(1, color="gray", lw=0.6)
    ax.set_yscale("log")
    ax.set_xlabel("n (array of 2^n int32)")
    ax.set_ylabel("speedup over naive (log)")
    ax.set_title(f"Speedup for different array sizes ({gpu}); paper's best = +iters (BPC) or two-pass (BMMC)",
                 fontsize=8)
    ax.set_xticks(ns)
    ax.legend(ncol=2, fontsize=6, loc="best")
    return save(plt, fig, plots, "speedup_wrt_n.png"), None


def fig_bmmc_vs_n(plt, R, plots, gpu):
    rows = [r for r in R["nsweep"] if r["case"] == "random-bmmc:1"]
    if not rows:
        return None, "n_sweep.csv missing (pending a GPU run of scripts/bench-gpu.sh)"
    ix = index(rows)
    ns = sorted({r["n"] for r in rows})
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.2))
    styles = [("memcpy", "cudaMemcpy D2D", "k--"), ("copy-kernel", "our copy kernel", "k:"),
              ("one-pass", "one-pass (ours)", "-o"), ("two-pass", "two-pass (paper)", "-s"), ("naive", "naive", "-^")]
    for v, lab, st in styles:
        pts = [(n, ix[("random-bmmc:1", n, v)]) for n in ns if ("random-bmmc:1", n, v) in ix]
        if not pts:
            continue
        a1.plot([p[0] for p in pts], [p[1]["gbps"] for p in pts], st, ms=3, label=lab)
        a2.plot([p[0] for p in pts], [p[1]["pct_memcpy"] for p in pts], st, ms=3, label=lab)
    a1.set_ylabel("GB/s (bytes read + written once)")
    a2.set_ylabel("% of cudaMemcpy (same n, same run)")
    a2.set_ylim(0, 110)
    for a in (a1, a2):
        a.set_xlabel("n (array of 2^n int32)")
        a.set_xticks(ns)
    a1.legend()
    fig.suptitle(f"random-bmmc:1: one pass vs the paper's two passes vs copy ({gpu})", fontsize=9)
    return save(plt, fig, plots, "bmmc_vs_n.png"), None


def dist_source(R):
    if R["dist"]:
        rows = R["dist"]
        return rows, f"dist.csv: {len({r['case'] for r in rows})} random BMMCs, n = {rows[0]['n']}", ["one-pass", "two-pass", "generic"]
    if R["random"]:
        rows = R["random"] + [dict(r, variant="one-pass (BPC)") for r in R["random_bpc"] if r["variant"] == "one-pass"]
        return rows, (f"random.csv / random_bpc.csv: {len({r['case'] for r in R['random']})} random BMMCs, "
                      f"{len({r['case'] for r in R['random_bpc']})} random BPCs, n = {rows[0]['n']}"), ["one-pass", "generic", "one-pass (BPC)"]
    return [], None, []


def fig_dist(plt, R, plots, gpu):
    rows, src, variants = dist_source(R)
    if not rows:
        return None, "dist.csv and random.csv missing"
    data = [(v, [r["pct_memcpy"] for r in rows if r["variant"] == v]) for v in variants]
    data = [(v, d) for v, d in data if d]
    ix = index(rows)
    sp = [ix[(c, rows[0]["n"], "two-pass")]["median_ms"] / ix[(c, rows[0]["n"], "one-pass")]["median_ms"]
          for c in {r["case"] for r in rows} if (c, rows[0]["n"], "two-pass") in ix and (c, rows[0]["n"], "one-pass") in ix]
    fig, axes = plt.subplots(1, 2 if sp else 1, figsize=(8 if sp else 5, 3.2), squeeze=False)
    ax = axes[0][0]
    ax.violinplot([d for _, d in data], showmedians=True)
    import random
    rnd = random.Random(0)
    for i, (_, d) in enumerate(data, 1):
        ax.scatter([i + rnd.uniform(-0.08, 0.08) for _ in d], d, s=4, color="k", alpha=0.5, zorder=3)
    ax.set_xticks(range(1, len(data) + 1), [f"{v}\nmedian {statistics.median(d):.1f}%" for v, d in data])
    ax.set_ylabel("% of cudaMemcpy D2D")
    lo = min(min(d) for _, d in data)
    ax.set_ylim(max(0, lo - 10), 101)
    ax.set_title(src, fontsize=8)
    if sp:
        b = axes[0][1]
        b.hist(sp, bins=20, color="tab:green")
        b.axvline(statistics.median(sp), color="k", ls="--", lw=0.8, label=f"median {statistics.median(sp):.2f}x")
        b.set_xlabel("one-pass speedup over two-pass (x)")
        b.set_ylabel("random BMMCs")
        b.legend()
        b.set_title(f"{len(sp)} random BMMCs", fontsize=8)
    fig.suptitle(f"Random permutations: distribution, {gpu}", fontsize=9)
    return save(plt, fig, plots, "random_dist.png"), None


def ours_at(R, case, n):
    """Our one-pass row for (case, n): n_sweep.csv first, then variants.csv."""
    for rows in (R["nsweep"], R["variants"]):
        for r in rows:
            if r["case"] == case and r["n"] == n and r["variant"] == "one-pass":
                return r
    return None


def fig_torch(plt, R, plots, gpu):
    rows = R["torch"]
    if not rows:
        return None, "torch.csv missing (pending a GPU run with PyTorch)"
    errs = R["torch_errors"]
    cases = [c for c in dict.fromkeys(family(r["case"]) for r in rows if r["case"] != "copy")]
    fig, axes = plt.subplots(1, len(cases), figsize=(3 * len(cases), 3.2), squeeze=False, sharey=True)
    ns_all = sorted({r["n"] for r in rows})
    for ax, f in zip(axes[0], cases):
        for v, st, lab in (("permute-contiguous", "-o", "PyTorch permute().contiguous()"),
                           ("permute-only", ":o", "PyTorch, bit permutation only")):
            pts = [(r["n"], r["gbps"]) for r in rows if family(r["case"]) == f and r["variant"] == v]
            if pts:
                ax.plot(*zip(*sorted(pts)), st, ms=3, color="tab:red", label=lab)
        ours = [(n, o["gbps"]) for n in ns_all for o in [ours_at(R, next((r["case"] for r in rows if family(r["case"]) == f and r["n"] == n), f), n)] if o]
        if ours:
            ax.plot(*zip(*ours), "-s", ms=3, color="tab:blue", label="bmmc one-pass")
        cp = [(r["n"], r["gbps"]) for r in rows if r["case"] == "copy" and r["variant"] == "memcpy"]
        if cp:
            ax.plot(*zip(*sorted(cp)), "k--", lw=0.8, label="memcpy (torch copy_)")
        bad = sorted({e["n"] for e in errs if family(e["case"]) == f and e["variant"] == "permute-contiguous"})
        if bad:
            ax.scatter(bad, [0] * len(bad), marker="x", color="tab:red", zorder=3, clip_on=False,
                       label="PyTorch fails")
        ax.set_title(CASE_LABEL.get(f, f) if f != "transpose" else "transpose 2^(n/2) rows")
        ax.set_xlabel("n (array of 2^n int32)")
        ax.set_xticks(ns_all)
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("GB/s (read + write)")
    axes[0][0].legend(fontsize=6)
    fig.suptitle(f"PyTorch vs bmmc ({gpu})", fontsize=9)
    return save(plt, fig, plots, "torch.png"), None


FIGURES = [fig_optimization_times, fig_max_bandwidth, fig_speedup_wrt_n, fig_bmmc_vs_n, fig_dist, fig_torch]


# ---- markdown -----------------------------------------------------------------------------------------------
def fmt_ms(ms):
    return f"{ms:.2f}" if ms >= 10 else f"{ms:.3f}" if ms >= 0.1 else f"{ms:.4f}"


def cell(r, mc=None):
    if not r:
        return "—"
    pct = 100 * mc / r["median_ms"] if mc else r["pct_memcpy"]
    return f"{fmt_ms(r['median_ms'])} ms ({pct:.1f}%)" + ("" if r["verified"] else " UNVERIFIED")


def md_variants(R):
    rows = R["variants"]
    if not rows:
        return None
    ix = index(rows)
    n = rows[0]["n"]
    vs = [v for v in VARIANT_LABEL if any(r["variant"] == v for r in rows)]
    out = [f"From `variants.csv` (n = {n}, int32; time (% of cudaMemcpy D2D, same run)):", "",
           "| case | memcpy | copy kernel | " + " | ".join(VARIANT_LABEL[v] for v in vs) + " |",
           "|---" * (len(vs) + 3) + "|"]
    for c in dict.fromkeys(r["case"] for r in rows):
        out.append(f"| {c} | {ix[(c, n, 'memcpy')]['median_ms']:.3f} ms | {cell(ix.get((c, n, 'copy-kernel')))} | "
                   + " | ".join(cell(ix.get((c, n, v))) for v in vs) + " |")
    return "\n".join(out)


def md_transpose(R):
    ix = index(R["variants"])
    n = 30
    c = "transpose:15"
    if (c, n, "naive") not in ix:
        return None
    ck = ix.get((c, n, "copy-kernel"))
    def pct(r):  # the paper's "effective bandwidth": copy-kernel time / this time
        return f"{100 * ck['median_ms'] / r['median_ms']:.1f}%" if r and ck else "—"
    def ms(r):
        return f"{r['median_ms']:.2f} ms" if r else "—"
    rows = [("cudaMemcpy D2D", None, ix.get((c, n, "memcpy"))), ("copy kernel", 9.3, ck),
            ("naive transpose", 26.4, ix.get((c, n, "naive"))), ("tiled transpose", 12.2, ix.get((c, n, "tiled"))),
            ("tiled + banks", None, ix.get((c, n, "tiled-banks"))),
            ("tiled + banks + iters", None, ix.get((c, n, "tiled-banks-iters"))),
            ("one-pass (ours)", None, ix.get((c, n, "one-pass")))]
    out = ["§2.3 table, 2^15 × 2^15 int32 transpose (`transpose:15 --n 30`); effective bandwidth = copy-kernel "
           "time / kernel time, as in the paper:", "",
           "| kernel | paper, RTX 4090 | paper, eff. bandwidth | ours | ours, eff. bandwidth |", "|---|---|---|---|---|"]
    for name, paper, r in rows:
        pp = f"{paper} ms" if paper else "—"
        ppct = f"{100 * 9.3 / paper:.1f}%" if paper else "—"
        out.append(f"| {name} | {pp} | {ppct} | {ms(r)} | {pct(r)} |")
    return "\n".join(out)


def md_bandwidth(R):
    if not R["variants"]:
        return None
    br = bandwidth_rows(R["variants"])
    out = [f"Max-bandwidth figure (n = {R['variants'][0]['n']}; two-pass counts the traffic of both passes, as the paper's BMMC bar):", "",
           "| kernel | GB/s moved | % of cudaMemcpy | % of our copy kernel | paper (% of its copy kernel) |", "|---|---|---|---|---|"]
    for label, pm, pc, paper, gb in br:
        out.append(f"| {label} | {gb:.0f} | {pm:.1f}% | {pc:.1f}% | {str(paper) + '%' if paper else '—'} |")
    return "\n".join(out)


def md_nsweep(R):
    rows = R["nsweep"]
    if not rows:
        return None
    ix = index(rows)
    fams = nsweep_families(rows)
    ns = sorted({r["n"] for r in rows})
    out = ["Speedup over naive (`n_sweep.csv`): paper's best kernel (+iters for BPCs, two-pass for BMMCs) / "
           "our one pass:", "",
           "| n | " + " | ".join(CASE_LABEL.get(f, f) for f in fams) + " |", "|---" * (len(fams) + 1) + "|"]
    for n in ns:
        cells = []
        for f in fams:
            nv, pb, op = ix.get((f, n, "naive")), paper_best(ix, f, n), ix.get((f, n, "one-pass"))
            if nv and pb and op:
                cells.append(f"{nv['median_ms'] / pb['median_ms']:.1f}× / **{nv['median_ms'] / op['median_ms']:.1f}×**")
            else:
                cells.append("—")
        out.append(f"| {n} | " + " | ".join(cells) + " |")
    unv = [(r["case"], r["n"], r["variant"]) for r in rows if not r["verified"]]
    if unv:
        out.append(f"\nUNVERIFIED rows: {unv}")
    return "\n".join(out)


def md_bmmc_n(R):
    rows = [r for r in R["nsweep"] if r["case"] == "random-bmmc:1"]
    if not rows:
        return None
    ix = index(rows)
    out = ["`random-bmmc:1` across n (`n_sweep.csv`; ms, % of cudaMemcpy):", "",
           "| n | memcpy | copy kernel | naive | two-pass (paper) | one-pass (ours) | one-pass vs two-pass |",
           "|---|---|---|---|---|---|---|"]
    for n in sorted({r["n"] for r in rows}):
        g = lambda v: ix.get(("random-bmmc:1", n, v))
        tp, op = g("two-pass"), g("one-pass")
        sp = f"{tp['median_ms'] / op['median_ms']:.2f}×" if tp and op else "—"
        out.append(f"| {n} | {g('memcpy')['median_ms']:.4f} ms | {cell(g('copy-kernel'))} | {cell(g('naive'))} | "
                   f"{cell(tp)} | {cell(op)} | {sp} |")
    return "\n".join(out)


def md_dist(R):
    rows, src, variants = dist_source(R)
    if not rows:
        return None
    out = [f"Distribution ({src}), % of cudaMemcpy:", "",
           "| variant | count | median | 10th pct | min | max |", "|---|---|---|---|---|---|"]
    for v in variants:
        d = [r["pct_memcpy"] for r in rows if r["variant"] == v]
        if d:
            out.append(f"| {v} | {len(d)} | {statistics.median(d):.1f}% | {quantile(d, 0.1):.1f}% | {min(d):.1f}% | {max(d):.1f}% |")
    ix = index(rows)
    n = rows[0]["n"]
    sp = [ix[(c, n, "two-pass")]["median_ms"] / ix[(c, n, "one-pass")]["median_ms"]
          for c in {r["case"] for r in rows} if (c, n, "two-pass") in ix and (c, n, "one-pass") in ix]
    if sp:
        out.append(f"\nOne pass over two passes: median **{statistics.median(sp):.2f}×**, min {min(sp):.2f}×, "
                   f"max {max(sp):.2f}× over {len(sp)} random BMMCs.")
    unv = [(r["case"], r["variant"]) for r in rows if not r["verified"]]
    out.append(f"\nAll {len(rows)} rows verified." if not unv else f"\nUNVERIFIED rows: {unv}")
    return "\n".join(out)


def md_torch(R):
    rows = R["torch"]
    if not rows and not R["torch_errors"]:
        return None
    ix = index(rows)
    out = ["PyTorch (`torch.csv`, `torch_errors.csv`) beside our one pass at the same n (ours from `n_sweep.csv` / "
           "`variants.csv`); time (% of the memcpy measured in the same process):", "",
           "| case | n | PyTorch `permute(...).contiguous()` | PyTorch, bit permutation only | bmmc one-pass | bmmc faster by |",
           "|---|---|---|---|---|---|"]
    errs = {(e["case"], e["n"], e["variant"]): e["error"] for e in R["torch_errors"]}
    keys = sorted({(r["case"], r["n"]) for r in rows if r["case"] != "copy"} | {(e["case"], e["n"]) for e in R["torch_errors"]},
                  key=lambda k: (family(k[0]), k[1]))
    for c, n in keys:
        t = ix.get((c, n, "permute-contiguous"))
        po = ix.get((c, n, "permute-only"))
        o = ours_at(R, c, n)
        if t:
            tc = cell(t)
        else:
            e = errs.get((c, n, "permute-contiguous"), "no row")
            tc = "fails: " + (e[:90] + "…" if len(e) > 90 else e).replace("|", "/")
        sp = f"{t['median_ms'] / o['median_ms']:.2f}×" if t and o else "—"
        out.append(f"| {c} | {n} | {tc} | {cell(po) if po else '—'} | {cell(o) if o else '—'} | {sp} |")
    cp = [r for r in rows if r["case"] == "copy"]
    if cp:
        out.append("\nPyTorch copies: " + ", ".join(f"n = {r['n']} {r['variant']} {r['median_ms']:.3f} ms" for r in cp
                                                     if r["n"] in (min(x['n'] for x in cp), max(x['n'] for x in cp))))
    return "\n".join(out)


MARKDOWN = {"variants": md_variants, "transpose": md_transpose, "bandwidth": md_bandwidth, "nsweep": md_nsweep,
            "bmmc-n": md_bmmc_n, "dist": md_dist, "torch": md_torch}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--results", default=os.path.join(HERE, "results"), help="folder of the CSVs (default bench/results)")
    ap.add_argument("--plots", default=os.path.join(HERE, "plots"), help="folder for the PNGs (default bench/plots)")
    ap.add_argument("--markdown", nargs="*", metavar="SECTION", choices=SECTIONS,
                    help=f"print markdown tables instead of plotting; sections: {' '.join(SECTIONS)} (default all)")
    a = ap.parse_args()
    R = {k: load(a.results, f) for k, f in [("variants", "variants.csv"), ("random", "random.csv"),
                                            ("random_bpc", "random_bpc.csv"), ("sizes", "sizes.csv"),
                                            ("nsweep", "n_sweep.csv"), ("dist", "dist.csv"), ("torch", "torch.csv")]}
    R["torch_errors"] = load_errors(a.results)
    gpu = gpu_name(a.results)
    if a.markdown is not None:
        print(f"<!-- bench/plot.py --markdown from {os.path.relpath(a.results)}; {gpu} -->")
        for s in a.markdown or SECTIONS:
            text = MARKDOWN[s](R)
            print(f"\n<!-- section {s} -->")
            print(text if text else f"_{s}: pending the next GPU run (its CSV is not in {os.path.relpath(a.results)})_")
        return 0
    plt = setup_mpl()
    os.makedirs(a.plots, exist_ok=True)
    for f in FIGURES:
        try:
            path, why = f(plt, R, a.plots, gpu)
        except Exception as e:  # noqa: BLE001 - one broken figure must not stop the others
            path, why = None, f"failed: {type(e).__name__}: {e}"
        if path:
            print(f"wrote {os.path.relpath(path)} ({os.path.getsize(path) // 1024} KB)")
        else:
            print(f"skipped {f.__name__[4:]}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
