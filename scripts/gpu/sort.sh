#!/usr/bin/env bash
# GPU step (run by scripts/gpu-check.sh with BMMC_CLI, BUILD, EXTRA_OUT): the paper's sorting network on 2^24
# int32 keys (and float32), every strategy (fused, the default; folded; permute-then-leaf), against
# cub::DeviceRadixSort and thrust::sort on the same data in the same process, then fused at 2^20, 2^22, 2^26
# and 2^28 (BMMC_SORT_SIZES). Prints one markdown table on stdout; each bmmc run is checked against std::sort.
# Budget: well under 3 minutes (the CPU check takes a few seconds per run at 2^24, ~30 s at 2^28; the first
# fused run of a size JIT-compiles its kernels, cached on disk afterwards).
set -uo pipefail
BMMC_CLI="${BMMC_CLI:-build-gpu/bin/bmmc}"
EXTRA_OUT="${EXTRA_OUT:-/tmp/bmmc-sort}"
mkdir -p "$EXTRA_OUT"
N="${BMMC_SORT_N:-24}"
SIZES="${BMMC_SORT_SIZES:-20 22 26 28}"
REPS="${BMMC_SORT_REPS:-5}"
status=0

if ! "$BMMC_CLI" --help 2>/dev/null | grep -qE '^[[:space:]]+sort[[:space:]]'; then
  echo "no 'bmmc sort' in $BMMC_CLI"; exit 1
fi

"$BMMC_CLI" program sort --n "$N" --depth 2 --stages 12 > "$EXTRA_OUT/program.txt" 2>&1 || status=1

run_n() {  # n, extra args...
  local out n="$1"
  shift
  out="$(timeout 120 "$BMMC_CLI" sort --n "$n" --random 1 --backend cuda --stats --check --reps "$REPS" "$@" 2>&1)"
  local rc=$?
  echo "$out" >> "$EXTRA_OUT/runs.txt"
  [[ $rc -eq 0 ]] || { echo "FAILED (exit $rc): bmmc sort $*" >&2; echo "$out" | tail -5 >&2; status=1; }
  echo "$out"
}
run() { run_n "$N" "$@"; }

: > "$EXTRA_OUT/runs.txt"
{
  run --strategy fused --compare-cub
  run --strategy fused --dtype float32 --compare-cub
  run --strategy folded
  run --strategy permute-then-leaf
  run --strategy folded --dtype float32
  run --strategy fused --fused-kernel registers
  for n in $SIZES; do run_n "$n" --strategy fused; done
} > "$EXTRA_OUT/all.txt"

echo "## sorting network (paper §7.1) vs CUB/Thrust, 2^$N keys (fused also at 2^{${SIZES// /,}}), $REPS timed runs each"
grep -E '^  (before|after) fusion' "$EXTRA_OUT/all.txt" | head -2
grep -E '^  fused:' "$EXTRA_OUT/all.txt" | head -2
grep -m1 -E '^\| method' "$EXTRA_OUT/all.txt"
grep -m1 -E '^\|-' "$EXTRA_OUT/all.txt"
grep -E '^\| (bmmc|cub|thrust|cudaMemcpy)' "$EXTRA_OUT/all.txt"
grep -E '^  per pass' "$EXTRA_OUT/all.txt"
echo "sort.sh: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
