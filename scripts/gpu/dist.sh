#!/usr/bin/env bash
# Several GPUs (issue 19, docs/DESIGN.md §9): the one script for a lent multi-GPU machine (nvidia-h200-x2, or
# nvidia-h100-x2 where that is what is lent).
# Runs, with NVLink multicast kept off: the peer and NCCL engine tests, compute-sanitizer memcheck on a few of
# them, `bmmc bench --gpus G` (every engine beside cudaMemcpy, the peer-copy bound, NCCL all-to-all and, where
# libcustatevec.so.1 loads, cuStateVec's multi-device swap; every row verified), bmmc_nccl_bench (the portable
# NCCL engine beside NCCL's all-to-all) and the Python API under torchrun on NCCL.
#   BUILD   a directory with bin/bmmc, bin/bmmc_nccl_bench, tests/bmmc_peer_tests, tests/bmmc_nccl_tests
#           (default build-gpu; scripts/pack-gpu.sh builds it here)
#   WHEEL   the bmmc wheel for the torchrun step (default build-python/dist/bmmc-*.whl; skipped if absent)
#   N_C64 / N_I32   index bits of the complex64 and int32 benches (33 and 34: 32 GiB and 64 GiB... per GPU
#           is 2^(N-g) elements; in + out + scratch must fit: on 80 GB H100s use N_C64=32 N_I32=33), REPS (5)
# Writes logs to $OUT (or /tmp/bmmc-dist) and prints a summary; exit status non-zero when a test failed or a
# row did not verify.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export BMMC_CACHE_DIR="${BMMC_CACHE_DIR:-/tmp/bmmc-dist-cache}" PYTHONUNBUFFERED=1
BUILD="${BUILD:-build-gpu}"
O="${OUT:-/tmp/bmmc-dist}"
mkdir -p "$O"
N_C64="${N_C64:-33}" N_I32="${N_I32:-34}" REPS="${REPS:-5}"
status=0
step() { echo; echo "== $*"; }

step "machine"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -5
G=$(nvidia-smi -L | wc -l)

step "tests: bmmc_peer_tests, bmmc_nccl_tests (three times: a rank that blocks shows as a hang, not a failure)"
for t in bmmc_peer_tests bmmc_nccl_tests bmmc_nccl_tests bmmc_nccl_tests; do
  timeout 300 stdbuf -oL "$BUILD/tests/$t" > "$O/$t.txt" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED) |^\[  SKIPPED|tests ran" "$O/$t.txt"
  [[ $rc -eq 124 ]] && { echo "HANG: $t ($(grep -E '^\[ RUN' "$O/$t.txt" | tail -1))"; }
  [[ $rc -eq 0 ]] || { echo "FAIL: $t exit $rc"; status=1; }
done

step "compute-sanitizer memcheck"
if command -v compute-sanitizer >/dev/null; then
  # NCCL's own library asks cudaFuncGetAttributes about kernels it has no image for on this GPU (error 209, 4
  # per run, inside libnccl.so.2): its API errors are not reported; memory errors are, as everywhere.
  for spec in "bmmc_peer_tests:PeerPermuter.BadInputRefusedBeforeWriting:PeerPermuter.OnePassOnlyWhenRunsStayOnOneRank:PeerSwap.*" \
              "bmmc_nccl_tests:NcclEngine.OneRankIsALocalPass:NcclPushEngine.OneRankRunsFused:NcclPushEngine.BadBuffers*:NcclSwapEngine.OneRankAndBadInput:NcclPushEngine.TwoOrMoreRanksEveryMapKind:NcclSwapEngine.InvolutionsAcrossRanks"; do
    bin=${spec%%:*} filter=${spec#*:} api=all
    [[ $bin == bmmc_nccl_tests ]] && api=no
    timeout 400 compute-sanitizer --tool memcheck --report-api-errors "$api" --error-exitcode 9 "$BUILD/tests/$bin" \
      --gtest_filter="$filter" > "$O/sanitize-$bin.txt" 2>&1
    rc=$?
    echo "$bin ($filter): $(grep -E 'ERROR SUMMARY' "$O/sanitize-$bin.txt" | tail -1) exit $rc"
    [[ $rc -eq 0 ]] || status=1
  done
else
  echo "compute-sanitizer not found: skipped"
fi

step "bmmc bench --gpus $G"
bench() {  # label, args...
  local label=$1
  shift
  timeout 400 stdbuf -oL "$BUILD/bin/bmmc" bench --gpus "$G" --reps "$REPS" "$@" > "$O/bench-$label.txt" 2>&1
  local rc=$?
  cat "$O/bench-$label.txt"
  [[ $rc -eq 0 ]] || { echo "FAIL: bench $label exit $rc"; status=1; }
  # A row that could not be measured (no cuStateVec, say) carries "not measured" and is not a failure.
  if grep -E " NO " "$O/bench-$label.txt" | grep -qv "not measured"; then echo "UNVERIFIED rows in $label"; status=1; fi
}
top=$((N_C64 - 1))
bench c64 -b 8 --n "$N_C64" --spec "swap:0,$top" "swap:$((top - 1)),$top" random-bpc:1 random-bmmc:1
bench i32 -b 4 --n "$N_I32" --spec random-bmmc:1 "swap:0,$((N_I32 - 1))"

step "bmmc_nccl_bench (the portable NCCL engine pipelined in 32 pieces and in 1, the fused NCCL engine; 4 buffers per GPU, so n = N_C64 - 1)"
if [[ -x "$BUILD/bin/bmmc_nccl_bench" ]]; then
  for run in "random-bmmc:1 $((N_C64 - 1)) 8 $REPS 32" "random-bpc:1 $((N_C64 - 1)) 8 $REPS 32" \
             "swap:0,$((N_C64 - 2)) $((N_C64 - 1)) 8 $REPS 32" "random-bmmc:1 $N_C64 4 $REPS 32" \
             "random-bmmc:1 $((N_C64 - 1)) 8 $REPS 16"; do
    # shellcheck disable=SC2086
    timeout 300 stdbuf -oL "$BUILD/bin/bmmc_nccl_bench" $run 2>&1 | tee -a "$O/nccl-bench.txt"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  done
  grep -q "verified NO" "$O/nccl-bench.txt" && status=1
else
  echo "no $BUILD/bin/bmmc_nccl_bench (built only where NCCL is found)"
fi

step "Python under torchrun (NCCL)"
wheel="${WHEEL:-$(ls build-python/dist/bmmc-*.whl 2>/dev/null | head -1)}"
if [[ -n "$wheel" ]] && command -v torchrun >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/bmmc-site "$wheel"
  PYTHONPATH=/tmp/bmmc-site timeout 240 torchrun --nproc_per_node "$G" examples/distributed_permute.py --backend nccl \
    --local-bits 24 > "$O/torchrun.txt" 2>&1
  rc=$?
  tail -15 "$O/torchrun.txt"
  [[ $rc -eq 0 ]] || { echo "FAIL: torchrun exit $rc"; status=1; }
else
  echo "skipped: no wheel ($wheel) or no torchrun"
fi

echo
echo "dist: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
