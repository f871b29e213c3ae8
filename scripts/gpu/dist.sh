#!/usr/bin/env bash
# Several GPUs (issues 19 and 14, docs/DESIGN.md §9): the one script for a multi-GPU host of 2, 4 or 8 GPUs
# (H100 or H200 nodes with NVLink; measured on 2 and 4 of each).
# Runs, with NVLink multicast kept off: the peer and NCCL engine tests, compute-sanitizer memcheck on a few of
# them, `bmmc bench --gpus G` (every engine beside cudaMemcpy, the peer-copy bound, NCCL all-to-all and, where
# libcustatevec.so.1 loads, cuStateVec's multi-device swap; every row verified), bmmc_nccl_bench (the portable
# NCCL engine beside NCCL's all-to-all) and the Python API under torchrun on NCCL.
#   BUILD   a directory with bin/bmmc, bin/bmmc_nccl_bench, tests/bmmc_peer_tests, tests/bmmc_nccl_tests
#           (default build-gpu; scripts/pack-gpu.sh builds it here)
#   WHEEL   the bmmc wheel for the torchrun step (default build-python/dist/bmmc-*.whl; skipped if absent)
#   N_C64 / N_I32   index bits of the complex64 and int32 benches (default: 32 GiB per GPU on cards of 120 GB or
#           more, 16 GiB on 80 GB H100s: g + 32 and g + 33, or g + 31 and g + 32, for G = 2^g GPUs), REPS (5)
#   PARTS   which steps run, of: tests sanitize bench nccl python (default all of them; e.g. PARTS="bench nccl
#           python" takes every measurement in one call, the tests in another)
#   cuStateVec's rows need libcustatevec.so.1 on LD_LIBRARY_PATH (the custatevec-cu13 wheel's cuquantum/lib)
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
G=$(nvidia-smi -L | wc -l)
g=0
while (( (1 << g) < G )); do g=$((g + 1)); done
mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
per=$(( mib >= 120000 ? 32 : 31 ))  # log2 of complex64 elements per GPU: 32 GiB, or 16 GiB on 80 GB cards
N_C64="${N_C64:-$((g + per))}" N_I32="${N_I32:-$((g + per + 1))}" REPS="${REPS:-5}"
PARTS="${PARTS:-tests sanitize bench nccl python}"
status=0
step() { echo; echo "== $*"; }
part() { [[ " $PARTS " == *" $1 "* ]]; }
for p in $PARTS; do
  case $p in tests | sanitize | bench | nccl | python) ;; *) echo "dist: unknown part '$p' in PARTS (expected: tests sanitize bench nccl python)" >&2; exit 2 ;; esac
done

step "machine"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -$((G + 1))
echo "G = $G GPUs, N = $N_C64 (complex64) and $N_I32 (int32) index bits"

if part tests; then
  step "tests: bmmc_peer_tests, bmmc_nccl_tests (three times: a rank that blocks shows as a hang, not a failure)"
  for t in bmmc_peer_tests bmmc_nccl_tests bmmc_nccl_tests bmmc_nccl_tests; do
    timeout 300 stdbuf -oL "$BUILD/tests/$t" > "$O/$t.txt" 2>&1
    rc=$?
    grep -E "^\[  (PASSED|FAILED) |^\[  SKIPPED|tests ran" "$O/$t.txt"
    [[ $rc -eq 124 ]] && { echo "HANG: $t ($(grep -E '^\[ RUN' "$O/$t.txt" | tail -1))"; }
    [[ $rc -eq 0 ]] || { echo "FAIL: $t exit $rc"; status=1; }
  done
fi

if part sanitize; then
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
fi

if part bench; then
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
  # Rank bit ↔ local bit 0 and rank bit ↔ top local bit (cuStateVec's multi-device swaps), a random BPC and BMMC.
  top=$((N_C64 - 1))
  bench c64 -b 8 --n "$N_C64" --spec "swap:0,$top" "swap:$((N_C64 - g - 1)),$top" random-bpc:1 random-bmmc:1
  bench i32 -b 4 --n "$N_I32" --spec random-bmmc:1 random-bpc:1 "swap:0,$((N_I32 - 1))" "swap:$((N_I32 - g - 1)),$((N_I32 - 1))"
fi

if part nccl; then
  step "bmmc_nccl_bench (the portable NCCL engine pipelined in 32 pieces and in 1, the fused NCCL engine; 4 buffers per GPU, so n = N_C64 - 1)"
  if [[ -x "$BUILD/bin/bmmc_nccl_bench" ]]; then
    : > "$O/nccl-bench.txt"  # (appended to below: start empty, a warm machine keeps the last call's files)
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
fi

if part python; then
  step "Python under torchrun (NCCL)"
  wheel="${WHEEL:-$(ls build-python/dist/bmmc-*.whl 2>/dev/null | head -1)}"
  if [[ -n "$wheel" ]] && command -v torchrun >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/bmmc-site "$wheel"
    PYTHONPATH=/tmp/bmmc-site timeout 240 torchrun --nproc_per_node "$G" examples/distributed_permute.py --backend nccl \
      --local-bits 24 > "$O/torchrun.txt" 2>&1
    rc=$?
    tail -15 "$O/torchrun.txt"
    [[ $rc -eq 0 ]] || { echo "FAIL: torchrun exit $rc"; status=1; }
    # Timed at half the bench's size per GPU (the Python path holds its input, output and two intermediates);
    # PYTHONSAFEPATH keeps python/ (the source package, without its compiled module) off sys.path.
    PYTHONSAFEPATH=1 PYTHONPATH=/tmp/bmmc-site timeout 300 torchrun --nproc_per_node "$G" python/bench_distributed.py \
      --local-bits $((per - 1)) --dtype complex64 > "$O/torchrun-bench.txt" 2>&1
    rc=$?
    grep -v -i warn "$O/torchrun-bench.txt" | tail -6
    [[ $rc -eq 0 ]] || { echo "FAIL: torchrun bench exit $rc"; status=1; }
  else
    echo "skipped: no wheel ($wheel) or no torchrun"
  fi
fi

echo
echo "dist: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
