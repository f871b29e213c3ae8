#!/usr/bin/env bash
# The ONE script run on the GPU host: GPU + NVRTC tests, then benchmarks, logs under $OUT.
#
# The build is prepared elsewhere by scripts/pack-gpu.sh and carried as build-gpu/ (the GPU machine has no
# network and no GoogleTest/CLI11/fmt/json, so nothing is configured or compiled here). ctest files hold the
# absolute paths of the machine that built them; we recreate that path with a symlink when we can, and we
# always also run the gtest binaries directly so that the result does not depend on ctest's paths.
#
# Outputs ($OUT, default ./out; the device tool returns at most 8 files): env.txt (nvidia-smi, versions, ldd),
# tests.log (ctest + direct gtest runs), junit.xml (ctest), bench.log, summary.txt.
# Exit status: non-zero when any test failed (benchmark failures are reported in summary.txt).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${BMMC_GPU_BUILD:-build-gpu}"
OUT="${OUT:-$ROOT/out}"
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

# Keep the device's shared NVLink fabric safe (see the device notes), and the kernel cache hermetic.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export BMMC_CACHE_DIR="${BMMC_CACHE_DIR:-/tmp/bmmc-gpu-check-cache}"

if [[ ! -d "$BUILD" ]]; then
  note "FAIL: $BUILD/ is missing: run scripts/pack-gpu.sh and carry $BUILD"
  exit 2
fi
note "bmmc gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
note "built from commit $(cat "$BUILD/bmmc-pack-commit.txt" 2>/dev/null || echo '?') at $(cat "$BUILD/bmmc-pack-root.txt" 2>/dev/null || echo '?')"

# ---- NVRTC: the carried binaries link libnvrtc.so.13 dynamically; find one if the loader cannot ----------
find_nvrtc_dir() {
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64 \
           /usr/local/cuda-13*/targets/x86_64-linux/lib; do
    [[ -e "$d/libnvrtc.so.13" ]] && { echo "$d"; return 0; }
  done
  # pip's nvidia-cuda-nvrtc wheel (PyTorch's) ships it too.
  local site
  site="$(python3 -c 'import nvidia, os; print(os.path.dirname(list(nvidia.__path__)[0]))' 2>/dev/null)" || true
  if [[ -n "$site" ]]; then
    d="$(find "$site/nvidia" -name 'libnvrtc.so.13' -printf '%h\n' 2>/dev/null | head -1)"
    [[ -n "$d" ]] && { echo "$d"; return 0; }
  fi
  return 1
}
PROBE="$BUILD/tests/bmmc_nvrtc_tests"
if [[ -x "$PROBE" ]] && ldd "$PROBE" | grep -q 'libnvrtc.*not found'; then
  if dir="$(find_nvrtc_dir)"; then
    export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    note "libnvrtc.so.13 from $dir"
  else
    note "WARN: libnvrtc.so.13 not found anywhere; NVRTC tests will fail to start"
  fi
fi

