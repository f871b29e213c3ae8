#!/usr/bin/env python3
"""The tables of BENCHMARKS.md and README.md, generated from the CSVs under bench/results/.

Python 3 standard library only.

  python3 bench/tables.py                  # rewrite every block between <!-- tables.py:NAME --> and
                                           # <!-- /tables.py:NAME --> in BENCHMARKS.md and README.md
  python3 bench/tables.py --check          # exit 1 (and name the file and blocks) when either is stale
  python3 bench/tables.py --print NAME     # print one block's table
  python3 bench/tables.py --results DIR --file FILE.md

README.md's one speed table (block readme-speed) takes its numbers from the same CSVs as BENCHMARKS.md's
tables, so the two cannot drift apart. Re-run it whenever a CSV under bench/results/ changes
(scripts/bench-gpu.sh and scripts/bench-cpu.sh write them); ctest runs --check (label docs). A block whose CSV is missing fails --check and is never filled with
made-up rows. The GPU tables reuse bench/plot.py's markdown (the figures' own numbers).
"""
import argparse
import csv
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plot  # noqa: E402  (bench/plot.py: CSV loading and the paper-figure tables; matplotlib only for PNGs)

MARKER = re.compile(r"<!-- tables\.py:([a-z0-9-]+) -->\n.*?<!-- /tables\.py:\1 -->", re.S)


def first_line(path, default):
    if not (os.path.exists(path) and os.path.getsize(path)):
        return default
    with open(path) as f:
        return f.read().strip().splitlines()[0]


def pct(xs):
    return f"{statistics.median(xs):.1f}% / {min(xs):.1f}% / {max(xs):.1f}%"


def spread(rows, variant):
    return [r["pct_memcpy"] for r in rows if r["variant"] == variant]


def unverified(rows):
    bad = [f"{r['case']} {r['variant']} n={r['n']}" for r in rows if not r["verified"]]
    return f"\n\nUNVERIFIED rows: {', '.join(bad)}" if bad else ""


# ---- GPU ------------------------------------------------------------------------------------------------
def gpu_machine(R):
    """The GPU line of gpu.txt, with the "run: DATE, commit C" line scripts/bench-gpu.sh adds after it."""
    path = os.path.join(R["dir"], "gpu.txt")
    name = first_line(path, "GPU not recorded (gpu.txt missing)")
    if os.path.exists(path):
        runs = [l.strip()[len("run:"):].strip() for l in open(path) if l.startswith("run:")]
        if runs:
            return f"{name}; run {runs[0]}"
    return name


def gpu_run_date(R):
    """The DATE of gpu.txt's "run: DATE, commit C" line, or None."""
    path = os.path.join(R["dir"], "gpu.txt")
    if not os.path.exists(path):
        return None
    runs = [l.strip()[len("run:"):].strip() for l in open(path) if l.startswith("run:")]
    return re.split(r"[ ,]", runs[0], maxsplit=1)[0] if runs else None


def t_gpu_machine(R):
    if not (R["variants"] or R["random"]):
        return None
    return f"GPU tables below: **{gpu_machine(R)}** (`bench/results/gpu.txt`, written by `scripts/bench-gpu.sh`)."


def t_gpu_random(R):
    rnd, bpc, var = R["random"], R["random_bpc"], R["variants"]
    if not rnd:
        return None
    n = rnd[0]["n"]
    out = [f"n = {n}, int32; % of `cudaMemcpy` D2D in the same run, median / min / max over the maps "
           f"(`random.csv`, `random_bpc.csv`, `variants.csv`):", "",
           "| maps | kernel | count | % of memcpy (median / min / max) |", "|---|---|---|---|"]
    for label, rows, v in [("`random-bmmc:1..20`", rnd, "one-pass"), ("`random-bmmc:1..20`", rnd, "generic"),
                           ("`random-bpc:1..20`", bpc, "one-pass")]:
        xs = spread(rows, v)
        if xs:
            out.append(f"| {label} | {v} | {len(xs)} | {pct(xs)} |")
    ix = plot.index(var)
    for c in dict.fromkeys(r["case"] for r in var):
        r = ix.get((c, n, "one-pass"))
        if r:
            out.append(f"| `{c}` | one-pass | 1 | {r['pct_memcpy']:.1f}% |")
    ck = spread(rnd, "copy-kernel")
    if ck:
        out.append(f"\nThe plain 16-byte copy kernel (`copy-kernel` rows of the same runs): median {statistics.median(ck):.1f}% "
                   "of `cudaMemcpy`.")
    return "\n".join(out) + unverified(rnd + bpc)


