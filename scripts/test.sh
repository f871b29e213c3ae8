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
