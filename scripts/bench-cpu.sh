#!/usr/bin/env bash
# Writes the CSVs of BENCHMARKS.md's CPU tables (copy them to bench/results/cpu/, then python3 bench/tables.py) in one command, on the machine it runs on (no GPU needed): n = 26 int32 by default, memcpy of the same bytes in the same run.
#   BMMC=build/bin/bmmc OUT=out-cpu scripts/bench-cpu.sh
# Outputs (the `bmmc bench --csv` schema):
#   cpu_named.csv   random-bmmc:1, bit-reverse, transpose:N/2, random-bpc:1, gray, reverse, rotate:1
#   cpu_random.csv  random-bmmc:1..COUNT (the spread over general BMMCs)
#   cpu_sizes.csv   random-bmmc:1 with 1, 2, 8 and 16-byte elements
#   cpu_tiles.csv   (part "tiles") one-pass over tiles 2^11..2^16, register transposes and gather loop, for
#                   random-bmmc:1, bit-reverse, transpose:N/2, random-bpc:1 (no naive rows)
#   cpu_inplace.csv (part "inplace") in place beside out of place in the same run (--in-place, --variant
#                   one-pass; a leading threads column), 2^INPLACE_N elements (14 16 18 20 22 24) of INPLACE_BYTES
#                   (4 8 16) on INPLACE_THREADS threads (1 2): bit-reverse, swap:0,N-1, swap:0,N-1,1,N-2,
#                   swap:N-2,N-1, a conjugated bit-reverse, transpose:N/2 (an involution for even N) and
#                   random-bmmc:1 (3 passes); bench/tables.py's cpu-inplace block is its table
#   cpu.txt         CPU model, cores, kernel; summary.md  the tables as Markdown
# Knobs: REPS (20), N (26), COUNT (10), SIZE_REPS (7), THREADS (0 = all cores), PARTS ("named random sizes";
# add "tiles" for the sweep, "inplace" for in place), INPLACE_REPS (9), INPLACE_THREADS, INPLACE_BYTES, INPLACE_N. ~6 min on the 2-core CI VM (the naive scatter loop takes most of it).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BMMC="${BMMC:-$HERE/../build/bin/bmmc}"
OUT="${OUT:-out-cpu}"
REPS="${REPS:-20}"
N="${N:-26}"
COUNT="${COUNT:-10}"
SIZE_REPS="${SIZE_REPS:-7}"
THREADS="${THREADS:-0}"
PARTS="${PARTS:-named random sizes}"
mkdir -p "$OUT"
[ -x "$BMMC" ] || { echo "bench-cpu.sh: $BMMC not found; build first (cmake -S . -B build && cmake --build build)" >&2; exit 2; }
{ date -u +%F; grep -m1 'model name' /proc/cpuinfo || true; echo "cores: $(nproc)"; uname -r; } >"$OUT/cpu.txt"
run() {  # run CSV_FILE ARGS...: one CSV, header once
  local file=$1; shift
  "$BMMC" bench --backend cpu --n "$N" --reps "$REPS" --threads "$THREADS" --csv "$@" >"$file"
}
has() { [[ " $PARTS " == *" $1 "* ]]; }
if has tiles; then
  : >"$OUT/cpu_tiles.csv"
  for tile in 11 12 13 14 15 16; do
    for loop in --cpu-transpose --cpu-gather; do
      "$BMMC" bench --backend cpu --n "$N" --reps "$REPS" --threads "$THREADS" --csv --variant one-pass \
        --cpu-tile "$tile" $loop --spec random-bmmc:1 --spec bit-reverse --spec "transpose:$((N / 2))" \
        --spec random-bpc:1 | sed "s/,one-pass,/,one-pass${loop/#--cpu-transpose/}-t$tile,/;s/,one-pass--cpu-gather-/,one-pass-gather-/" |
        { if [ -s "$OUT/cpu_tiles.csv" ]; then tail -n +2; else cat; fi; } >>"$OUT/cpu_tiles.csv"
    done
  done
  python3 - "$OUT/cpu_tiles.csv" <<'PY' | tee "$OUT/tiles.md"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if "-t" in r["variant"]]
cases = list(dict.fromkeys(r["case"] for r in rows))
variants = list(dict.fromkeys(r["variant"] for r in rows))
print("| variant | " + " | ".join(cases) + " |")
print("|---|" + "---|" * len(cases))
for v in variants:
    cells = {r["case"]: f'{float(r["pct_memcpy"]):.1f}%' for r in rows if r["variant"] == v}
    print(f"| {v} | " + " | ".join(cells.get(c, "–") for c in cases) + " |")