def t_gpu_sizes(R):
    rows = R["sizes"]
    if not rows:
        return None
    out = ["`sizes.csv`: n = 20 (small arrays) and n = 28 with 1- to 16-byte elements; time and % of `cudaMemcpy` D2D "
           "in the same run:", "",
           "| case | n | bytes | memcpy | one-pass | generic |", "|---|---|---|---|---|---|"]
    by = {}
    for r in rows:
        by.setdefault((r["case"], r["n"], r["elem_bytes"]), {})[r["variant"]] = r
    for (c, n, eb), v in by.items():
        m = v.get("memcpy")
        out.append(f"| `{c}` | {n} | {eb} | {m['median_ms']:.4f} ms | {plot.cell(v.get('one-pass'))} | "
                   f"{plot.cell(v.get('generic'))} |")
    return "\n".join(out) + unverified(rows)


def t_gpu_explore(R):
    rows = R["explore"]
    if not rows:
        return None
    cases = list(dict.fromkeys(r["case"] for r in rows))
    variants = [v for v in dict.fromkeys(r["variant"] for r in rows) if v != "memcpy"]
    ix = plot.index(rows)
    n = rows[0]["n"]
    out = [f"`explore.csv` (n = {n}, int32; % of `cudaMemcpy` D2D): `one-pass-kK` lanes of 2^K elements "
           "(`--vector-bits K`), `-streaming` `__ldcs/__stcs` (`--streaming`), `-eptE` E elements per thread:", "",
           "| variant | " + " | ".join(f"`{c}`" for c in cases) + " |", "|---" * (len(cases) + 1) + "|"]
    for v in variants:
        out.append(f"| {v} | " + " | ".join(f"{ix[(c, n, v)]['pct_memcpy']:.1f}%" if (c, n, v) in ix else "—"
                                             for c in cases) + " |")
    return "\n".join(out) + unverified(rows)


def t_python_transpose(R):
    path = os.path.join(R["dir"], "python_transpose.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = ["`python_transpose.csv`: `bmmc.transpose` against torch's `x.permute(...).contiguous()`, float32 tensors; "
           "% of a `copy_` of the same bytes:", "",
           "| n | case | shape | axes | MiB | bmmc ms (% memcpy) | torch ms (% memcpy) | bmmc faster by | equal |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['n']} | {r['case']} | {r['shape']} | {r['axes']} | {r['MiB']} | {r['bmmc_ms']} "
                   f"({r['bmmc_pct_memcpy']}%) | {r['torch_ms']} ({r['torch_pct_memcpy']}%) | {r['speedup']}× | {r['equal']} |")
    return "\n".join(out)


