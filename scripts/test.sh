#!/usr/bin/env bash
# Installs the build dependencies when missing (Debian/Ubuntu, apt), builds bmmc (Release, in ./build) and
# runs every test with ctest. This is what CI runs (.ci/run). BMMC_BUILD_DIR overrides the build folder;
# extra arguments go to ctest (e.g. scripts/test.sh -L cli).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BMMC_BUILD_DIR:-build}

packages=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev googletest libgtest-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "scripts/test.sh: installing ${missing[*]}"
  sudo=()
  [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# A CUDA toolkit in its default place is used even when nvcc is not on PATH (BMMC_CUDA=AUTO finds it).
if ! command -v nvcc >/dev/null 2>&1 && [[ -z "${CUDACXX:-}" && -x /usr/local/cuda/bin/nvcc ]]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" --parallel
cd "$build"
ctest --output-on-failure --parallel "$(nproc)" "$@"

# ==== Python package (python/; appended block, owned by the Python bindings work) ===========================
# `pip install ./python` into a clean virtualenv (builds the nanobind extension against the C++ library, with
# the CUDA parts when a toolkit is found), then pytest python/tests (the GPU tests skip without a GPU).
# ~5 minutes on 2 cores, most of it the library build. BMMC_PYTHON=0 skips it.
if [[ "${BMMC_PYTHON:-1}" != 0 ]]; then
  # The blocks above leave us in the build folder or at the root: find the root from either.
  pyroot=""
  for d in "$PWD" "$OLDPWD" "$PWD/.."; do
    if [[ -f "$d/python/pyproject.toml" && -f "$d/scripts/test.sh" ]]; then pyroot=$(cd "$d" && pwd); break; fi
  done
  [[ -n "$pyroot" ]] || { echo "scripts/test.sh: python block cannot find the repository root" >&2; exit 1; }
  cd "$pyroot"
  # Debian's python3 needs python3-venv for venvs and python3-dev for the extension's headers.
  if [[ "$(command -v python3)" == /usr/bin/python3 ]]; then
    pymissing=()
    for p in python3-venv python3-dev; do
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || pymissing+=("$p")
    done
    if ((${#pymissing[@]} > 0)); then
      echo "scripts/test.sh: installing ${pymissing[*]} (Python package tests)"
      sudo=()
      [[ $(id -u) -ne 0 ]] && sudo=(sudo)
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pymissing[@]}"
    fi
  fi
  rm -rf /tmp/bmmc-venv
  python3 -m venv /tmp/bmmc-venv
  /tmp/bmmc-venv/bin/pip install --progress-bar off ./python pytest numpy
  /tmp/bmmc-venv/bin/pytest -q python/tests
fi
# ==== end Python package =====================================================================================