PY
fi
has named && run "$OUT/cpu_named.csv" --spec random-bmmc:1 --spec bit-reverse --spec "transpose:$((N / 2))" \
  --spec random-bpc:1 --spec gray --spec reverse --spec rotate:1
if has random; then
  specs=()
  for s in $(seq 1 "$COUNT"); do specs+=(--spec "random-bmmc:$s"); done
  run "$OUT/cpu_random.csv" "${specs[@]}"
fi
if has inplace; then
  # One row per (threads, variant): `bmmc bench --csv` with a leading threads column; bench/tables.py
  # (cpu-inplace) makes the table of BENCHMARKS.md from it.
  echo "threads,$("$BMMC" bench --backend cpu --n 10 --reps 1 --csv --variant one-pass | head -1)" >"$OUT/cpu_inplace.csv"
  for t in ${INPLACE_THREADS:-1 2}; do
    for b in ${INPLACE_BYTES:-4 8 16}; do
      for n in ${INPLACE_N:-14 16 18 20 22 24}; do
        specs=(--spec bit-reverse --spec "swap:0,$((n - 1))" --spec "swap:0,$((n - 1)),1,$((n - 2))"
               --spec "swap:$((n - 2)),$((n - 1))" --spec "inv(random-bmmc:3)*bit-reverse*random-bmmc:3"
               --spec "transpose:$((n / 2))" --spec random-bmmc:1)
        "$BMMC" bench --backend cpu --n "$n" -b "$b" --reps "${INPLACE_REPS:-9}" --threads "$t" --csv \
          --variant one-pass --in-place "${specs[@]}" | tail -n +2 | sed "s/^/$t,/" >>"$OUT/cpu_inplace.csv"
      done
    done
  done
fi
if has sizes; then
  : >"$OUT/cpu_sizes.csv"
  for lb in 0 1 3 4; do  # log2 of the element size; n moves so the array keeps 4·2^N bytes
    b=$((1 << lb))
    "$BMMC" bench --backend cpu --n "$((N + 2 - lb))" --reps "$SIZE_REPS" --threads "$THREADS" --csv \
      --spec random-bmmc:1 -b "$b" | { if [ -s "$OUT/cpu_sizes.csv" ]; then tail -n +2; else cat; fi; } >>"$OUT/cpu_sizes.csv"
  done
fi
has named || has random || has sizes || exit 0
python3 - "$OUT" <<'PY' | tee "$OUT/summary.md"
import csv, sys, statistics, os
out = sys.argv[1]
def rows(name):
    with open(os.path.join(out, name)) as f:
        return list(csv.DictReader(f))
def table(rs, title):
    print(f"### {title}\n")
    print("| case | n | bytes | memcpy ms | naive ms | one-pass ms | % memcpy | × naive | gather loop ms | gather % memcpy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    by = {}
    for r in rs:
        by.setdefault((r["case"], r["elem_bytes"]), {})[r["variant"]] = r
    for (case, eb), v in by.items():
        m, nv, op, g = v["memcpy"], v["naive"], v["one-pass"], v.get("one-pass-gather")
        speed = float(nv["median_ms"]) / float(op["median_ms"])
        gcol = f'{float(g["median_ms"]):.2f} | {float(g["pct_memcpy"]):.1f}%' if g else "– | –"
        print(f'| {case} | {m["n"]} | {eb} | {float(m["median_ms"]):.2f} | {float(nv["median_ms"]):.1f} | '
              f'{float(op["median_ms"]):.2f} | {float(op["pct_memcpy"]):.1f}% | {speed:.1f}× | {gcol} |')
    print()
    return by
have = lambda name: os.path.exists(os.path.join(out, name))
if have("cpu_named.csv"):
    table(rows("cpu_named.csv"), "Named permutations")
if have("cpu_random.csv"):
    by = table(rows("cpu_random.csv"), "Random BMMCs")
    pct = [float(v["one-pass"]["pct_memcpy"]) for v in by.values()]
    print(f"random BMMCs: median {statistics.median(pct):.1f}% of memcpy, min {min(pct):.1f}%, max {max(pct):.1f}% over {len(pct)}\n")
if have("cpu_sizes.csv"):
    table(rows("cpu_sizes.csv"), "Element sizes (random-bmmc:1; n lowered so the array stays 256 MiB)")
PY