def t_gpu_any_shape(R):
    """The any-shape suite (h200/any_shape.csv and any_shape_torch.csv): the front door's kernel beside the
    generic kernel, in place, torch eager and torch.compile, each as % of its own run's copy."""
    path = os.path.join(R["dir"], "h200", "any_shape.csv")
    tpath = os.path.join(R["dir"], "h200", "any_shape_torch.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    torch_rows = []
    if os.path.exists(tpath):
        with open(tpath, newline="") as f:
            torch_rows = list(csv.DictReader(f))
    machine = first_line(os.path.join(R["dir"], "h200", "any_shape.txt"), "H200")
    names = list(dict.fromkeys(r["name"] for r in rows))
    out = [f"`h200/any_shape.csv`, `h200/any_shape_torch.csv` ({machine}); % of the copy of the same bytes in the "
           "same run (`cudaMemcpy` D2D for bmmc, `copy_` for torch); every bmmc row verified:", "",
           "| case | shape → spec | B | bmmc (kernel) | generic | in place | torch eager | torch.compile |",
           "|---|---|---|---|---|---|---|---|"]
    pcts = []
    for n in names:
        mine = {r["variant"]: r for r in rows if r["name"] == n}
        theirs = {r["variant"]: r for r in torch_rows if r["name"] == n}
        door = next((r for v, r in mine.items() if v.startswith("door:")), None)
        if door is None:
            continue
        pcts.append(float(door["pct_memcpy"]))
        cell = lambda r: f"{float(r['pct_memcpy']):.1f}%" if r else "–"
        out.append(f"| {n} | `{door['spec']}` | {door['elem_bytes']} | {float(door['median_ms']):.3f} ms, "
                   f"{float(door['pct_memcpy']):.1f}% ({door['variant'][5:]}) | {cell(mine.get('digit-generic'))} | "
                   f"{cell(mine.get('digit-inplace'))} | {cell(theirs.get('torch-eager'))} | "
                   f"{cell(theirs.get('torch-compile'))} |")
    pcts.sort()
    if pcts:
        out += ["", f"bmmc over the suite: median {pcts[len(pcts) // 2]:.1f}%, worst {pcts[0]:.1f}%, best {pcts[-1]:.1f}%."]
    bad = [f"{r['name']} {r['variant']}" for r in rows if r["verified"].lower() not in ("true", "yes")]
    return "\n".join(out) + (f"\n\nUNVERIFIED rows: {', '.join(bad)}" if bad else "")


def policy_table(path, intro):
    """Cases across, planner policies (`digit` and the `digit[...]` rows of --digit-tune) down: % of cudaMemcpy."""
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["variant"] == "digit" or r["variant"].startswith("digit[")]
    names = list(dict.fromkeys(r["name"] for r in rows))
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    out = [intro, "", "| policy | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for v in variants:
        cells = []
        for n in names:
            r = next((r for r in rows if r["name"] == n and r["variant"] == v), None)
            cells.append(f"{float(r['pct_memcpy']):.1f}" if r else "–")
        out.append(f"| `{v}` | " + " | ".join(cells) + " |")
    bad = [f"{r['name']} {r['variant']}" for r in rows if r["verified"].lower() not in ("true", "yes")]
    return "\n".join(out) + (f"\n\nUNVERIFIED rows: {', '.join(bad)}" if bad else "")


DIGIT_TUNE_INTRO = (
    "`h200/digit_tune.csv` (NVIDIA H200, measured 2026-12-02 with the build that added `--digit-tune`, before "
    "covering vectors; `bmmc bench --backend cuda --shape S --spec X -b E --reps 10 --digit-tune ...` per case of "
    "`bench/any_shape_suite.txt`): the JIT kernel's % of `cudaMemcpy` under other planner policies; `digit` = "
    "the defaults of that build (plan/tuning.hpp). Every row verified.")
DIGIT_COVER_INTRO = (
    "`h200/any_shape.csv` (the run of the table above, `--digit-tune cover=0 --digit-tune cover=1 --digit-tune "
    "skew=0`): the JIT kernel's % of `cudaMemcpy` with the defaults (`digit`: covering reads where rows are four "
    "vectors or longer), without covering vectors (`cover=0`), with covering reads and writes wherever wider "
    "(`cover=1`) and without the read skew (`skew=0`), each case in one process. Every row verified.")


def t_gpu_digit_tune(R):
    """h200/digit_tune.csv (bmmc bench --digit-tune): the digit planner's knobs on the suite's slower cases."""
    return policy_table(os.path.join(R["dir"], "h200", "digit_tune.csv"), DIGIT_TUNE_INTRO)


def t_gpu_digit_cover(R):
    """h200/any_shape.csv's --digit-tune rows: covering vectors and the read skew off, beside the defaults."""
    return policy_table(os.path.join(R["dir"], "h200", "any_shape.csv"), DIGIT_COVER_INTRO)


def t_gpu_small_odd(R):
    """h200/python_sweep_odd.csv (python/bench_transpose.py --sections sweep --odd): small tensors of odd extents,
    bmmc.transpose against torch's permute().contiguous()."""
    path = os.path.join(R["dir"], "h200", "python_sweep_odd.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = ["`h200/python_sweep_odd.csv` (NVIDIA H200, torch 2.11, the wheel of commit 3504265; `python3 "
           "python/bench_transpose.py --sections sweep --odd --max-mib 16 --shapes 4 --reps 20`): random shapes of "
           "odd extents (rank 2–4, float16 / float32 / int64 / complex64 / uint8, random axes) per size; speedup = "
           "torch's time / bmmc's; lat = one call alone, host time included (event, call, event, synchronize); "
           "pipe = calls back to back. Every result equal to torch's.", "",
           "| MiB | shapes | lat speedup min | lat median | pipe min | pipe median |", "|---|---|---|---|---|---|"]
    for mib in dict.fromkeys(r["size_mib"] for r in rows):
        lat = [float(r["speedup"]) for r in rows if r["size_mib"] == mib]
        pipe = [float(r["speedup_pipe"]) for r in rows if r["size_mib"] == mib]
        out.append(f"| {mib} | {len(lat)} | {min(lat):.2f}× | {statistics.median(lat):.2f}× | {min(pipe):.2f}× | "
                   f"{statistics.median(pipe):.2f}× |")
    bad = [f"{r['shape']} {r['dtype']}" for r in rows if r["equal"].lower() != "true"]
    return "\n".join(out) + (f"\n\nUNEQUAL rows: {', '.join(bad)}" if bad else "")


def t_gpu_inplace_sweep(R):
    """h200/inplace_sweep.csv (scripts/gpu/inplace-sweep.sh): held-out swap sets in place against their bound."""
    path = os.path.join(R["dir"], "h200", "inplace_sweep.csv")
    cpath = os.path.join(R["dir"], "h200", "inplace_sweep_cases.txt")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    masks = {}
    if os.path.exists(cpath):
        for line in open(cpath):
            parts = line.strip().split(";")
            if len(parts) >= 5:
                masks[parts[0]] = parts[4] or "–"
    out = ["`h200/inplace_sweep.csv` (NVIDIA H200; cases `h200/inplace_sweep_cases.txt`); bound = the 32-byte sectors "
           "that hold an element that moves, read and written once at `cudaMemcpy`'s rate in the same run:", "",
           "| case | n | B | pairs | mask | moves | in place ms | × bound | % memcpy | verified |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    within = total = 0
    for r in rows:
        if r["variant"] != "in-place-1-pass" and not r["variant"].startswith("in-place"):
            continue
        mem = next((m for m in rows if m["id"] == r["id"] and m["variant"] == "memcpy"), None)
        pairs = len(r["case"].split(":", 1)[1].split(",")) // 2
        moves = float(r["bound_ms"]) / float(mem["median_ms"]) if mem else float("nan")
        xb = float(r["x_bound"])
        total += 1
        within += xb <= 1.15
        out.append(f"| {r['id']} | {r['n']} | {r['elem_bytes']} | {pairs} | {masks.get(r['id'], '–')} | {moves:.3f} | "
                   f"{float(r['median_ms']):.3f} | {xb:.2f} | {float(r['pct_memcpy']):.1f}% | {r['verified']} |")
    out += ["", f"{within} of {total} cases within 1.15× their bound."]
    return "\n".join(out)


def t_cpu_any_shape(R):
    """cpu/any_shape_cpu.csv (bench/any_shape_cpu.py): odd shapes on the CPU beside NumPy and a power-of-two shape."""
    path = os.path.join(R["dir"], "cpu", "any_shape_cpu.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return None
    out = [f"`cpu/any_shape_cpu.csv` ({rows[0]['machine']}, {rows[0]['threads']} threads, best median of "
           f"{rows[0]['rounds']} rounds; arrays of about 64 MiB):", "",
           "| case | shape → spec | bmmc ms (% memcpy) | NumPy ms | × NumPy | power-of-two shape ms | bmmc ÷ power of two |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['case']} ({r['dtype']}) | {r['shape']} → `{r['spec']}` | {float(r['bmmc_ms']):.2f} "
                   f"({float(r['bmmc_pct_memcpy']):.0f}%) | {float(r['numpy_ms']):.2f} | {float(r['x_numpy']):.1f}× | "
                   f"{float(r['pow2_ms']):.2f} | {float(r['vs_pow2']):.2f}× |")
    bad = [r["case"] for r in rows if r["verified"].lower() not in ("true", "yes")]
    return "\n".join(out) + (f"\n\nUNVERIFIED rows: {', '.join(bad)}" if bad else "")


# ---- CPU ------------------------------------------------------------------------------------------------
def cpu_machine(R):
    path = os.path.join(R["dir"], "cpu", "cpu.txt")
    if not os.path.exists(path):
        return "CPU not recorded (cpu/cpu.txt missing)"
    lines = open(path).read().strip().splitlines()
    # date, "model name : X", "cores: N", kernel (scripts/bench-cpu.sh)
    model = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("model name")), "unknown model")
    cores = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("cores")), "?")
    return f"{model}, {cores} cores, measured {lines[0]}"


