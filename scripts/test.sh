#!/usr/bin/env bash
# Every test of bmmc; what CI runs (.ci/run). From the repository root, in this order:
#   build_and_test   installs the build's packages when missing (scripts/deps.sh, Debian/Ubuntu apt), builds
#                    bmmc (Release, in ./build) and runs every ctest test; extra arguments go to this ctest
#                    (e.g. scripts/test.sh -L cli)
#   sanitizer_tests  the CPU library, CLI and tests built with ASan + UBSan (gcc, in ./build-asan), running
#                    the core, plan, cpu, combinators, dispatch, dist, capi and cli tests: any out-of-bounds
#                    access, use-after-free, leak or undefined behaviour fails the test
#   thread_tests     the CPU tests built with ThreadSanitizer (in ./build-tsan), running the worker pool's tests
#                    and the executor's multi-threaded ones: any data race fails them
#   fuzz_smoke       the libFuzzer targets (clang, in ./build-fuzz) replay fuzz/corpus, then fuzz 25 s each
#   python_tests     pip install ./python into a fresh virtualenv (without its CUDA parts where no GPU is found),
#                    then pytest python/tests
#   docs             the API reference (scripts/docs.sh, into build/docs): Doxygen over the public headers and,
#                    after python_tests, pdoc over the installed package; any warning or broken reference fails
# Switches (environment):
#   BMMC_BUILD_DIR=DIR     build folder of build_and_test (default build)
#   BMMC_HARDENING=0       skip sanitizer_tests, thread_tests and fuzz_smoke (e.g. a quick `scripts/test.sh -L cli`)
#   BMMC_PYTHON=0          skip python_tests (docs then builds the C++ and C reference only)
#   BMMC_PYTHON_CUDA=1     build the Python extension's CUDA parts even where no GPU is found
#   BMMC_DOCS=0            skip docs
#   BMMC_ASAN_BUILD_DIR, BMMC_TSAN_BUILD_DIR, BMMC_FUZZ_BUILD_DIR, BMMC_VENV   the other folders (build-asan,
#                          build-tsan, build-fuzz, /tmp/bmmc-venv)
# Builds go through ccache when it is on PATH. What each part costs on 2 cores: TESTING.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

launchers=()
if command -v ccache >/dev/null 2>&1; then
  launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi

# configure DIR CMAKE_ARGS…: Ninja for a new build folder; an existing one keeps its generator.
configure() {
  local dir=$1
  shift
  local generator=()
  [[ -f "$dir/CMakeCache.txt" ]] || generator=(-G Ninja)
  cmake -S . -B "$dir" "${generator[@]}" "${launchers[@]}" "$@"
}

build_and_test() {
  local build=${BMMC_BUILD_DIR:-build}
  bmmc_install_deps
  configure "$build" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" --parallel
  ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" "$@"
}

sanitizer_tests() {
  local asan=${BMMC_ASAN_BUILD_DIR:-build-asan}
  # -O1 -g1 (line tables, asserts kept): stack traces with file:line at ~60% of the compile cost of -O2 -g.
  configure "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" -DBMMC_SANITIZE=ON -DBMMC_CUDA=OFF
  cmake --build "$asan" --parallel
  # Abort on the first report so ctest records a failure; leaks are checked at every test's exit.
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$asan" -L 'core|plan|cpu|combinators|dispatch|dist|capi|cli' --output-on-failure --parallel "$(nproc)" \
    --timeout 900
}

thread_tests() {
  local tsan=${BMMC_TSAN_BUILD_DIR:-build-tsan}
  # Only the CPU test binary: the pool's lock-free hand-off and the loops that share it are what can race.
  configure "$tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    -DBMMC_SANITIZE_THREADS=ON -DBMMC_CUDA=OFF -DBMMC_BUILD_TOOLS=OFF
  cmake --build "$tsan" --parallel --target bmmc_cpu_tests
  # The whole binary takes ~12 min under ThreadSanitizer on 2 cores; these take well under one.
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 "$tsan/tests/bmmc_cpu_tests" --gtest_brief=1 \
    --gtest_filter='ThreadPool.*:CpuExecutor.TileSizesAndThreadCounts:CpuExecutor.ThreadsUsedFollowTheChunkRules:CpuExecutor.RandomMapsAllElementSizesSmallN:CpuInPlace.PairsOfCosetsThreaded'
}

