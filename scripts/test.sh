#!/usr/bin/env bash
# Installs the build dependencies when missing (Debian/Ubuntu, apt), builds bmmc (Release, in ./build) and
# runs every test with ctest. This is what CI runs (.ci/run). BMMC_BUILD_DIR overrides the build folder;
# extra arguments go to ctest (e.g. scripts/test.sh -L cli).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BMMC_BUILD_DIR:-build}

source scripts/deps.sh
bmmc_install_deps
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" --parallel
cd "$build"
ctest --output-on-failure --parallel "$(nproc)" "$@"

# ==== Hardening (TESTING.md; appended block, owned by the hardening work) ====================================
# 1) The CPU library, CLI and tests built with AddressSanitizer + UndefinedBehaviorSanitizer (gcc), running the
#    core/plan/codegen/cpu/cli tests: any out-of-bounds access, use-after-free, leak or UB aborts the test.
# 2) A fuzz smoke: the libFuzzer targets (clang) replay the committed corpus, then fuzz 25 s each.
# BMMC_HARDENING=0 skips both (e.g. for a quick local `scripts/test.sh -L cli`). Cost on 2 cores: see TESTING.md.
if [[ "${BMMC_HARDENING:-1}" != 0 ]]; then
  cd "$OLDPWD"  # back to the repository root (the block above ends inside the build folder)
  [[ -f fuzz/CMakeLists.txt ]] || { echo "scripts/test.sh: hardening block is not at the repository root" >&2; exit 1; }
  root=$(pwd)
  hmissing=()
  for p in clang libclang-rt-14-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || hmissing+=("$p")
  done
  if ((${#hmissing[@]} > 0)); then
    echo "scripts/test.sh: installing ${hmissing[*]} (libFuzzer)"
    sudo=()
    [[ $(id -u) -ne 0 ]] && sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${hmissing[@]}"
  fi

  asan=${BMMC_ASAN_BUILD_DIR:-build-asan}
  # -O1 -g1 (line tables, asserts kept): stack traces with file:line at ~60% of the compile cost of -O2 -g.
  cmake -S . -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    -DBMMC_SANITIZE=ON -DBMMC_CUDA=OFF
  cmake --build "$asan" --parallel
  # halt/abort on the first report so ctest records a failure; leaks are checked at every test's exit.
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$asan" -L 'core|plan|codegen|cpu|cli' --output-on-failure --parallel "$(nproc)" --timeout 900

  fuzz=${BMMC_FUZZ_BUILD_DIR:-build-fuzz}
  cmake -S . -B "$fuzz" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DBMMC_FUZZ=ON \
    -DBMMC_CUDA=OFF -DBMMC_BUILD_TESTS=OFF -DBMMC_BUILD_TOOLS=OFF
  cmake --build "$fuzz" --parallel --target bmmc_spec_fuzz bmmc_cli_fuzz
  fuzz=$(cd "$fuzz" && pwd)
  for t in spec cli; do
    # New inputs go to a scratch folder, so CI never edits the committed corpus; crashes land there too.
    scratch=$(mktemp -d)
    echo "fuzz smoke: $t (25 s)"
    (cd "$scratch" && "$fuzz/fuzz/bmmc_${t}_fuzz" -max_total_time=25 -print_final_stats=1 \
       -artifact_prefix="$scratch/" "$scratch" "$root/fuzz/corpus/$t" 2>&1 | grep -E '^(Done [0-9]+ runs|INFO: seed corpus|stat::number_of_executed_units)|ERROR|SUMMARY|==[0-9]+==') ||
      true
    if compgen -G "$scratch/crash-*" >/dev/null || compgen -G "$scratch/leak-*" >/dev/null ||
       compgen -G "$scratch/timeout-*" >/dev/null || compgen -G "$scratch/oom-*" >/dev/null; then
      echo "fuzz smoke: $t found a failing input (kept in $scratch; add it to tests and fix the library)" >&2
      exit 1
    fi
    rm -rf "$scratch"
  done
fi
# ==== end hardening ==========================================================================================

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
