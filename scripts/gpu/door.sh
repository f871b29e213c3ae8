#!/usr/bin/env bash
# The distributed front door on a GPU machine (docs/DESIGN.md §9.0): builds, runs its tests and the engines' tests
# (peer groups with repeated devices on one GPU, every GPU of the machine; NCCL ranks as threads, one per GPU), then
# times the peer engines through the door on one GPU with repeated devices — beside BASE's binary (a build of the
# commit before the door, if given) so that the two can be compared row by row.
#   BUILD   build directory (default build-door; configured here with CUDA and, where found, NCCL)
#   BASE    optional: the bmmc binary of the earlier build (e.g. /work/main/build/bin/bmmc)
#   OUT     where the logs and JSON go (default /tmp/bmmc-door)
# Rows: push, exchange, pieces (earlier builds: push, copy, copy-pieces), in-place, in-place-push.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export NCCL_NVLS_ENABLE=0
BUILD="${BUILD:-build-door}" O="${OUT:-/tmp/bmmc-door}"
mkdir -p "$O"
status=0
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$O/configure.log" 2>&1 || { cat "$O/configure.log"; exit 1; }
cmake --build "$BUILD" --target bmmc bmmc_dispatch_tests bmmc_cuda_tests bmmc_peer_tests bmmc_nccl_tests bmmc_nccl_bench \
  >"$O/build.log" 2>&1 || { tail -50 "$O/build.log"; exit 1; }
"$BUILD/tests/bmmc_dispatch_tests" --gtest_filter='Distributed*' >"$O/door_cpu.log" 2>&1 || status=1
"$BUILD/tests/bmmc_cuda_tests" --gtest_filter='DistributedDoorPeer*' >"$O/door_peer.log" 2>&1 || status=1
"$BUILD/tests/bmmc_peer_tests" >"$O/peer_engines.log" 2>&1 || status=1
"$BUILD/tests/bmmc_nccl_tests" >"$O/nccl.log" 2>&1 || status=1
for f in door_cpu door_peer peer_engines nccl; do
  echo "$f: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$O/$f.log" | tr '\n' ' ')"
done
# Timing: one GPU, two and four ranks sharing it, 4-byte random BMMC and the rank <-> local bit 0 swap of complex64.
for devs in 0,0 0,0,0,0; do
  for args in "--spec random-bmmc:1 --n 29 -b 4" "--spec swap:0,28 --n 29 -b 8"; do
    tag="${devs//,/_}_$(echo "$args" | tr ' :,' '___' | tr -s '_')"
    "$BUILD/bin/bmmc" bench --devices "$devs" $args --reps 7 --json >"$O/door_$tag.json" 2>"$O/door_$tag.err" || status=1
    [[ -n "${BASE:-}" ]] && { "$BASE" bench --devices "$devs" $args --reps 7 --json >"$O/base_$tag.json" 2>&1 || status=1; }
    python3 - "$O/door_$tag.json" "${BASE:+$O/base_$tag.json}" <<'PY'
import json, sys
rename = {"copy": "exchange", "copy-pieces": "pieces"}
door = {r["variant"]: r for r in json.load(open(sys.argv[1]))}
base = {rename.get(r["variant"], r["variant"]): r for r in json.load(open(sys.argv[2]))} if len(sys.argv) > 2 and sys.argv[2] else {}
for v, r in door.items():
    b = base.get(v)
    print(f"{r['case']:<16} ranks {r['ranks']} {v:<16} {r['median_ms']:9.3f} ms verified {r['verified']}"
          + (f"  (before {b['median_ms']:9.3f} ms, {r['median_ms'] / b['median_ms']:.3f}x)" if b and b['median_ms'] > 0 else ""))
PY
  done
done
exit $status