def cpu_table(rows):
    out = ["| case | n | bytes | memcpy ms | naive ms | one-pass ms | % of memcpy | × naive | gather loop ms | gather % of memcpy |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    by = {}
    for r in rows:
        by.setdefault((r["case"], r["n"], r["elem_bytes"]), {})[r["variant"]] = r
    for (c, n, eb), v in by.items():
        m, nv, op, g = v.get("memcpy"), v.get("naive"), v.get("one-pass"), v.get("one-pass-gather")
        if not (m and op):
            continue
        speed = f"{nv['median_ms'] / op['median_ms']:.1f}×" if nv else "—"
        naive = f"{nv['median_ms']:.1f}" if nv else "—"
        gather = f"{g['median_ms']:.2f} | {g['pct_memcpy']:.1f}%" if g else "— | —"
        out.append(f"| `{c}` | {n} | {eb} | {m['median_ms']:.2f} | {naive} | {op['median_ms']:.2f} | "
                   f"{op['pct_memcpy']:.1f}% | {speed} | {gather} |")
    return out


def t_cpu_named(R):
    rows = R["cpu_named"]
    if not rows:
        return None
    return "\n".join([f"`cpu/cpu_named.csv` ({cpu_machine(R)}; all cores):", ""] + cpu_table(rows)) + unverified(rows)


def t_cpu_random(R):
    rows = R["cpu_random"]
    if not rows:
        return None
    out = [f"`cpu/cpu_random.csv` ({cpu_machine(R)}; all cores):", ""] + cpu_table(rows)
    xs = spread(rows, "one-pass")
    out.append(f"\nOne pass over {len(xs)} random BMMCs: % of memcpy median / min / max {pct(xs)}.")
    return "\n".join(out) + unverified(rows)


def t_cpu_sizes(R):
    rows = R["cpu_sizes"]
    if not rows:
        return None
    return "\n".join([f"`cpu/cpu_sizes.csv` ({cpu_machine(R)}; all cores; `random-bmmc:1`, arrays of 256 MiB):", ""]
                     + cpu_table(rows)) + unverified(rows)


# In place (cpu/inplace/cpu_inplace.csv, scripts/bench-cpu.sh part "inplace"): time in place ÷ (the out-of-place
# one-pass time × the passes), both from the same run (gbps: two bytes moved per array byte in both).
INPLACE_MAPS = [("bit-reverse", "bit-reverse"), ("swap:0,N-1", "swap0"), ("swap:0,N-1,1,N-2", "swap01"),
                ("swap:N-2,N-1", "swaphi"), ("inv(random-bmmc:3)*bit-reverse*random-bmmc:3", "conj"),
                ("transpose:N/2", "transpose"), ("random-bmmc:1", "random")]
INPLACE_GOAL = 1.3


def inplace_label(case, n):
    generic = case.replace(f"{n - 1}", "N-1").replace(f"{n - 2}", "N-2").replace(f"transpose:{n // 2}", "transpose:N/2")
    return dict(INPLACE_MAPS).get(generic, case)


def inplace_ratios(R):
    """{(bytes, threads, n): {label: (ratio, passes)}} from cpu/inplace/cpu_inplace.csv, or None."""
    path = os.path.join(R["dir"], "cpu", "inplace", "cpu_inplace.csv")
    if not os.path.exists(path):
        return None
    by = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (int(r["elem_bytes"]), int(r["threads"]), int(r["n"]), r["case"])
            by.setdefault(key, {})[r["variant"]] = r
    out = {}
    for (eb, t, n, case), v in by.items():
        ip = next((k for k in v if k.startswith("in-place-")), None)
        if ip is None or "one-pass" not in v:
            continue
        passes = int(ip.split("-")[2])
        if passes == 0 or v[ip]["verified"].lower() != "true" or v["one-pass"]["verified"].lower() != "true":
            continue
        ratio = float(v["one-pass"]["gbps"]) / float(v[ip]["gbps"]) / passes
        out.setdefault((eb, t, n), {})[inplace_label(case, n)] = (ratio, passes)
    return out or None


def inplace_machine(R):
    path = os.path.join(R["dir"], "cpu", "inplace", "cpu.txt")
    if not os.path.exists(path):
        return "CPU not recorded (cpu/inplace/cpu.txt missing)"
    lines = open(path).read().strip().splitlines()
    model = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("model name")), "unknown model")
    cores = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("cores")), "?")
    return f"{model}, {cores} cores, measured {lines[0]}"


