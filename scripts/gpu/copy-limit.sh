#!/usr/bin/env bash
# The copy limit on one GPU (issue 13, BENCHMARKS.md "The copy limit"): one-pass kernels beside cudaMemcpy,
# the copy kernels and each plan's DRAM probe (its reads and writes without the tile), for every launch order
# (coordinate, input, output, balanced), all in one process per spec list so that every % is against the same memcpy.
# Writes CSVs to $EXTRA_OUT and prints a summary (median / min per order). Run by scripts/gpu-check.sh with BUILD
# set, or alone: BUILD=build-gpu bash scripts/gpu/copy-limit.sh. BMMC_LIMIT_SEEDS (20) and BMMC_LIMIT_REPS (20)
# scale it down. Every bench row is verified on the device (probe rows: every output byte written).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUILD="${BUILD:-build-gpu}"
BMMC_CLI="${BMMC_CLI:-$BUILD/bin/bmmc}"
EXTRA_OUT="${EXTRA_OUT:-/tmp/bmmc-limit}"
SEEDS="${BMMC_LIMIT_SEEDS:-20}"
REPS="${BMMC_LIMIT_REPS:-20}"
mkdir -p "$EXTRA_OUT"
status=0

bench() {  # name, bench args...
  local name=$1
  shift
  timeout 300 "$BMMC_CLI" bench --variant one-pass --block-order coordinate input output balanced --reps "$REPS" --csv "$@" \
    > "$EXTRA_OUT/$name.csv" 2> "$EXTRA_OUT/$name.err" || { echo "FAILED: bench $name"; tail -3 "$EXTRA_OUT/$name.err"; status=1; }
  if grep -q ',false$' "$EXTRA_OUT/$name.csv"; then echo "UNVERIFIED rows in $name"; status=1; fi
}

mapfile -t BMMCS < <(seq 1 "$SEEDS" | sed 's/^/random-bmmc:/')
mapfile -t BPCS < <(seq 1 "$SEEDS" | sed 's/^/random-bpc:/')
bench random-bmmc --n 30 --spec "${BMMCS[@]}"
bench random-bpc --n 30 --spec "${BPCS[@]}"
bench named --n 30 --spec bit-reverse transpose:15 gray identity
for eb in 1 2 8 16; do bench "elem$eb" --n 28 -b "$eb" --spec random-bmmc:1 random-bmmc:2 random-bmmc:3; done
for n in 24 26 28 29; do bench "n$n" --n "$n" --spec random-bmmc:1 random-bmmc:2 random-bmmc:3; done

# Summary: per file and variant, the median and minimum % of memcpy.
python3 - "$EXTRA_OUT" <<'PY'
import csv, glob, os, statistics, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    rows = list(csv.DictReader(open(path)))
    by = {}
    for r in rows:
        by.setdefault(r["variant"], []).append(float(r["pct_memcpy"]))
    name = os.path.basename(path)[:-4]
    print(f"{name:12s} " + "  ".join(f"{v} {statistics.median(p):.1f}/{min(p):.1f}" for v, p in by.items()))
PY
echo "copy-limit.sh: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
