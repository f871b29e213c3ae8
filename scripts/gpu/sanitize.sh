#!/usr/bin/env bash
# GPU memory and race checking (TESTING.md), run on the GPU machine by scripts/gpu-check.sh with BUILD (the
# carried build-gpu/), BMMC_CLI and EXTRA_OUT set. Runs the gtest GpuSanitize.ManyRandomPlans (hundreds of
# small random plans of every variant, element size and n 5..14, each verified against the CPU reference;
# tests/cuda/sanitize_test.cpp) under compute-sanitizer:
#   memcheck  — out-of-bounds / misaligned global and shared accesses, plus leaks of device allocations;
#   racecheck — shared-memory hazards between threads of a tile kernel (a missing __syncthreads);
#   initcheck — reads of device memory never written (a two-pass plan's temporary read before pass 1 wrote it).
# Prints each tool's summary line ("ERROR SUMMARY: 0 errors", "RACECHECK SUMMARY: 0 hazards ...") and exits
# non-zero on any reported error, failed test, skipped test (no GPU) or timeout. Whole run < 4 minutes:
# each tool has its own time limit; BMMC_SANITIZE_PLANS_<TOOL> overrides a tool's plan count.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUILD="${BUILD:-build-gpu}"
EXTRA_OUT="${EXTRA_OUT:-/tmp/bmmc-sanitize}"
mkdir -p "$EXTRA_OUT"
TESTS="$BUILD/tests/bmmc_cuda_tests"

find_sanitizer() {
  local c
  for c in "$(command -v compute-sanitizer 2>/dev/null)" /usr/local/cuda/bin/compute-sanitizer \
           /usr/local/cuda/compute-sanitizer/compute-sanitizer /usr/local/cuda-13*/bin/compute-sanitizer; do
    [[ -n "$c" && -x "$c" ]] && { echo "$c"; return 0; }
  done
  return 1
}
if ! SAN="$(find_sanitizer)"; then
  echo "FAIL: compute-sanitizer not found (looked on PATH and under /usr/local/cuda*)"
  exit 1
fi
if [[ ! -x "$TESTS" ]]; then
  echo "FAIL: $TESTS is missing (carry build-gpu from scripts/pack-gpu.sh)"
  exit 1
fi
echo "compute-sanitizer: $SAN ($("$SAN" --version 2>&1 | grep -m1 -i version))"
# The runs share the kernel cache on disk (gpu-check.sh sets BMMC_CACHE_DIR), so only the first JIT-compiles.

status=0
# run_tool TOOL PLANS TIME_LIMIT [extra compute-sanitizer options...]
run_tool() {
  local tool=$1 plans=$2 limit=$3
  shift 3
  local log="$EXTRA_OUT/$tool.log" t0=$SECONDS rc
  BMMC_SANITIZE_PLANS="$plans" timeout "$limit" "$SAN" --tool "$tool" --error-exitcode 99 "$@" \
    "$TESTS" --gtest_color=no --gtest_filter='GpuSanitize.*' > "$log" 2>&1
  rc=$?
  local summary
  summary="$(grep -E '(ERROR|RACECHECK) SUMMARY' "$log" | tail -1 | sed 's/^=* *//')"
  echo "$tool: exit $rc in $((SECONDS - t0)) s, $plans plans: ${summary:-no summary line}"
  grep -m1 -F 'GpuSanitize:' "$log" | sed 's/^/  /'
  if [[ $rc -eq 124 ]]; then
    echo "FAIL: $tool ran past ${limit} s (lower BMMC_SANITIZE_PLANS_${tool^^})"; status=1
  elif [[ $rc -ne 0 ]]; then
    echo "FAIL: $tool reported errors or the test failed; first reports:"
    grep -E '^========= (Invalid|Race|Error|Uninitialized|Leaked|Program hit)|\[  FAILED' "$log" | head -20
    status=1
  elif grep -q '\[  SKIPPED \]' "$log" || ! grep -q '\[  PASSED  \] 2 tests' "$log"; then
    echo "FAIL: $tool: the test did not run and pass (no GPU visible?)"; status=1
  fi
}

run_tool memcheck "${BMMC_SANITIZE_PLANS_MEMCHECK:-240}" 100 --leak-check full
run_tool racecheck "${BMMC_SANITIZE_PLANS_RACECHECK:-200}" 100 --racecheck-report all
run_tool initcheck "${BMMC_SANITIZE_PLANS_INITCHECK:-80}" 40
echo "sanitize: $([[ $status -eq 0 ]] && echo PASS || echo FAIL) (logs: memcheck.log racecheck.log initcheck.log)"
exit $status