def inplace_within(rs):
    cells = [ratio for v in rs.values() for ratio, _ in v.values()]
    return sum(c <= INPLACE_GOAL for c in cells), len(cells), statistics.median(cells)


def t_cpu_inplace(R):
    rs = inplace_ratios(R)
    if not rs:
        return None
    ns = sorted({n for _, _, n in rs})
    legend = ", ".join(f"{label} = `{spec}`" for spec, label in INPLACE_MAPS)
    out = [f"`cpu/inplace/cpu_inplace.csv` ({inplace_machine(R)}): in place ÷ (out-of-place one pass × passes), "
           f"both in the same run, 2^n elements; each cell the median over the maps / the slowest map. Maps: "
           f"{legend} (3 passes; the others are involutions: 1 pass).", "",
           "| bytes | threads | " + " | ".join(f"n = {n}" for n in ns) + " |",
           "|---|---|" + "---|" * len(ns)]
    for eb, t in sorted({(eb, t) for eb, t, _ in rs}):
        cells = []
        for n in ns:
            v = rs.get((eb, t, n))
            if not v:
                cells.append("—")
                continue
            worst = max(v, key=lambda k: v[k][0])
            cells.append(f"{statistics.median(r for r, _ in v.values()):.2f} / {v[worst][0]:.2f} {worst}")
        out.append(f"| {eb} | {t} | " + " | ".join(cells) + " |")
    within, total, median = inplace_within(rs)
    over = sorted(((r, eb, t, n, label) for (eb, t, n), v in rs.items() for label, (r, _) in v.items()
                   if r > INPLACE_GOAL), reverse=True)
    shown = over[:8]
    out.append(f"\n{within} of {total} cases within {INPLACE_GOAL}× (median {median:.2f}×)"
               + (": the slowest " + "; ".join(f"{label} n = {n}, {eb} B, {t} thread{'s' if t > 1 else ''} {r:.2f}×"
                                              for r, eb, t, n, label in shown) if shown else "")
               + (f"; {len(over) - len(shown)} more above {INPLACE_GOAL}×" if len(over) > len(shown) else "") + ".")
    return "\n".join(out)


