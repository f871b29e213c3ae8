#!/usr/bin/env bash
# Regenerates every GPU table and figure input of BENCHMARKS.md in one command: run on a GPU machine after
# scripts/pack-gpu.sh (or with any build whose bin/bmmc has CUDA). Writes CSV files under $OUT (default ./out)
# prints a summary and, where matplotlib is importable, draws the PNGs (bench/plot.py; bench/tables.py fills
# BENCHMARKS.md's tables from the CSVs).
#   BMMC=build-gpu/bin/bmmc OUT=out scripts/bench-gpu.sh
#
# Outputs (all CSVs share the `bmmc bench --csv` schema; stdout of bmmc only, so they stay clean):
#   variants.csv    the paper's variants beside ours, n = 30        (paper Figures "optimization-times",
#                                                                    "max-bandwidth", the §2.3 table)
#   random.csv      one-pass + generic over random-bmmc:1..20, n = 30
#   random_bpc.csv  one-pass over random-bpc:1..20, n = 30
#   sizes.csv       n = 20, and element sizes 1..16 B at n = 28      (+ host.txt: cached-call host time)
#   explore.csv     lane access width, streaming hints, elements per thread
#   n_sweep.csv     n = 20..30: naive / tiled-banks-iters / two-pass / one-pass for random-bpc:1,
#                   random-bmmc:1, bit-reverse, transpose:n/2   (paper Figure "speedup-wrt-n")
#   dist.csv        one-pass / two-pass / generic over random-bmmc:1..100 at n = 28 (the distribution)
#   torch.csv, torch_errors.csv   the same permutations through PyTorch (bench/torch_compare.py), when
#                   `python3 -c "import torch"` works; torch.log its stderr
#   gpu.txt         GPU name and driver, then "run: DATE, commit C";  timings.txt  wall time of each part
# Knobs: REPS (20), PARTS (space-separated subset of: variants random sizes explore nsweep dist torch),
#        NSWEEP ("20 21 ... 30"), DIST_N (28), DIST_COUNT (100), DIST_REPS (= REPS), PYTHON (python3).
# Expected wall time on an H100: ~1.5 min for the first four parts, ~1 min n_sweep, ~1.5 min dist,
# ~0.5 min torch (most of it is NVRTC compiles and 4 GiB fills, not the timed kernels).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BMMC="${BMMC:-build-gpu/bin/bmmc}"
OUT="${CSV_DIR:-${OUT:-out}}"
REPS="${REPS:-20}"
PARTS="${PARTS:-variants random sizes explore nsweep dist torch}"
NSWEEP="${NSWEEP:-$(seq -s ' ' 20 30)}"
DIST_N="${DIST_N:-28}"
DIST_COUNT="${DIST_COUNT:-100}"
DIST_REPS="${DIST_REPS:-$REPS}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
: > "$OUT/timings.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>/dev/null || echo "unknown GPU" > "$OUT/gpu.txt"
# The run's date and commit, which bench/tables.py prints beside the GPU in BENCHMARKS.md.
echo "run: $(date -u +%F), commit $(git -C "$HERE/.." rev-parse --short HEAD 2>/dev/null || echo unknown)" >> "$OUT/gpu.txt"

T0=$SECONDS
want() { [[ " $PARTS " == *" $1 "* ]]; }
# Progress on stderr (bench.log under gpu-check.sh), never in a CSV.
begin() { PART="$1"; PART_T=$SECONDS; echo "[bench-gpu] $1: start at +$((SECONDS - T0)) s" >&2; }
end() { local d=$((SECONDS - PART_T)); echo "[bench-gpu] $PART: done in $d s" >&2; echo "$PART $d s" >> "$OUT/timings.txt"; }
# Appends a bmmc bench --csv run to a file, writing the header only once.
append_csv() {  # append_csv FILE bmmc-bench-args...
  local f="$1"; shift
  if [[ -s "$f" ]]; then "$BMMC" bench --csv "$@" | tail -n +2 >> "$f"; else "$BMMC" bench --csv "$@" > "$f"; fi
}

# 1. The paper's variants beside ours, n = 30, int32 (paper Figure "optimization-times" + transpose table).
if want variants; then begin variants
"$BMMC" bench --csv --n 30 --reps "$REPS" --spec bit-reverse transpose:15 random-bpc:1 random-bmmc:1 \
  --variant naive tiled tiled-banks tiled-banks-iters two-pass one-pass generic > "$OUT/variants.csv"