fuzz_smoke() {
  local fuzz=${BMMC_FUZZ_BUILD_DIR:-build-fuzz}
  bmmc_install_packages "libFuzzer" clang libclang-rt-14-dev
  configure "$fuzz" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DBMMC_FUZZ=ON -DBMMC_CUDA=OFF -DBMMC_BUILD_TESTS=OFF \
    -DBMMC_BUILD_TOOLS=OFF
  cmake --build "$fuzz" --parallel --target bmmc_spec_fuzz bmmc_cli_fuzz bmmc_digit_spec_fuzz
  local t scratch bin corpus
  for t in spec cli digit_spec; do
    bin=$(realpath "$fuzz/fuzz/bmmc_${t}_fuzz")
    corpus=$(realpath "fuzz/corpus/$t")
    # New inputs (and crashes) go to a scratch folder, so CI never edits the committed corpus; the fuzzer
    # runs inside it so that nothing else it writes lands in the repository.
    scratch=$(mktemp -d)
    echo "fuzz smoke: $t (25 s)"
    (cd "$scratch" && "$bin" -max_total_time=25 -print_final_stats=1 -artifact_prefix="$scratch/" "$scratch" \
       "$corpus" 2>&1 |
       grep -E '^(Done [0-9]+ runs|INFO: seed corpus|stat::number_of_executed_units)|ERROR|SUMMARY|==[0-9]+==') || true
    if compgen -G "$scratch/crash-*" >/dev/null || compgen -G "$scratch/leak-*" >/dev/null ||
       compgen -G "$scratch/timeout-*" >/dev/null || compgen -G "$scratch/oom-*" >/dev/null; then
      echo "fuzz smoke: $t found a failing input (kept in $scratch; add it to tests and fix the library)" >&2
      return 1
    fi
    rm -rf "$scratch"
  done
}

python_tests() {
  local venv=${BMMC_VENV:-/tmp/bmmc-venv}
  # Debian's python3 needs python3-venv for virtualenvs and python3-dev for the extension's headers.
  if [[ "$(command -v python3)" == /usr/bin/python3 ]]; then
    bmmc_install_packages "Python package tests" python3-venv python3-dev
  fi
  # pip builds the nanobind extension against the C++ library. Without a GPU the GPU tests skip, so the extension
  # is built without its CUDA parts (a second CUDA build of the library would add minutes and test nothing here);
  # BMMC_PYTHON_CUDA=1 builds them anyway (then with the CUDA parts when a toolkit is found).
  local cuda=()
  if [[ "${BMMC_PYTHON_CUDA:-0}" != 1 ]] && ! nvidia-smi -L >/dev/null 2>&1; then
    cuda=(--config-settings=cmake.define.BMMC_CUDA=OFF)
  fi
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --progress-bar off pytest numpy
  "$venv/bin/pip" install --progress-bar off "${cuda[@]}" ./python
  "$venv/bin/pytest" -q python/tests
}

docs() {
  bmmc_install_packages "the API reference" doxygen
  local python=()
  if [[ "${BMMC_PYTHON:-1}" != 0 ]]; then
    # pdoc beside the package python_tests installed (its venv is fresh each run).
    local venv=${BMMC_VENV:-/tmp/bmmc-venv}
    "$venv/bin/pip" install --progress-bar off "pdoc>=16,<17"
    python=(--python "$venv/bin/python")
  fi
  scripts/docs.sh "${python[@]}"
}

build_and_test "$@"
if [[ "${BMMC_HARDENING:-1}" != 0 ]]; then
  sanitizer_tests
  thread_tests
  fuzz_smoke
fi
if [[ "${BMMC_PYTHON:-1}" != 0 ]]; then
  python_tests
fi
if [[ "${BMMC_DOCS:-1}" != 0 ]]; then
  docs
fi