def t_readme_cpu_inplace(R):
    """README's line on in place on the CPU, from the same CSV as BENCHMARKS.md's cpu-inplace table."""
    rs = inplace_ratios(R)
    if not rs:
        return None
    within, total, median = inplace_within(rs)
    ns = sorted({n for _, _, n in rs})
    ebs = sorted({eb for eb, _, _ in rs})
    threads = " and ".join(map(str, sorted({t for _, t, _ in rs})))
    return (f"In place on the CPU (`permute(x, spec, out=x)`, no second array): median {median:.2f}× the "
            f"out-of-place time per pass, {within} of {total} cases within {INPLACE_GOAL}× (2^{ns[0]}–2^{ns[-1]} "
            f"elements of {', '.join(map(str, ebs))} bytes, {threads} threads; BENCHMARKS.md, \"In place on the "
            f"CPU\").")


# ---- README ---------------------------------------------------------------------------------------------
def ms(x):
    return f"{x:.2f} ms" if x < 100 else f"{x:.0f} ms"


def t_readme_speed(R):
    """README's speed table: the headline rows of BENCHMARKS.md's GPU and CPU tables, from the same CSVs."""
    rnd, bpc, var, crnd, cnamed = R["random"], R["random_bpc"], R["variants"], R["cpu_random"], R["cpu_named"]
    if not (rnd and bpc and var and crnd and cnamed):
        return None
    gpu = first_line(os.path.join(R["dir"], "gpu.txt"), "GPU not recorded")
    name, _, driver = gpu.partition(",")
    date = gpu_run_date(R) or "date not recorded"
    cpu_lines = open(os.path.join(R["dir"], "cpu", "cpu.txt")).read().strip().splitlines()
    cpu_model = next((l.split(":", 1)[1].strip() for l in cpu_lines if l.startswith("model name")), "unknown CPU")
    cpu_cores = next((l.split(":", 1)[1].strip() for l in cpu_lines if l.startswith("cores")), "?")
    n, cn = rnd[0]["n"], crnd[0]["n"]

    def group(rows, v):
        xs = [r for r in rows if r["variant"] == v]
        p = [r["pct_memcpy"] for r in xs]
        return (f"{ms(statistics.median(r['median_ms'] for r in xs))}",
                f"{statistics.median(p):.1f}% ({min(p):.1f}–{max(p):.1f}%)", len(xs))

    def one(rows, case, v):
        r = plot.index(rows).get((case, rows[0]["n"], v))
        return (ms(r["median_ms"]), f"{r['pct_memcpy']:.1f}%") if r else None

    gh, ch = "GPU", "CPU"
    out = [f"GPU: **{name.strip()}** (driver {driver.strip()}), measured {date}, 2^{n} int32 ({2 ** n * 4 >> 30} GiB).",
           f"CPU: **{cpu_model}, {cpu_cores} cores**, measured {cpu_lines[0]}, 2^{cn} int32 ({2 ** cn * 4 >> 20} MiB).",
           "% of a copy of the same bytes in the same run (`cudaMemcpy` device to device; on the CPU `memcpy` on as",
           "many threads); the median time, and for a group the median (min–max) over its maps:", "",
           "| maps | where | kernel | time | % of a copy |", "|---|---|---|---|---|"]
    t, p, k = group(rnd, "one-pass")
    out.append(f"| {k} random BMMCs (`random-bmmc:1..{k}`) | {gh} | one pass (JIT) | {t} | {p} |")
    t, p, k = group(rnd, "generic")
    out.append(f"| the same {k} | {gh} | precompiled generic (no JIT) | {t} | {p} |")
    t, p, k = group(bpc, "one-pass")
    out.append(f"| {k} random BPCs (`random-bpc:1..{k}`) | {gh} | one pass (JIT) | {t} | {p} |")
    for case in ("bit-reverse", f"transpose:{n // 2}"):
        c = one(var, case, "one-pass")
        if c:
            out.append(f"| `{case}` | {gh} | one pass (JIT) | {c[0]} | {c[1]} |")
    c = one(var, "random-bmmc:1", "two-pass")
    if c:
        out.append(f"| `random-bmmc:1` | {gh} | the paper's two passes | {c[0]} | {c[1]} |")
    t, p, k = group(crnd, "one-pass")
    out.append(f"| {k} random BMMCs (`random-bmmc:1..{k}`) | {ch} | one pass | {t} | {p} |")
    c = one(cnamed, "bit-reverse", "one-pass")
    if c:
        out.append(f"| `bit-reverse` | {ch} | one pass | {c[0]} | {c[1]} |")
    c = one(crnd, "random-bmmc:1", "naive")
    if c:
        out.append(f"| `random-bmmc:1` | {ch} | naive loop `out[A·x ⊕ c] = in[x]` | {c[0]} | {c[1]} |")
    return "\n".join(out) + unverified(rnd + bpc + var + crnd + cnamed)


