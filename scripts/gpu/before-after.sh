#!/usr/bin/env bash
# One GPU, two builds side by side: every command below is run by OLD's bmmc and then NEW's, back to back, so a
# change that should not alter speed (a refactor) is checked on the same machine in one run. Writes under $OUT
# (default /tmp/bmmc-before-after): door_ab_onepass.csv, door_ab_inplace.csv (the `bmmc bench --csv` schema with a
# first column `build` = old/new), door_ab_peer.txt (two ranks sharing GPU 0), door_ab_sort.txt, gpu.txt — the
# files bench/results/h200/ holds.
#   OLD=/tmp/old-gpu/bin/bmmc NEW=build-gpu/bin/bmmc bash scripts/gpu/before-after.sh
# Build both with scripts/gpu/build.sh (BUILD=... for the older tree) and `source build-gpu/env.sh` first.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export BMMC_CACHE_DIR="${BMMC_CACHE_DIR:-/tmp/bmmc-cache}"
: "${OLD:?OLD: the bmmc of the older build}" "${NEW:?NEW: the bmmc of the newer build}"
O="${OUT:-/tmp/bmmc-before-after}"
mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$O/gpu.txt"
header=build,case,spec,variant,backend,n,elem_bytes,median_ms,min_ms,max_ms,gbps,pct_memcpy,first_use_ms,verified,bound_ms,x_bound
echo "$header" > "$O/door_ab_onepass.csv"
echo "$header" > "$O/door_ab_inplace.csv"
: > "$O/door_ab_peer.txt"
# columns WHO: a bmmc bench --csv run on stdin as rows of $header, prefixed with the build (columns an older bmmc
# does not print stay empty, so both builds' rows line up).
columns() {
  python3 -c 'import csv, sys
cols = sys.argv[1].split(",")[1:]
w = csv.writer(sys.stdout, lineterminator="\n")
for r in csv.DictReader(sys.stdin): w.writerow([sys.argv[2]] + [r.get(c) or "" for c in cols])' "$header" "$1"
}
# ab FILE ARGS...: the same bmmc command by both builds, rows prefixed with the build (a .csv in $header's columns).
ab() {
  local f=$1 who b
  shift
  for who in old new; do
    b=$([[ $who == old ]] && echo "$OLD" || echo "$NEW")
    if [[ $f == *.csv ]]; then
      "$b" "$@" 2>> "$O/bench_err.txt" | columns "$who" >> "$O/$f"
    else
      "$b" "$@" 2>> "$O/bench_err.txt" | grep -v '^case,' | sed "s/^/$who,/" >> "$O/$f"
    fi
  done
}
ab door_ab_onepass.csv bench --csv --n 30 --reps 10 --spec bit-reverse transpose:15 random-bpc:1 random-bmmc:1 \
  --variant one-pass generic
for b in 1 2 16; do
  ab door_ab_onepass.csv bench --csv --n 28 -b "$b" --reps 10 --spec random-bmmc:1 bit-reverse --variant one-pass
done
ab door_ab_inplace.csv bench --in-place --csv --n 30 -b 8 --reps 10 --spec swap:28,29 swap:0,29 bit-reverse \
  random-bmmc:1 random-bpc:2 gray
for args in "--spec random-bmmc:1 --n 29 -b 4" "--spec swap:0,28 --n 29 -b 8"; do
  # shellcheck disable=SC2086
  ab door_ab_peer.txt bench --devices 0,0 $args --reps 7 --csv
done
for who in old new; do
  b=$([[ $who == old ]] && echo "$OLD" || echo "$NEW")
  echo "== $who"
  timeout 90 "$b" sort --n 24 --random 1 --backend cuda --stats --check 2>&1 | tail -14
done > "$O/door_ab_sort.txt"