# ---- environment ------------------------------------------------------------------------------------------
{
  echo "== nvidia-smi"; nvidia-smi 2>&1 || echo "nvidia-smi failed"
  echo; echo "== nvidia-smi -q (clocks, ECC, power)"; nvidia-smi -q -d CLOCK,ECC,POWER,PERFORMANCE 2>&1 | head -120
  echo; echo "== nvcc"; (nvcc --version || /usr/local/cuda/bin/nvcc --version) 2>&1
  echo; echo "== uname"; uname -a
  echo; echo "== cmake / ctest"; cmake --version 2>&1 | head -1; ctest --version 2>&1 | head -1
  echo; echo "== carried tree status at pack time"; cat "$BUILD/bmmc-pack-status.txt" 2>/dev/null
  for bin in "$BUILD"/bin/* "$BUILD"/tests/bmmc_*_tests; do
    [[ -x "$bin" && -f "$bin" ]] || continue
    echo; echo "== ldd $bin"; ldd "$bin" 2>&1
  done
} > "$OUT/env.txt" 2>&1
note "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'none visible')"

# ---- tests --------------------------------------------------------------------------------------------------
TESTLOG="$OUT/tests.log"
: > "$TESTLOG"
status=0
ctest_ran=0

# 1) ctest, at the path the build was made at (recreated with a symlink if it is free).
PACK_ROOT="$(cat "$BUILD/bmmc-pack-root.txt" 2>/dev/null || echo "$ROOT")"
if [[ ! -e "$PACK_ROOT" ]]; then
  mkdir -p "$(dirname "$PACK_ROOT")" 2>/dev/null && ln -sfn "$ROOT" "$PACK_ROOT" 2>/dev/null
fi
if [[ -n "${BMMC_SKIP_TESTS:-}" ]]; then
  note "tests skipped (BMMC_SKIP_TESTS set)"
elif [[ -e "$PACK_ROOT/$BUILD" && "$(cd "$PACK_ROOT/$BUILD" && pwd -P)" == "$(cd "$BUILD" && pwd -P)" ]]; then
  echo "== ctest -L 'gpu|nvrtc' (via $PACK_ROOT)" >> "$TESTLOG"
  (cd "$PACK_ROOT" && timeout 400 ctest --test-dir "$BUILD" -L 'gpu|nvrtc' --output-on-failure --timeout 240 \
     --output-junit "$OUT/junit.xml") >> "$TESTLOG" 2>&1
  rc=$?
  note "ctest -L 'gpu|nvrtc': exit $rc ($(grep -E 'tests passed|tests failed' "$TESTLOG" | tail -1))"
  [[ $rc -eq 0 ]] || status=1
  ctest_ran=1
else
  note "ctest skipped: $PACK_ROOT/$BUILD is not this tree (and could not be linked); direct runs below"
fi

# 2) Direct gtest runs: the whole suites when ctest could not run; otherwise only the runtime tests whose
#    [ INFO ] lines (device name, first-JIT compile/load times) ctest hides for passing tests — the GPU
#    suites are not run twice.
if [[ -n "${BMMC_SKIP_TESTS:-}" ]]; then
  DIRECT=()
elif [[ $ctest_ran -eq 1 ]]; then
  DIRECT=("$BUILD"/tests/bmmc_cuda_tests)
  FILTER='CudaRuntime.DeviceCaps:CudaRuntime.LoadAndLaunchTrivialKernel'
else
  DIRECT=("$BUILD"/tests/bmmc_nvrtc_tests "$BUILD"/tests/bmmc_cuda_tests)
  FILTER='*'
fi
for bin in "${DIRECT[@]}"; do
  [[ -x "$bin" ]] || { note "missing $bin"; status=1; continue; }
  one="$(mktemp)"
  timeout 400 "$bin" --gtest_color=no --gtest_filter="$FILTER" > "$one" 2>&1
  rc=$?
  { echo; echo "== $bin (exit $rc)"; cat "$one"; } >> "$TESTLOG"
  note "$(basename "$bin"): exit $rc; $(grep -E '^\[  (PASSED|SKIPPED|FAILED)  ?\] [0-9]+ test' "$one" | tr -s ' ' | paste -sd ';' -)"
  [[ $rc -eq 0 ]] || status=1
  # On the GPU machine a GPU test that skips for want of a GPU is a failure of this check, not a pass.
  if [[ "$(basename "$bin")" == bmmc_cuda_tests ]] && grep -q 'no CUDA GPU' "$one"; then
    note "FAIL: bmmc_cuda_tests saw no CUDA GPU on the GPU machine"
    status=1
  fi
  rm -f "$one"
done
grep -E '^\[ INFO' "$TESTLOG" | sort -u | tee -a "$SUMMARY" > /dev/null

# ---- benchmarks -------------------------------------------------------------------------------------------
# >>> BENCHMARKS: filled in when `bmmc bench` exists (planner/codegen + bench work). Keep the whole run under
# >>> ~8 minutes in all (one device command is limited to 10): tests ~1 min, bench ≤ 400 s, demo ≤ 60 s. Write results as at most 3 more files under $OUT.
BENCHLOG="$OUT/bench.log"
: > "$BENCHLOG"
BMMC_CLI="$BUILD/bin/bmmc"
# CLI11 answers `bmmc anything --help` with the top-level help and exit 0, so ask the help text instead.
has_command() { [[ -x "$BMMC_CLI" ]] && "$BMMC_CLI" --help 2>/dev/null | grep -qE "^[[:space:]]+$1[[:space:]]"; }
if [[ -n "${BMMC_SKIP_BENCH:-}" ]]; then
  note "benchmarks skipped (BMMC_SKIP_BENCH set)"
elif [[ -x scripts/bench-gpu.sh ]] && has_command bench; then
  echo "== scripts/bench-gpu.sh" >> "$BENCHLOG"
  # The device returns at most 8 files: the CSVs travel as one tar.
  CSV_DIR=/tmp/bmmc-bench BMMC="$BMMC_CLI" timeout 420 bash scripts/bench-gpu.sh >> "$BENCHLOG" 2>&1
  note "bench: exit $? (see bench.log; CSVs in bench-csv.tar)"
  tar -C /tmp/bmmc-bench -cf "$OUT/bench-csv.tar" . 2>/dev/null
else
  echo "no 'bmmc bench' command in this build yet" >> "$BENCHLOG"
  note "bench: not available in this build yet"
fi
if has_command demo; then
  # A quick end-to-end smoke run (checks its own results); bounded so it cannot eat the device time.
  { echo; echo "== $BMMC_CLI demo"; } >> "$BENCHLOG"
  timeout 60 "$BMMC_CLI" demo >> "$BENCHLOG" 2>&1
  note "demo: exit $? (see bench.log)"
fi
# <<< BENCHMARKS

# ---- extra GPU steps (python, combinators, sanitizers, plots...): every scripts/gpu/*.sh, each given
# BMMC_CLI, BUILD and its own EXTRA_OUT folder; their outputs travel back as one tar (8 files at most).
for step in scripts/gpu/*.sh; do
  [[ -f "$step" ]] || continue
  name="$(basename "$step" .sh)"
  # BMMC_STEPS="sort python" runs only those steps (a device command is limited to 10 minutes).
  if [[ -n "${BMMC_STEPS:-}" && " $BMMC_STEPS " != *" $name "* ]]; then continue; fi
  mkdir -p "/tmp/bmmc-extra/$name"
  BMMC_CLI="$BMMC_CLI" BUILD="$BUILD" EXTRA_OUT="/tmp/bmmc-extra/$name" timeout "${BMMC_STEP_TIMEOUT:-300}" bash "$step" \
    > "/tmp/bmmc-extra/$name/log.txt" 2>&1
  rc=$?
  note "extra step $name: exit $rc (extra.tar: $name/log.txt)"
  tail -5 "/tmp/bmmc-extra/$name/log.txt" | sed "s/^/  [$name] /" | tee -a "$SUMMARY"
  [[ $rc -eq 0 ]] || status=1
done
[[ -d /tmp/bmmc-extra ]] && tar -C /tmp/bmmc-extra -cf "$OUT/extra.tar" . 2>/dev/null

note "overall: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