TABLES = {
    "gpu-machine": t_gpu_machine,
    "gpu-random": t_gpu_random,
    "gpu-variants": plot.md_variants,
    "gpu-transpose": plot.md_transpose,
    "gpu-bandwidth": plot.md_bandwidth,
    "gpu-sizes": t_gpu_sizes,
    "gpu-explore": t_gpu_explore,
    "gpu-nsweep": plot.md_nsweep,
    "gpu-bmmc-n": plot.md_bmmc_n,
    "gpu-dist": plot.md_dist,
    "gpu-torch": plot.md_torch,
    "python-transpose": t_python_transpose,
    "cpu-named": t_cpu_named,
    "cpu-random": t_cpu_random,
    "cpu-sizes": t_cpu_sizes,
    "readme-speed": t_readme_speed,
    "gpu-any-shape": t_gpu_any_shape,
    "gpu-digit-tune": t_gpu_digit_tune,
    "gpu-digit-cover": t_gpu_digit_cover,
    "gpu-small-odd": t_gpu_small_odd,
    "gpu-inplace-sweep": t_gpu_inplace_sweep,
    "cpu-any-shape": t_cpu_any_shape,
    "cpu-inplace": t_cpu_inplace,
    "readme-cpu-inplace": t_readme_cpu_inplace,
}