end; fi

# 2. One-pass over 20 random BMMCs and 20 random BPCs (JIT and the precompiled generic kernel).
if want random; then begin random
specs=(); for s in $(seq 1 20); do specs+=("random-bmmc:$s"); done
"$BMMC" bench --csv --n 30 --reps "$REPS" --spec "${specs[@]}" --variant one-pass generic > "$OUT/random.csv"
specs=(); for s in $(seq 1 20); do specs+=("random-bpc:$s"); done
"$BMMC" bench --csv --n 30 --reps "$REPS" --spec "${specs[@]}" --variant one-pass > "$OUT/random_bpc.csv"
end; fi

# 3. Small arrays (n = 20) and other element sizes; host overhead of a cached call.
if want sizes; then begin sizes
{
  "$BMMC" bench --csv --n 20 --reps 50 --spec random-bmmc:1 bit-reverse --variant one-pass --host-overhead
  for b in 1 2 4 8 16; do
    "$BMMC" bench --csv --n 28 -b "$b" --reps "$REPS" --spec random-bmmc:1 --variant one-pass generic | tail -n +2
  done
} > "$OUT/sizes.csv" 2> "$OUT/host.txt"
end; fi

# 4. Exploration: lane access width, streaming hints, elements per thread (random BMMC, bit-reverse).
if want explore; then begin explore
{
  for k in 0 1 2; do "$BMMC" bench --csv --n 30 --reps "$REPS" --spec random-bmmc:1 bit-reverse --variant one-pass --vector-bits $k | sed "s/,one-pass,/,one-pass-k$k,/"; done
  "$BMMC" bench --csv --n 30 --reps "$REPS" --spec random-bmmc:1 bit-reverse --variant one-pass --streaming | sed 's/,one-pass,/,one-pass-streaming,/'
  for e in 8 32; do "$BMMC" bench --csv --n 30 --reps "$REPS" --spec random-bmmc:1 bit-reverse --variant one-pass --elems-per-thread $e | sed "s/,one-pass,/,one-pass-ept$e,/"; done
} | awk 'NR == 1 || !/^case,/' > "$OUT/explore.csv"   # one header
end; fi

# 5. Paper Figure "speedup-wrt-n": n = 20..30, naive vs the paper's best (tiled-banks-iters for BPCs, which
#    bmmc bench skips for a non-tiled BMMC; two-pass for BMMCs) vs our one pass. Small n get more reps
#    (a 2^20 int32 permutation takes ~5 µs).
if want nsweep; then begin nsweep
rm -f "$OUT/n_sweep.csv"
for n in $NSWEEP; do
  reps="$REPS"; (( n <= 24 )) && reps=$(( REPS * 5 ))
  echo "[bench-gpu] nsweep: n = $n" >&2
  append_csv "$OUT/n_sweep.csv" --n "$n" --reps "$reps" --spec random-bpc:1 random-bmmc:1 bit-reverse "transpose:$((n / 2))" \
    --variant naive tiled-banks-iters two-pass one-pass
done
end; fi

# 6. Distribution over DIST_COUNT random BMMCs: our one pass vs the paper's two passes (and the generic kernel).
if want dist; then begin dist
specs=(); for s in $(seq 1 "$DIST_COUNT"); do specs+=("random-bmmc:$s"); done
"$BMMC" bench --csv --n "$DIST_N" --reps "$DIST_REPS" --spec "${specs[@]}" --variant one-pass two-pass generic > "$OUT/dist.csv"
end; fi

# 7. PyTorch: the same permutations through x.permute(...).contiguous() (bench/torch_compare.py).
if want torch; then
  if "$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    begin torch
    "$PYTHON" "$HERE/../bench/torch_compare.py" --bmmc "$BMMC" --reps "$REPS" --n $NSWEEP \
      --out "$OUT/torch.csv" --errors "$OUT/torch_errors.csv" 2> "$OUT/torch.log"
    echo "[bench-gpu] torch: exit $? (stderr in torch.log)" >&2
    end
  else
    echo "[bench-gpu] torch: skipped (python3 cannot import torch with CUDA)" >&2
    echo "torch skipped" >> "$OUT/timings.txt"
  fi
