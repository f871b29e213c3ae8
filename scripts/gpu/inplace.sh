#!/usr/bin/env bash
# In place on the GPU (docs/DESIGN.md §8, BENCHMARKS.md "In place"): the in-place tests, compute-sanitizer
# memcheck and racecheck over GpuSanitize.InPlacePlans (≥ 100 random in-place plans), then `bmmc bench
# --in-place` at n = 30 for complex64 and int32 with cudaMemcpy, the out-of-place pass and NVIDIA cuStateVec
# measured in the same run. cuStateVec is found through LD_LIBRARY_PATH (or BMMC_CUSTATEVEC_LIB); ship the
# custatevec-cu13 wheel as the device notes say and add its cuquantum/lib to LD_LIBRARY_PATH; without it the
# cuStateVec rows are simply absent. Run by scripts/gpu-check.sh with BUILD set, or alone: BUILD=build-gpu bash
# scripts/gpu/inplace.sh. BMMC_INPLACE_N (30) and BMMC_INPLACE_REPS (10) scale it down.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUILD="${BUILD:-build-gpu}"
N="${BMMC_INPLACE_N:-30}"
REPS="${BMMC_INPLACE_REPS:-10}"
status=0

"$BUILD/tests/bmmc_cuda_tests" --gtest_color=no --gtest_filter='GpuInPlace.*:GpuSanitize.InPlacePlans' 2>&1 |
  grep -E '^\[ +(OK|FAILED|PASSED|SKIPPED) |Failure|INFO' | head -40
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

if SAN="$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)" && [[ -n "$SAN" ]]; then
  for tool in memcheck racecheck; do
    BMMC_SANITIZE_PLANS=200 timeout 300 "$SAN" --tool "$tool" --error-exitcode 99 "$BUILD/tests/bmmc_cuda_tests" \
      --gtest_color=no --gtest_filter='GpuSanitize.InPlacePlans' > "/tmp/inplace-$tool.log" 2>&1
    rc=$?
    echo "$tool: exit $rc: $(grep -E '(ERROR|RACECHECK) SUMMARY' "/tmp/inplace-$tool.log" | tail -1 | sed 's/^=* *//')" \
         "$(grep -m1 'GpuSanitize:' "/tmp/inplace-$tool.log")"
    [[ $rc -eq 0 ]] || status=1
  done
else
  echo "compute-sanitizer not found: memcheck/racecheck skipped"; status=1
fi

# The issue's cases: a swap of two high bits, swap(0, n-1), bit-reverse, 15 random disjoint swaps, 5 random
# swaps, a random involutive BPC with a complement, a random BMMC (a product of involution passes).
HIGH=$((N - 2)),$((N - 1))
SPECS=("swap:$HIGH" "swap:0,$((N - 1))" "bit-reverse")
if [[ $N -eq 30 ]]; then
  SPECS+=("swap:12,8,6,2,26,5,21,23,28,4,11,1,9,0,24,14,15,25,18,13,17,22,19,7,29,20,27,16,10,3"
          "swap:26,6,1,29,14,3,13,5,0,4" "swap:20,29" "swap:7,29"
          "swap:11,4,10,5,7,14,18,6,1,23,17,2,21,28,9,0^0x30200008"
          "random-bmmc:1" "random-bpc:2" "gray")
fi
for eb in 8 4; do
  echo "== n = $N, $eb-byte elements"
  "$BUILD/bin/bmmc" bench --in-place --n "$N" -b "$eb" --reps "$REPS" --spec "${SPECS[@]}" 2>&1 || status=1
done
exit $status
