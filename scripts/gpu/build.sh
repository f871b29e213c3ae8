#!/usr/bin/env bash
# Configures and builds the whole tree ON a GPU machine (no network; CUDA, CMake and ninja installed) into
# ${BUILD:-build-gpu}, for sm_90, with the header packages of .deps/prefix (scripts/gpu/deps-prefix.sh, run
# where apt works, carried along). NCCL is taken from the toolkit or from pip's nvidia-nccl wheel when
# python3 has one. ~75 s on 16 cores. Then `source build-gpu/env.sh` and run e.g. `ctest --test-dir build-gpu -L 'gpu|nvrtc'`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUILD="${BUILD:-build-gpu}"
nccl=()
if site=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0])' 2>/dev/null) &&
   [[ -f "$site/include/nccl.h" ]]; then
  lib=$(ls "$site"/lib/libnccl.so* | head -1)
  nccl=(-DBMMC_NCCL_INCLUDE_DIR="$site/include" -DBMMC_NCCL_LIBRARY="$lib")
  export LD_LIBRARY_PATH="$site/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
mkdir -p "$BUILD"
# What running the binaries needs (pip's libnccl): `source $BUILD/env.sh` before ctest.
echo "export LD_LIBRARY_PATH=\"${LD_LIBRARY_PATH:-}\"" > "$BUILD/env.sh"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBMMC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$ROOT/.deps/prefix" "${nccl[@]}" "$@" > "$BUILD/configure.log" 2>&1 ||
  { cat "$BUILD/configure.log"; exit 1; }
ninja -C "$BUILD" > "$BUILD/build.log" 2>&1 || { tail -60 "$BUILD/build.log"; exit 1; }
grep -E "bmmc: (CUDA|NCCL)" "$BUILD/configure.log"
