#!/usr/bin/env bash
# The ring pipelines of the multi-GPU engines (dist/ring.hpp, docs/DESIGN.md §9.5): the peer and NCCL engine tests,
# then every engine that runs one, timed beside the same rows of a second build (BASE: the tree before a change to
# the pipelines), the two builds alternating ROUNDS times so that drift hits both alike:
#   bmmc bench --devices DEVICES: exchange (one pass of copies) and pieces (PeerCopyRing; rows copy and copy-pieces in builds before the distributed door) for a random BMMC and a
#   rank <-> local-bit-0 swap, and the swap's in-place row (PeerSwapPermuter's staged chunks through PeerCopyRing);
#   bmmc_nccl_bench, only with two GPUs or more (NCCL takes one rank per GPU): nccl-engine (the grouped
#   ncclSend/Recv pipeline), nccl-fused (pieces on the copy engines into LSA windows, for maps that need a finish)
#   and nccl-in-place (the staged chunks into LSA windows).
#   BUILD   the build to check (default build-gpu): bin/bmmc, tests/bmmc_peer_tests, tests/bmmc_nccl_tests and,
#           with NCCL, bin/bmmc_nccl_bench
#   BASE    a build of the tree before the change (optional; without it only BUILD is timed)
#   DEVICES the ranks' devices (default 0,0 on one GPU: both ranks share it, as the peer tests do; else 0,1)
#   N (30), REPS (10), ROUNDS (3), PARTS: which steps run, of: tests bench (default both)
# Build both trees first with scripts/gpu/build.sh (and `source build-gpu/env.sh` for pip's NCCL). Writes logs
# to $OUT (or /tmp/bmmc-pipeline); exit status non-zero when a test failed or a row did not verify.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export BMMC_CACHE_DIR="${BMMC_CACHE_DIR:-/tmp/bmmc-pipeline-cache}"
BUILD="${BUILD:-build-gpu}" BASE="${BASE:-}"
O="${OUT:-/tmp/bmmc-pipeline}"
mkdir -p "$O"
G=$(nvidia-smi -L | wc -l)
DEVICES="${DEVICES:-$([[ $G -ge 2 ]] && echo 0,1 || echo 0,0)}"
N="${N:-30}" REPS="${REPS:-10}" ROUNDS="${ROUNDS:-3}" PARTS="${PARTS:-tests bench}"
status=0
step() { echo; echo "== $*"; }
part() { [[ " $PARTS " == *" $1 "* ]]; }

step "machine: $G GPU(s), devices $DEVICES, n = $N"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader

if part tests; then
  step "tests: the distributed door (CPU and peer groups), bmmc_peer_tests, bmmc_nccl_tests"
  for t in "bmmc_dispatch_tests --gtest_filter=Distributed*" "bmmc_cuda_tests --gtest_filter=DistributedDoorPeer*" \
           bmmc_peer_tests bmmc_nccl_tests; do
    # shellcheck disable=SC2086
    timeout 500 stdbuf -oL "$BUILD/tests/"$t --gtest_color=no > "$O/${t%% *}.txt" 2>&1
    rc=$?
    grep -E "^\[  (PASSED|FAILED) |^\[  SKIPPED|^\[  FAILED  \]|tests ran" "$O/${t%% *}.txt"
    [[ $rc -eq 124 ]] && echo "HANG: $t ($(grep -E '^\[ RUN' "$O/${t%% *}.txt" | tail -1))"
    [[ $rc -eq 0 ]] || { echo "FAIL: $t exit $rc"; status=1; }
  done
fi

# One round: every row of one build, appended to $O/bench-<label>.txt.
top=$((N - 1))
round() {  # label, build
  local label=$1 build=$2 rc
  for args in "-b 8 --spec random-bmmc:1" "-b 8 --spec swap:0,$top" "-b 4 --spec swap:0,$top"; do
    # shellcheck disable=SC2086
    timeout 300 "$build/bin/bmmc" bench --devices "$DEVICES" --n "$N" --reps "$REPS" $args >> "$O/bench-$label.txt" 2>&1
    rc=$?
    [[ $rc -eq 0 ]] || { echo "FAIL: $label bench $args exit $rc"; status=1; }
  done
  if [[ $G -ge 2 && -x "$build/bin/bmmc_nccl_bench" ]]; then
    for run in "random-bmmc:1 $((N + 1)) 8 $REPS" "swap:0,$((N + 1)) $((N + 2)) 4 $REPS"; do
      # shellcheck disable=SC2086
      timeout 300 "$build/bin/bmmc_nccl_bench" $run >> "$O/nccl-$label.txt" 2>&1 ||
        { echo "FAIL: $label nccl $run"; status=1; }
    done
  fi
}
if part bench; then
  : > "$O/bench-check.txt"; : > "$O/bench-base.txt"; : > "$O/nccl-check.txt"; : > "$O/nccl-base.txt"
  for ((i = 1; i <= ROUNDS; ++i)); do
    step "round $i of $ROUNDS"
    [[ -n "$BASE" ]] && round base "$BASE"
    round check "$BUILD"
  done
  step "rows (median ms of each round; check = BUILD, base = BASE)"
  for label in base check; do
    [[ -s "$O/bench-$label.txt" ]] || continue
    echo "-- $label: bmmc bench"
    grep -E "^ *(exchange|pieces|copy|copy-pieces|in-place|in-place-push|push|peer-copy-bound) |over [0-9]+ ranks" "$O/bench-$label.txt"
    if [[ -s "$O/nccl-$label.txt" ]]; then
      echo "-- $label: bmmc_nccl_bench"
      grep -E "nccl-(engine|fused|in-place|alltoall) " "$O/nccl-$label.txt"
    fi
  done
  if grep -hE " NO " "$O"/bench-*.txt | grep -qv "not measured" || grep -qh "verified NO" "$O"/nccl-*.txt; then
    echo "UNVERIFIED rows"; status=1
  fi
fi
echo
echo "pipeline: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
