#!/usr/bin/env bash
# Builds, HERE, the Release tree that travels to the GPU host and is run there by scripts/gpu-check.sh.
#
# Why here: the GPU machine has CUDA 13.0, cmake, ninja and python3 but no network and no GoogleTest, CLI11,
# fmt or nlohmann_json, so nothing can be configured there. We build build-gpu/ with sm_90 code, link
# libstdc++/libgcc statically (the GPU image's C++ runtime may differ from ours), and check with ldd that the
# binaries need nothing the GPU machine lacks: only libc-family libraries and libnvrtc (from its toolkit).
# The driver library (libcuda) must NOT appear: the CUDA runtime is static and loads the driver at run time.
#
# Usage: scripts/pack-gpu.sh            then copy the working tree, build-gpu/ included, to the GPU host and
#        run there, from the tree's root: bash scripts/gpu-check.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BMMC_GPU_BUILD:-build-gpu}"
cd "$ROOT"

cmake -S . -B "$BUILD" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DBMMC_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DBMMC_BUILD_TESTS=ON -DBMMC_BUILD_TOOLS=ON \
  -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc"
ninja -C "$BUILD"

# gpu-check.sh needs to know where this tree was built: ctest files hold absolute paths of this machine.
echo "$ROOT" > "$BUILD/bmmc-pack-root.txt"
git rev-parse HEAD > "$BUILD/bmmc-pack-commit.txt" 2>/dev/null || echo unknown > "$BUILD/bmmc-pack-commit.txt"
git status --short > "$BUILD/bmmc-pack-status.txt" 2>/dev/null || true

# Every executable we carry: the CLI and every test binary.
mapfile -t BINARIES < <(find "$BUILD/bin" "$BUILD/tests" -maxdepth 1 -type f -perm -u+x 2>/dev/null | sort)
if [[ ${#BINARIES[@]} -eq 0 ]]; then
  echo "pack-gpu: no binaries found under $BUILD/bin or $BUILD/tests" >&2
  exit 1
fi

# Allowed shared libraries: the C library family, the C++ runtime (should be static now, tolerated anyway),
# NVRTC, which the GPU machine's CUDA 13.0 toolkit provides, and NCCL (only bmmc_nccl_tests: its system libnccl.so.2).
ALLOWED='^(linux-vdso\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|libpthread\.so|libdl\.so|librt\.so|libnvrtc\.so|libnccl\.so)'
bad=0
for bin in "${BINARIES[@]}"; do
  while read -r lib _; do
    [[ -z "$lib" ]] && continue
    lib="$(basename "$lib")"
    if ! [[ "$lib" =~ $ALLOWED ]]; then
      echo "pack-gpu: $bin needs $lib, which the GPU machine may not have" >&2
      bad=1
    fi
  done < <(ldd "$bin" | sed -e 's/^[[:space:]]*//' -e 's/ =>.*//' -e 's/ (.*//')
done
[[ $bad -eq 0 ]] || exit 1

size_mib=$(( $(du -sk "$BUILD" | cut -f1) / 1024 ))
echo "pack-gpu: ${#BINARIES[@]} binaries OK (ldd: libc family + libnvrtc only); $BUILD is ${size_mib} MiB"
if (( size_mib > 48 )); then
  # The device run carries at most 64 MiB in all (tree included); object files are not needed there.
  # Object files, static libraries and CMake's own bookkeeping are not needed to run the binaries or ctest.
  echo "pack-gpu: pruning object files, static libraries and CMakeFiles/ to shrink the carry (rerun to rebuild)"
  find "$BUILD" -name '*.o' -delete
  find "$BUILD" -name '*.a' -delete
  find "$BUILD" -type d -name CMakeFiles -prune -exec rm -rf {} +
  size_mib=$(( $(du -sk "$BUILD" | cut -f1) / 1024 ))
  echo "pack-gpu: $BUILD is now ${size_mib} MiB"
fi
echo "pack-gpu: copy the tree with $BUILD/ to the GPU host and run there: bash scripts/gpu-check.sh"
