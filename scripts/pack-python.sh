#!/usr/bin/env bash
# Builds, HERE, the bmmc Python wheel that travels to the GPU host (scripts/gpu/python.sh installs it).
#
# Why here: the GPU machine has python3 3.12 with torch, cupy, numpy and pytest but no network and no pip
# index, so the extension cannot be built there from PyPI's nanobind / scikit-build-core. We build one
# CPython 3.12 wheel (stable ABI cp312-abi3, x86_64) with the CUDA runtime for sm_90 (JIT for the rest), the
# C++ runtime linked statically, and check with ldd that the module needs only the C library family and
# libnvrtc.so.13 (the GPU machine's toolkit has it; bmmc/__init__.py also finds PyTorch's nvidia-* copy).
# The wheel is tagged linux_x86_64 (not audited for manylinux): it needs glibc >= this machine's.
#
# Needs: a python3.12 here (pyenv's, or BMMC_PY312=/path/to/python3.12), a CUDA toolkit, network to PyPI
# (nanobind, scikit-build-core, ninja into a build venv). Builds from this working tree.
# Usage: scripts/pack-python.sh     then copy the tree with build-python/ (and scripts/pack-gpu.sh's build-gpu/)
#        to the GPU host and run there: bash scripts/gpu-check.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIST="build-python/dist"          # carried (matches the ignored /build*/)
CMAKE_BUILD="build-python-cmake"   # not carried: CMake's tree for incremental rebuilds
VENV="${BMMC_PY312_VENV:-/tmp/bmmc-py312-build}"

py312="${BMMC_PY312:-}"
if [[ -z "$py312" ]]; then
  for c in python3.12 "$HOME/.pyenv/versions/"3.12*/bin/python3.12 /usr/bin/python3.12; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
      py312="$(command -v "$c")"; break
    fi
  done
fi
if [[ -z "$py312" ]]; then
  echo "pack-python: no python3.12 found (try: pyenv install 3.12, or BMMC_PY312=/path/to/python3.12)" >&2
  exit 1
fi
echo "pack-python: building with $py312 ($("$py312" --version))"

if [[ ! -x "$VENV/bin/python" ]]; then
  "$py312" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q "nanobind>=2.0" "scikit-build-core>=0.10" ninja numpy

# A toolkit in its default place is used even when nvcc is not on PATH.
if ! command -v nvcc >/dev/null 2>&1 && [[ -z "${CUDACXX:-}" && -x /usr/local/cuda/bin/nvcc ]]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
rm -rf "$DIST"
mkdir -p "$DIST"
# No build isolation: the build venv holds nanobind and scikit-build-core, and CMake's cache stays valid
# between runs (isolated builds get a new temporary nanobind path every time).
"$VENV/bin/python" -m pip wheel --no-build-isolation --no-deps -w "$DIST" \
  -C build-dir="$ROOT/$CMAKE_BUILD" \
  -C cmake.define.BMMC_CUDA=ON -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 \
  ./python

wheel="$(ls "$DIST"/bmmc-*.whl)"
echo "pack-python: $wheel"
case "$wheel" in
  *cp312*) ;;
  *) echo "pack-python: expected a CPython 3.12 wheel, got $wheel" >&2; exit 1 ;;
esac

# ldd check of the extension module, as pack-gpu.sh does for the binaries.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$VENV/bin/python" -m zipfile -e "$wheel" "$tmp"
so="$(find "$tmp/bmmc" -name '_bmmc*.so' | head -1)"
ALLOWED='^(linux-vdso\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libnvrtc\.so)'
bad=0
while read -r lib _; do
  [[ -z "$lib" ]] && continue
  lib="$(basename "$lib")"
  if ! [[ "$lib" =~ $ALLOWED ]]; then
    echo "pack-python: $(basename "$so") needs $lib, which the GPU machine may not have" >&2
    bad=1
  fi
done < <(ldd "$so" | sed -e 's/^[[:space:]]*//' -e 's/ =>.*//' -e 's/ (.*//')
[[ $bad -eq 0 ]] || exit 1
PYTHONPATH="$tmp" "$VENV/bin/python" -c 'import bmmc, numpy as np
assert bmmc.has_cuda(), "the wheel was built without CUDA"
assert hasattr(bmmc._bmmc, "_Prepared"), "the wheel has no fast path (bmmc._bmmc._Prepared)"
assert (bmmc.permute(np.arange(16), "bit-reverse")[bmmc.bit_reverse(4).apply(np.arange(16)).astype(int)] == np.arange(16)).all()
print("pack-python: import and CPU smoke test OK (has_cuda = True)")' 2>/dev/null \
  || echo "pack-python: note: no numpy in the build venv, smoke test skipped"

git rev-parse HEAD > build-python/bmmc-pack-commit.txt 2>/dev/null || echo unknown > build-python/bmmc-pack-commit.txt
echo "pack-python: $(du -sh build-python | cut -f1) to copy with the tree (and build-gpu/); on the GPU host: bash scripts/gpu-check.sh"
