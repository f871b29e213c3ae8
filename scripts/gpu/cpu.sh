#!/usr/bin/env bash
# Step (run by scripts/gpu-check.sh with BMMC_CLI, BUILD, EXTRA_OUT): the CPU backend on the GPU machine's
# host CPU (an Intel Xeon, where the CI VM is an AMD EPYC), so the run-time-dispatched AVX2 / AVX-512 VBMI
# loops are tested and timed on a second microarchitecture: the cpu-labelled gtests, then scripts/bench-cpu.sh
# on 2 threads (the CI VM's count) and on all cores. Budget: ~4 minutes.
set -uo pipefail
BMMC_CLI="${BMMC_CLI:-build-gpu/bin/bmmc}"
BUILD="${BUILD:-build-gpu}"
EXTRA_OUT="${EXTRA_OUT:-/tmp/bmmc-cpu}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$EXTRA_OUT"
status=0
grep -m1 'model name' /proc/cpuinfo; nproc
grep -m1 -o 'avx512vbmi' /proc/cpuinfo || echo "no avx512vbmi: 1/2-byte elements use the gather loop here"
"$BUILD/tests/bmmc_cpu_tests" --gtest_brief=1 > "$EXTRA_OUT/cpu_tests.log" 2>&1 || status=1
tail -3 "$EXTRA_OUT/cpu_tests.log"
# BMMC_CPU_THREADS ("2 0"), BMMC_CPU_PARTS (bench-cpu.sh PARTS, default "named random sizes"; "tiles" sweeps).
for threads in ${BMMC_CPU_THREADS:-2 0}; do
  BMMC="$BMMC_CLI" OUT="$EXTRA_OUT/threads-$threads" THREADS="$threads" REPS="${BMMC_CPU_REPS:-10}" \
    COUNT="${BMMC_CPU_COUNT:-5}" SIZE_REPS=3 PARTS="${BMMC_CPU_PARTS:-named random sizes}" \
    bash "$HERE/../bench-cpu.sh" > "$EXTRA_OUT/bench-$threads.log" 2>&1 || status=1
  echo "== $threads threads (0 = all)"
  grep -hE '^\| (random-bmmc:1|bit-reverse|transpose|one-pass)|^random BMMCs' "$EXTRA_OUT/threads-$threads"/*.md
done
exit $status