def load_all(results):
    R = {k: plot.load(results, f) for k, f in [
        ("variants", "variants.csv"), ("random", "random.csv"), ("random_bpc", "random_bpc.csv"),
        ("sizes", "sizes.csv"), ("explore", "explore.csv"), ("nsweep", "n_sweep.csv"), ("dist", "dist.csv"),
        ("torch", "torch.csv"), ("cpu_named", "cpu/cpu_named.csv"), ("cpu_random", "cpu/cpu_random.csv"),
        ("cpu_sizes", "cpu/cpu_sizes.csv")]}
    R["torch_errors"] = plot.load_errors(results)
    R["dir"] = results
    return R


def render(text, R):
    """(new text, names of blocks whose CSV is missing, names of unknown blocks)."""
    missing, unknown = [], []

    def repl(m):
        name = m.group(1)
        if name not in TABLES:
            unknown.append(name)
            return m.group(0)
        body = TABLES[name](R)
        if not body:
            missing.append(name)
            return m.group(0)
        return f"<!-- tables.py:{name} -->\n{body}\n<!-- /tables.py:{name} -->"

    return MARKER.sub(repl, text), missing, unknown


def process(path, R, check):
    """Rewrite (or, with check, compare) one file's blocks; returns the list of problems."""
    with open(path) as f:
        text = f.read()
    new, missing, unknown = render(text, R)
    found = MARKER.findall(text)
    rel = os.path.relpath(path)
    problems = [f"{rel}: unknown block {u} (known: {' '.join(TABLES)})" for u in unknown]
    problems += [f"{rel}: block {m}: its CSV is missing or empty under {R['dir']}" for m in missing]
    if not found:
        problems.append(f"no <!-- tables.py:NAME --> blocks in {rel}")
    if check:
        stale = [name for name in found if name in TABLES and name not in missing
                 and re.search(rf"<!-- tables\.py:{name} -->\n.*?<!-- /tables\.py:{name} -->", text, re.S).group(0)
                 != re.search(rf"<!-- tables\.py:{name} -->\n.*?<!-- /tables\.py:{name} -->", new, re.S).group(0)]
        problems += [f"{rel}: block {s} is stale: run python3 bench/tables.py" for s in stale]
        if not problems:
            print(f"tables.py --check: {len(found)} blocks of {rel} match {os.path.relpath(R['dir'])}")
        return problems
    if new != text:
        with open(path, "w") as f:
            f.write(new)
    print(f"tables.py: {len(found)} blocks of {rel} from {os.path.relpath(R['dir'])}"
          + (" (rewritten)" if new != text else " (unchanged)"), file=sys.stderr)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 4)[4])
    ap.add_argument("--results", default=os.path.join(HERE, "results"), help="folder of the CSVs (default bench/results)")
    ap.add_argument("--file", action="append",
                    help="a Markdown file to fill (repeatable; default BENCHMARKS.md and README.md)")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when a block differs from its CSVs")
    ap.add_argument("--print", metavar="NAME", choices=sorted(TABLES), help="print one table")
    a = ap.parse_args()
    R = load_all(a.results)
    if a.print:
        body = TABLES[a.print](R)
        print(body if body else f"{a.print}: no data in {a.results}")
        return 0 if body else 1
    files = a.file or [os.path.join(HERE, "..", "BENCHMARKS.md"), os.path.join(HERE, "..", "README.md")]
    problems = []
    for path in files:
        problems += process(os.path.normpath(path), R, a.check)
    for p in problems:
        print(f"tables.py{' --check' if a.check else ''}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
