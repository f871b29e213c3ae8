#!/usr/bin/env bash
# The scaling model of the distributed plan (docs/DESIGN.md §9): for G = 4 .. 1024 ranks of 2^M elements each
# (default M = 30, 4-byte elements: 4 GiB per GPU), what `bmmc plan SPEC --ranks G --json` says each rank sends —
# k, destinations, groups, rounds, bytes per message (= per link of the exchange), the most bytes one rank sends to
# other ranks, and that divided by a link bandwidth (default 450 GB/s, one direction of an H100's NVLink 4) as
# the lower bound of the exchange. Prints a Markdown table. Usage: scripts/dist-scaling.sh [PATH/TO/bmmc]
# Environment: M (local bits), B (element bytes), GBPS (link bandwidth in GB/s). Needs python3 for the JSON.
set -euo pipefail
bmmc=${1:-build/bin/bmmc}
M=${M:-30}
B=${B:-4}
GBPS=${GBPS:-450}

# One rank bit (the top one) swapped with local bit 0: cuStateVec's index-bit swap across GPUs.
one_bit_swap() {  # N
  local n=$1 i p=()
  for ((i = 0; i < n; i++)); do p+=("$i"); done
  p[0]=$((n - 1))
  p[n - 1]=0
  (IFS=,; echo "bits:${p[*]}")
}
# All g rank bits swapped with the g lowest local bits.
all_rank_bits_swap() {  # N g
  local n=$1 g=$2 i p=()
  for ((i = 0; i < n; i++)); do p+=("$i"); done
  for ((i = 0; i < g; i++)); do
    p[i]=$((n - g + i))
    p[n - g + i]=$i
  done
  (IFS=,; echo "bits:${p[*]}")
}

echo "| G | permutation | k | destinations | groups | rounds | bytes per message | max bytes to other ranks | bound at $GBPS GB/s |"
echo "|---|---|---|---|---|---|---|---|---|"
for ((g = 2; g <= 10; g++)); do
  n=$((M + g))
  for what in random one-swap all-swap reverse; do
    case $what in
      random) spec=random-bmmc:1 name="random BMMC" ;;
      one-swap) spec=$(one_bit_swap $n) name="1 rank bit ↔ 1 local bit" ;;
      all-swap) spec=$(all_rank_bits_swap $n $g) name="all $g rank bits ↔ $g local bits" ;;
      reverse) spec=reverse name="reverse (k = 0: one whole-buffer move)" ;;
    esac
    "$bmmc" plan "$spec" --n $n --ranks $((1 << g)) -b "$B" --json |
      python3 -c '
import json, sys
j = json.load(sys.stdin)
name, gbps = sys.argv[1], float(sys.argv[2])
def size(b):
    for unit, s in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= s: return f"{b / s:g} {unit}"
    return f"{b} B"
mx = j["remote_bytes_per_rank"]["max"]
row = [j["ranks"], name, j["k"], j["destinations_per_rank"], j["groups"], j["rounds"], size(j["bytes_per_chunk"]),
       size(mx), "%.2f ms" % (mx / (gbps * 1e9) * 1e3)]
print("| " + " | ".join(str(x) for x in row) + " |")
' "$name" "$GBPS"
  done
done
