#!/usr/bin/env bash
# Regenerates every GPU table of BENCHMARKS.md: run on a GPU machine after scripts/pack-gpu.sh (or with any
# build whose bin/bmmc has CUDA). Writes CSV files under $OUT (default ./out) and prints a summary.
#   BMMC=build-gpu/bin/bmmc OUT=out scripts/bench-gpu.sh
set -uo pipefail
BMMC="${BMMC:-build-gpu/bin/bmmc}"
OUT="${CSV_DIR:-${OUT:-out}}"
REPS="${REPS:-20}"
mkdir -p "$OUT"

# 1. The paper's variants beside ours, n = 30, int32 (paper Figure "optimization-times" + transpose table).
"$BMMC" bench --csv --n 30 --reps "$REPS" --spec bit-reverse transpose:15 random-bpc:1 random-bmmc:1 \
  --variant naive tiled tiled-banks tiled-banks-iters two-pass one-pass generic > "$OUT/variants.csv"

# 2. One-pass over 20 random BMMCs and 20 random BPCs (JIT and the precompiled generic kernel).
specs=(); for s in $(seq 1 20); do specs+=("random-bmmc:$s"); done
"$BMMC" bench --csv --n 30 --reps "$REPS" --spec "${specs[@]}" --variant one-pass generic > "$OUT/random.csv"
specs=(); for s in $(seq 1 20); do specs+=("random-bpc:$s"); done
"$BMMC" bench --csv --n 30 --reps "$REPS" --spec "${specs[@]}" --variant one-pass > "$OUT/random_bpc.csv"

# 3. Small arrays (n = 20) and other element sizes; host overhead of a cached call.
{
  "$BMMC" bench --csv --n 20 --reps 50 --spec random-bmmc:1 bit-reverse --variant one-pass --host-overhead
  for b in 1 2 4 8 16; do
    "$BMMC" bench --csv --n 28 -b "$b" --reps "$REPS" --spec random-bmmc:1 --variant one-pass generic | tail -n +2
  done
} > "$OUT/sizes.csv" 2> "$OUT/host.txt"

# 4. Exploration: lane access width, streaming hints, elements per thread (random BMMC, bit-reverse).
{
  for k in 0 1 2; do "$BMMC" bench --csv --n 30 --reps "$REPS" --spec random-bmmc:1 bit-reverse --variant one-pass --vector-bits $k | sed "s/,one-pass,/,one-pass-k$k,/"; done
  "$BMMC" bench --csv --n 30 --reps "$REPS" --spec random-bmmc:1 bit-reverse --variant one-pass --streaming | sed 's/,one-pass,/,one-pass-streaming,/'
  for e in 8 32; do "$BMMC" bench --csv --n 30 --reps "$REPS" --spec random-bmmc:1 bit-reverse --variant one-pass --elems-per-thread $e | sed "s/,one-pass,/,one-pass-ept$e,/"; done
} > "$OUT/explore.csv"

python3 - "$OUT" <<'PY'
import csv, statistics, sys, os
out = sys.argv[1]
def rows(f):
    p = os.path.join(out, f)
    return [r for r in csv.DictReader(open(p))] if os.path.exists(p) else []
for f in ["variants.csv", "random.csv", "random_bpc.csv", "sizes.csv", "explore.csv"]:
    rs = [r for r in rows(f) if r.get("case") != "case"]
    print(f"== {f}")
    bad = [r for r in rs if r["verified"].lower() != "true"]
    if bad: print("  UNVERIFIED:", [(r["case"], r["variant"]) for r in bad])
    if f.startswith("random"):
        for v in sorted({r["variant"] for r in rs}):
            p = [float(r["pct_memcpy"]) for r in rs if r["variant"] == v]
            print(f"  {v:<14} median {statistics.median(p):6.1f}% of memcpy  min {min(p):6.1f}  max {max(p):6.1f}  over {len(p)}")
    else:
        for r in rs:
            if r["variant"] in ("memcpy",) and f != "sizes.csv": continue
            print(f"  {r['case']:<16} n={r['n']:<3} b={r['elem_bytes']:<3} {r['variant']:<22} {float(r['median_ms']):9.3f} ms {float(r['gbps']):8.1f} GB/s {float(r['pct_memcpy']):6.1f}%  first {float(r['first_use_ms']):7.1f} ms")
PY
cat "$OUT/host.txt" 2>/dev/null | grep -i "host" || true