fi
echo "total $((SECONDS - T0)) s" >> "$OUT/timings.txt"

"$PYTHON" - "$OUT" <<'PY'
import csv, statistics, sys, os
out = sys.argv[1]
def rows(f):
    p = os.path.join(out, f)
    if not os.path.exists(p): return []
    rs = []
    for r in csv.DictReader(open(p)):
        if r.get("case") in (None, "case"): continue
        try: float(r["median_ms"])
        except (KeyError, TypeError, ValueError): continue
        rs.append(r)
    return rs
def fl(r, k): return float(r[k])
print("== GPU:", open(os.path.join(out, "gpu.txt")).read().strip() if os.path.exists(os.path.join(out, "gpu.txt")) else "?")
for f in ["variants.csv", "random.csv", "random_bpc.csv", "sizes.csv", "explore.csv", "n_sweep.csv", "dist.csv", "torch.csv"]:
    rs = rows(f)
    if not rs: continue
    print(f"== {f}")
    bad = [r for r in rs if r["verified"].lower() != "true"]
    if bad: print("  UNVERIFIED:", [(r["case"], r["n"], r["variant"]) for r in bad])
    if f.startswith("random") or f == "dist.csv":
        for v in sorted({r["variant"] for r in rs}):
            p = [fl(r, "pct_memcpy") for r in rs if r["variant"] == v]
            print(f"  {v:<14} median {statistics.median(p):6.1f}% of memcpy  min {min(p):6.1f}  max {max(p):6.1f}  over {len(p)}")
        if f == "dist.csv":
            t = {(r["case"], r["variant"]): fl(r, "median_ms") for r in rs}
            s = [t[(c, "two-pass")] / t[(c, "one-pass")] for c in {r["case"] for r in rs} if (c, "two-pass") in t and (c, "one-pass") in t]
            if s: print(f"  one-pass speedup over two-pass: median {statistics.median(s):.2f}x  min {min(s):.2f}x  max {max(s):.2f}x  over {len(s)}")
    elif f == "n_sweep.csv":
        fam = lambda c: c.split(":")[0] if c.startswith("transpose") else c
        t = {(fam(r["case"]), int(r["n"]), r["variant"]): fl(r, "median_ms") for r in rs}
        for c in dict.fromkeys(fam(r["case"]) for r in rs):
            sp = [f"{n}:{t[(c, n, 'naive')] / t[(c, n, 'one-pass')]:.1f}x" for n in sorted({k[1] for k in t})
                  if (c, n, "naive") in t and (c, n, "one-pass") in t]
            print(f"  {c:<14} one-pass speedup over naive  " + " ".join(sp))
    else:
        for r in rs:
            if r["variant"] in ("memcpy",) and f not in ("sizes.csv", "torch.csv"): continue
            print(f"  {r['case']:<16} n={r['n']:<3} b={r['elem_bytes']:<3} {r['variant']:<22} {fl(r, 'median_ms'):9.3f} ms {fl(r, 'gbps'):8.1f} GB/s {fl(r, 'pct_memcpy'):6.1f}%  first {fl(r, 'first_use_ms'):7.1f} ms")
p = os.path.join(out, "torch_errors.csv")
if os.path.exists(p):
    errs = list(csv.DictReader(open(p)))
    if errs: print(f"== torch_errors.csv: {len(errs)} configurations failed in PyTorch, e.g. n={errs[0]['n']} {errs[0]['case']}: {errs[0]['error'][:160]}")
print("== timings:", open(os.path.join(out, "timings.txt")).read().replace("\n", "; "))
PY
cat "$OUT/host.txt" 2>/dev/null | grep -i "host" || true

# Figures: where matplotlib is importable (it is on the GPU machines), draw every PNG from these CSVs now,
# so this one command writes BENCHMARKS.md's CSVs (bench/tables.py makes the tables) and figures (PNGs under $OUT/plots).
if python3 -c "import matplotlib" 2>/dev/null; then
  python3 "$(dirname "${BASH_SOURCE[0]}")/../bench/plot.py" --results "$OUT" --plots "$OUT/plots" \
    || echo "bench-gpu: plotting failed (the CSVs are complete; run bench/plot.py locally)"
fi
