#!/usr/bin/env bash
# Builds bmmc (Release, in ./build) and runs `bmmc demo` (on the GPU when there is one, else on the CPU).
# Installs the build's packages when missing (scripts/deps.sh). Extra arguments go to the demo.
# BMMC_BUILD_DIR overrides the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BMMC_BUILD_DIR:-build}

source scripts/deps.sh
bmmc_install_deps
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" --target bmmc_cli --parallel
"./$build/bin/bmmc" demo "$@"
