#!/usr/bin/env bash
# The any-shape suite on one GPU (bench/any_shape_suite.txt): builds what it needs (scripts/gpu/build.sh's
# configuration, targets bmmc and bmmc_cuda_tests), runs the GPU digit tests, then `bmmc bench --shape` for every
# case (memcpy, the JIT and generic kernels and, for involutions, in place, all in one process per case) into
# $OUT/any_shape.csv, and bench/any_shape_torch.py (torch eager and torch.compile beside torch's own copy) into
# $OUT/any_shape_torch.csv when torch imports. Usage on the GPU machine: OUT=dir scripts/gpu/any-shape.sh [REPS]
# BENCH_ARGS adds arguments to every `bmmc bench` (e.g. "--digit-tune cover=0": more rows per case).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT="${OUT:-.}"
REPS="${1:-20}"
BUILD="${BUILD:-build-gpu}"
if [[ ! -x "$BUILD/bin/bmmc" || "${REBUILD:-1}" == 1 ]]; then
  mkdir -p "$BUILD"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBMMC_CUDA=ON -DBMMC_NCCL=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH="$ROOT/.deps/prefix" > "$BUILD/configure.log" 2>&1 ||
    { cat "$BUILD/configure.log"; exit 1; }
  ninja -C "$BUILD" bmmc bmmc_cuda_tests > "$BUILD/build.log" 2>&1 || { tail -60 "$BUILD/build.log"; exit 1; }
fi
if [[ "${TESTS:-1}" == 1 ]]; then
  "$BUILD/tests/bmmc_cuda_tests" --gtest_filter='GpuDigit*' 2>&1 | grep -E "OK|FAIL|Failure|error" || true
fi
csv="$OUT/any_shape.csv"
echo "name,case,spec,variant,backend,n,elem_bytes,median_ms,min_ms,max_ms,gbps,pct_memcpy,first_use_ms,verified,bound_ms,x_bound" > "$csv"
grep -v '^#' bench/any_shape_suite.txt | while IFS=';' read -r name shape spec eb; do
  [[ -z "$name" ]] && continue
  # shellcheck disable=SC2086  # BENCH_ARGS is a list of arguments
  "$BUILD/bin/bmmc" bench --backend cuda --shape "$shape" --spec "$spec" -b "$eb" --reps "$REPS" --in-place --csv \
    ${BENCH_ARGS:-} |
    tail -n +2 | sed "s/^/$name,/" >> "$csv"
done
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    if r["variant"] != "memcpy":
        print(f'{r["name"]:<22} {r["variant"]:<24} {float(r["median_ms"]):8.3f} ms {float(r["pct_memcpy"]):6.1f}% memcpy  verified {r["verified"]}')
PY
if python3 -c 'import torch' 2>/dev/null && [[ "${TORCH:-1}" == 1 ]]; then
  python3 bench/any_shape_torch.py --suite bench/any_shape_suite.txt --reps "$REPS" --out "$OUT/any_shape_torch.csv"
fi
