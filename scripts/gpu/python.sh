#!/usr/bin/env bash
# GPU step of scripts/gpu-check.sh: the Python package on the GPU machine (PyTorch + CuPy, no network).
#
# Installs the wheel built here by scripts/pack-python.sh and carried as build-python/ (into /tmp, leaving
# the machine's Python environment alone), then runs the whole pytest suite (CPU tests + GPU tests, which
# must not skip here: the fast path, the custom ops under torch.compile, CUDA graph capture) and
# python/bench_transpose.py against PyTorch (host time per call, the 1 MiB … 4 GiB sweep, CUDA graph replay).
# Outputs in $EXTRA_OUT: pytest.txt, bench_transpose.txt, bench_host.csv, bench_sweep.csv, bench_graph.csv.
# Alone on the GPU host (about 5–7 minutes on an H100): EXTRA_OUT=DIR bash scripts/gpu/python.sh
# BMMC_PY_BENCH_ARGS adds arguments to the benchmark (e.g. "--max-mib 512 --shapes 2" for a quick run).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
EXTRA_OUT="${EXTRA_OUT:-$ROOT/out/python}"
mkdir -p "$EXTRA_OUT"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# Kernels JIT-compiled by the tests are reused by the benchmark (and Inductor's by later compiles).
export BMMC_CACHE_DIR="${BMMC_CACHE_DIR:-/tmp/bmmc-python-kernel-cache}"

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
timeout 240 python3 -m pytest -q -rs -p no:cacheprovider python/tests 2>&1 | tee "$EXTRA_OUT/pytest.txt"
rc=${PIPESTATUS[0]}
echo "python: pytest exit $rc"
[[ $rc -eq 0 ]] || status=1
# (test_fast_path_never_mixes_devices needs two GPUs and test_cupy_* CuPy: those skips are expected.)
if grep "SKIPPED.*\(test_gpu\|test_any_shape\)" "$EXTRA_OUT/pytest.txt" | grep -qv "needs two GPUs\|cupy"; then
  echo "python: FAIL: GPU tests skipped on the GPU machine"
  status=1
fi

# Inside scripts/gpu-check.sh (which sets BMMC_CLI) a step gets 300 s: a shorter sweep unless told otherwise.
if [[ -z "${BMMC_PY_BENCH_ARGS+x}" && -n "${BMMC_CLI:-}" ]]; then
  BMMC_PY_BENCH_ARGS="--max-mib 256 --shapes 2 --host-repeats 3"
fi
# shellcheck disable=SC2086  # BMMC_PY_BENCH_ARGS is a list of arguments
timeout 330 python3 python/bench_transpose.py --out-dir "$EXTRA_OUT" ${BMMC_PY_BENCH_ARGS:-} 2>&1 \
  | tee "$EXTRA_OUT/bench_transpose.txt"
rc=${PIPESTATUS[0]}
echo "python: bench_transpose exit $rc"
[[ $rc -eq 0 ]] || status=1
echo "python: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
