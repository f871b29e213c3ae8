#!/usr/bin/env bash
# Builds bmmc (Release, in ./build) and runs `bmmc demo`. Installs nothing: see scripts/test.sh for the
# packages the build needs. Extra arguments go to the demo (e.g. scripts/demo.sh --n 20).
# BMMC_BUILD_DIR overrides the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BMMC_BUILD_DIR:-build}

# A CUDA toolkit in its default place is used even when nvcc is not on PATH (BMMC_CUDA=AUTO finds it).
if ! command -v nvcc >/dev/null 2>&1 && [[ -z "${CUDACXX:-}" && -x /usr/local/cuda/bin/nvcc ]]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" --target bmmc_cli --parallel
"./$build/bin/bmmc" demo "$@"
