#!/usr/bin/env bash
# GPU step of scripts/gpu-check.sh: the Python package on the GPU machine (PyTorch + CuPy, no network).
#
# Installs the wheel built here by scripts/pack-python.sh and carried as build-python/ (into /tmp, leaving
# the machine's Python environment alone), then runs the whole pytest suite (CPU tests + GPU tests, which
# must not skip here) and the transpose benchmark against PyTorch. Outputs in $EXTRA_OUT: pytest.txt,
# bench_transpose.txt, bench_transpose.csv.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
EXTRA_OUT="${EXTRA_OUT:-$ROOT/out/python}"
mkdir -p "$EXTRA_OUT"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

wheel="$(ls build-python/dist/bmmc-*.whl 2>/dev/null | head -1)"
if [[ -z "$wheel" ]]; then
  echo "python: FAIL: no wheel under build-python/dist: run scripts/pack-python.sh and carry build-python"
  exit 2
fi
echo "python: installing $wheel (built from $(cat build-python/bmmc-pack-commit.txt 2>/dev/null || echo '?'))"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/bmmc-site "$wheel" \
  || { echo "python: FAIL: pip could not install $wheel"; exit 2; }
export PYTHONPATH=/tmp/bmmc-site${PYTHONPATH:+:$PYTHONPATH}
python3 -c 'import bmmc, torch; print("python:", bmmc.__file__, "has_cuda", bmmc.has_cuda(), "gpu_available",
  bmmc.gpu_available(), "torch", torch.__version__, torch.cuda.get_device_name(0))' \
  || { echo "python: FAIL: import bmmc"; exit 2; }

status=0
# -rs lists skips: on the GPU machine a skipped GPU test is a failure of this step, not a pass.
timeout 170 python3 -m pytest -q -rs -p no:cacheprovider python/tests 2>&1 | tee "$EXTRA_OUT/pytest.txt"
rc=${PIPESTATUS[0]}
echo "python: pytest exit $rc"
[[ $rc -eq 0 ]] || status=1
if grep -q "SKIPPED.*test_gpu" "$EXTRA_OUT/pytest.txt"; then
  echo "python: FAIL: GPU tests skipped on the GPU machine"
  status=1
fi

timeout 120 python3 python/bench_transpose.py --csv "$EXTRA_OUT/bench_transpose.csv" 2>&1 | tee "$EXTRA_OUT/bench_transpose.txt"
rc=${PIPESTATUS[0]}
echo "python: bench_transpose exit $rc"
[[ $rc -eq 0 ]] || status=1
echo "python: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
