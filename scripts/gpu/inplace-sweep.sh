#!/usr/bin/env bash
# The held-out sweep of in-place bit swaps (BENCHMARKS.md "In place"): for each case of bench/inplace_sweep.py
# (a fixed seed: random sets of 1-15 disjoint index-bit swaps, half with a mask, 4/8/16-byte elements,
# n = 28..32), `bmmc bench --in-place` times cudaMemcpy, bmmc in place (beside its bound: the 32-byte sectors
# that must move, at memcpy's rate), the out-of-place pass and NVIDIA cuStateVec's custatevecSwapIndexBits with
# the same mask, all in one run, every row verified. Writes under $OUT (default /tmp/bmmc-inplace-sweep):
#   cases.txt          the cases (id;n;elem_bytes;spec;mask)
#   inplace_sweep.csv  `bmmc bench --in-place --csv` rows with a first column id
#   summary.txt        per case in place / bound and in place / cuStateVec, and the counts (inplace_sweep.py summary)
#   sweep.log          bmmc's messages (cuStateVec's version, failures)
# Builds $BUILD (default build-gpu) with scripts/gpu/build.sh when it has no bmmc yet. cuStateVec is found as
# scripts/gpu/inplace.sh finds it (BMMC_CUSTATEVEC_LIB or LD_LIBRARY_PATH), else in an installed cuquantum
# package or a custatevec wheel carried in .whl/; without it its rows are absent and the summary says so.
# SEED (47), COUNT (40 cases) and REPS (10) change the sweep; about 2-3 minutes of one H200.
#   OUT=/tmp/sweep bash scripts/gpu/inplace-sweep.sh
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export BMMC_CACHE_DIR="${BMMC_CACHE_DIR:-/tmp/bmmc-inplace-sweep-cache}"
BUILD="${BUILD:-build-gpu}"
O="${OUT:-/tmp/bmmc-inplace-sweep}"
SEED="${SEED:-47}"
COUNT="${COUNT:-40}"
REPS="${REPS:-10}"
mkdir -p "$O"

[[ -x "$BUILD/bin/bmmc" ]] || BUILD="$BUILD" bash scripts/gpu/build.sh || { echo "build failed"; exit 1; }
[[ -f "$BUILD/env.sh" ]] && source "$BUILD/env.sh"

# libcustatevec.so.1: as given, else from an installed cuquantum package, else from a carried wheel.
find_custatevec() {
  [[ -n "${BMMC_CUSTATEVEC_LIB:-}" ]] && return 0
  local d
  for d in ${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH//:/ }}; do [[ -e "$d/libcustatevec.so.1" ]] && return 0; done
  local lib
  lib=$(python3 -c 'import cuquantum, os; print(os.path.join(list(cuquantum.__path__)[0], "lib", "libcustatevec.so.1"))' \
        2>/dev/null) && [[ -e "$lib" ]] && { export BMMC_CUSTATEVEC_LIB="$lib"; return 0; }
  lib=/tmp/site/cuquantum/lib/libcustatevec.so.1  # where the device notes' pip install --target puts it
  [[ -e "$lib" ]] && { export BMMC_CUSTATEVEC_LIB="$lib"; return 0; }
  local wheel
  wheel=$(ls .whl/custatevec*.whl 2>/dev/null | head -1)
  if [[ -n "$wheel" ]]; then
    mkdir -p /tmp/bmmc-custatevec && python3 -m zipfile -e "$wheel" /tmp/bmmc-custatevec &&
      lib=$(find /tmp/bmmc-custatevec -name 'libcustatevec.so.1' | head -1) && [[ -n "$lib" ]] &&
      { export BMMC_CUSTATEVEC_LIB="$lib"; return 0; }
  fi
  return 1
}
find_custatevec && echo "cuStateVec: ${BMMC_CUSTATEVEC_LIB:-from LD_LIBRARY_PATH}" | tee "$O/sweep.log" ||
  echo "cuStateVec: not found (its rows will be absent)" | tee "$O/sweep.log"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$O/sweep.log"

python3 bench/inplace_sweep.py cases --seed "$SEED" --count "$COUNT" > "$O/cases.txt" || exit 1
csv="$O/inplace_sweep.csv"
: > "$csv"
status=0
T0=$SECONDS
while IFS=';' read -r id n eb spec mask; do
  args=(bench --in-place --csv --n "$n" -b "$eb" --reps "$REPS" --spec "$spec")
  [[ -n "$mask" ]] && args+=(--mask "$mask")
  if ! out=$("$BUILD/bin/bmmc" "${args[@]}" 2>>"$O/sweep.log" </dev/null); then
    echo "case $id failed: bmmc ${args[*]}" | tee -a "$O/sweep.log"
    status=1
    continue
  fi
  [[ -s "$csv" ]] || echo "id,$(head -1 <<<"$out")" > "$csv"
  tail -n +2 <<<"$out" | sed "s/^/$id,/" >> "$csv"
  echo "case $id done at +$((SECONDS - T0)) s: n = $n, $eb B, $spec${mask:+ mask $mask}" >> "$O/sweep.log"
done < "$O/cases.txt"
python3 bench/inplace_sweep.py summary "$csv" | tee "$O/summary.txt"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
echo "sweep: $((SECONDS - T0)) s" | tee -a "$O/summary.txt"
exit $status
