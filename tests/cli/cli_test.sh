#!/usr/bin/env bash
# End-to-end tests of the bmmc CLI. Usage: cli_test.sh PATH/TO/bmmc
# Checks outputs of show/apply/permute, the exit-code contract (0 ok, 2 bad input with a message on stderr)
# and that a failed permute never creates or damages its output file. Needs only bash and coreutils.
set -euo pipefail

bmmc=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# expect_out "expected stdout" cmd...
expect_out() {
  local expected=$1 actual
  shift
  if ! actual=$("$@" 2>"$work/err"); then
    fail "$* exited with $? (stderr: $(cat "$work/err"))"
    return
  fi
  [[ "$actual" == "$expected" ]] || fail "$*: expected '$expected', got '$actual'"
}

# expect_error CODE "stderr substring" cmd...
expect_error() {
  local code=$1 part=$2 rc=0
  shift 2
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  [[ $rc == "$code" ]] || fail "$*: expected exit $code, got $rc (stderr: $(cat "$work/err"))"
  grep -qF -- "$part" "$work/err" || fail "$*: stderr lacks '$part': $(cat "$work/err")"
  [[ ! -s "$work/out" ]] || fail "$*: printed to stdout on error: $(cat "$work/out")"
}

# --- show: text and JSON of every named map -------------------------------------------------------------
expect_out $'n = 4\nclass = BP\nc = 0x0\nA (row i = output bit i, column j = input bit j):\n..1.\n...1\n1...\n.1..' \
  "$bmmc" show transpose:2 --n 4
expect_out '{"n":4,"rows":[8,4,2,1],"c":0,"class":"BP"}' "$bmmc" show bit-reverse --n 4 --json
expect_out '{"n":4,"rows":[1,2,4,8],"c":0,"class":"BP"}' "$bmmc" show identity --n 4 --json
expect_out '{"n":4,"rows":[1,2,4,8],"c":15,"class":"BPC"}' "$bmmc" show reverse --n 4 --json
expect_out '{"n":5,"rows":[2,4,8,16,1],"c":0,"class":"BP"}' "$bmmc" show rotate:1 --n 5 --json
expect_out '{"n":4,"rows":[4,8,1,2],"c":0,"class":"BP"}' "$bmmc" show transpose:2 --n 4 --json
expect_out '{"n":3,"rows":[3,6,4],"c":0,"class":"tiled"}' "$bmmc" show gray --n 3 --json
expect_out '{"n":3,"rows":[7,6,4],"c":0,"class":"tiled"}' "$bmmc" show gray-inverse --n 3 --json
expect_out '{"n":3,"rows":[1,4,6],"c":0,"class":"tiled"}' "$bmmc" show parm:0b110 --n 3 --json
expect_out '{"n":3,"rows":[2,4,1],"c":0,"class":"BP"}' "$bmmc" show bits:2,0,1 --json
expect_out '{"n":2,"rows":[2,1],"c":0,"class":"BP"}' "$bmmc" show axes:2x2:1,0 --json
expect_out '{"n":2,"rows":[3,2],"c":1,"class":"tiled"}' "$bmmc" show 'matrix:3,2^1' --json
expect_out '{"n":4,"rows":[8,4,2,1],"c":5,"class":"BPC"}' "$bmmc" show 'bit-reverse ^ 0b101' --n 4 --json
for spec in random-bpc:1 random-bmmc:1 'inv(gray)*rotate:3^0b101'; do
  out=$("$bmmc" show "$spec" --n 8 --json) || fail "show $spec"
  [[ "$out" == '{"n":8,"rows":['*'],"c":'*',"class":"'*'"}' ]] || fail "show $spec --json: $out"
done
[[ $("$bmmc" show random-bpc:1 --n 8 --json) == *'"class":"BP'* ]] || fail "random-bpc is not BP/BPC"
# With n <= 5 every BMMC is tiled (the whole index is one tile); a random one on 24 bits is general.
[[ $("$bmmc" show random-bmmc:1 --n 24 --json) == *'"class":"general"}' ]] || fail "random-bmmc:1 --n 24 not general"

# --- apply: the worked examples (docs/DESIGN.md §1) ------------------------------------------------------------
expect_out 14 "$bmmc" apply bit-reverse --n 4 7
expect_out 28 "$bmmc" apply rotate:1 --n 5 25
expect_out 9 "$bmmc" apply transpose:2 --n 4 6
expect_out $'14\n14\n14\n0' "$bmmc" apply bit-reverse --n 4 7 0x7 0b0111 0
expect_out $'15\n0' "$bmmc" apply reverse --n 4 0 15
expect_out 9 "$bmmc" apply 'rotate:1*bit-reverse' --n 4 12  # bit-reverse first: 12 -> 3, then rotate -> 9
expect_error 2 "out of range" "$bmmc" apply bit-reverse --n 4 16
expect_error 2 "not a number" "$bmmc" apply bit-reverse --n 4 0b12

# --- permute: correctness against `bmmc apply`, and round trips --------------------------------------------
# Input element x holds the byte x, so out[y] must hold x exactly when apply(x) = y.
n=8
printf "$(for ((x = 0; x < 256; x++)); do printf '\\x%02x' "$x"; done)" >"$work/iota.bin"
for spec in bit-reverse transpose:3 random-bpc:2 random-bmmc:2 'inv(gray)*rotate:3^0b101'; do
  "$bmmc" permute "$spec" --n $n --elem-bytes 1 --in "$work/iota.bin" --out "$work/p.bin" ||
    fail "permute $spec"
  mapfile -t ys < <("$bmmc" apply "$spec" --n $n $(seq 0 255))
  mapfile -t got < <(od -An -v -tu1 -w1 "$work/p.bin" | tr -d ' ')
  for ((x = 0; x < 256; x++)); do
    if [[ "${got[${ys[$x]}]}" != "$x" ]]; then
      fail "permute $spec: out[${ys[$x]}] = ${got[${ys[$x]}]}, expected $x"
      break
    fi
  done
done
for b in 1 2 4 8 16; do
  head -c $((4096 * b)) /dev/urandom >"$work/r.bin"
  for spec in random-bmmc:7 bit-reverse 'gray*transpose:5^3'; do
    "$bmmc" permute "$spec" --n 12 --elem-bytes $b --in "$work/r.bin" --out "$work/m.bin" || fail "permute $spec b=$b"
    "$bmmc" permute "inv($spec)" --n 12 -b $b -i "$work/m.bin" -o "$work/back.bin" || fail "permute inv($spec)"
    cmp -s "$work/r.bin" "$work/back.bin" || fail "round trip of $spec with $b-byte elements"
  done
done
cmp -s "$work/r.bin" "$work/m.bin" && fail "permute by a random BMMC left 16-byte data unchanged"

# --- errors: exit 2, a message, and the output untouched ---------------------------------------------------
expect_error 2 "singular" "$bmmc" show matrix:1,1
expect_error 2 "unknown name 'bitrev' at column 1" "$bmmc" show bitrev --n 4
expect_error 2 "expected ':' after 'rotate' at column 7" "$bmmc" show rotate --n 4
expect_error 2 "expected ')'" "$bmmc" show 'inv(gray' --n 4
expect_error 2 "n mismatch" "$bmmc" show bits:1,0,2 --n 4
expect_error 2 "defines n = 2, but 'bits:1,0,2' at column 1 defines n = 3" "$bmmc" show 'bits:1,0,2*matrix:1,2'
expect_error 2 "bit-reverse needs n: the spec does not define it and --n is not given" "$bmmc" show bit-reverse

head -c 1024 /dev/urandom >"$work/in.bin"  # 2^8 elements of 4 bytes
expect_error 2 "1024 bytes, but an array of 2^9 elements of 4 bytes has 2048 bytes" \
  "$bmmc" permute gray --n 9 -b 4 --in "$work/in.bin" --out "$work/new.bin"
[[ ! -e "$work/new.bin" ]] || fail "permute with a wrong-size input created its output"
echo "old content" >"$work/old.bin"
expect_error 2 "bytes" "$bmmc" permute gray --n 9 -b 4 --in "$work/in.bin" --out "$work/old.bin"
[[ $(cat "$work/old.bin") == "old content" ]] || fail "permute with a wrong-size input changed its output"
expect_error 2 "element size 3 bytes is not supported" \
  "$bmmc" permute gray --n 8 -b 3 --in "$work/in.bin" --out "$work/old.bin"
expect_error 2 "--in is required" "$bmmc" permute gray --n 8 -b 4 --out "$work/old.bin"
expect_error 2 "no such file" "$bmmc" permute gray --n 8 -b 4 --in "$work/missing.bin" --out "$work/old.bin"
expect_error 2 "singular" "$bmmc" permute matrix:1,1 -b 1 --in "$work/in.bin" --out "$work/old.bin"
expect_error 2 "malformed" "$bmmc" permute 'rotate:0b12' --n 8 -b 4 --in "$work/in.bin" --out "$work/old.bin"
expect_error 2 "defines n" "$bmmc" permute 'bits:1,0' --n 8 -b 4 --in "$work/in.bin" --out "$work/old.bin"
[[ $(cat "$work/old.bin") == "old content" ]] || fail "a failed permute changed its output"
[[ -z $(find "$work" -name '.*bmmc-*') ]] || fail "a failed permute left a temporary file"
expect_error 2 "tile_bits must be -1 (choose) or 5..20" \
  "$bmmc" bench --backend cpu --spec bit-reverse --n 12 --cpu-tile 30
expect_error 2 "" "$bmmc" nosuchcommand
expect_error 2 "" "$bmmc"

# --- bench --backend cpu --json: one array of rows with the GPU benchmarks' schema ---------------------------
"$bmmc" bench --backend cpu --spec random-bmmc:1 --n 14 --reps 2 --json >"$work/bench.json" || fail "bench --json"
python3 - "$work/bench.json" <<'PY' || fail "bench --backend cpu --json rows"
import json, sys
rows = json.load(open(sys.argv[1]))
assert isinstance(rows, list) and rows, rows
for r in rows:
    for key in ("variant", "median_ms", "gbps", "pct_memcpy", "verified"):
        assert key in r, (key, r)
    assert r["median_ms"] > 0 and r["gbps"] > 0 and r["verified"] is True, r
variants = [r["variant"] for r in rows]
assert variants[:4] == ["memcpy", "memcpy-1t", "naive", "one-pass"], variants
PY
"$bmmc" bench --backend cpu --spec bit-reverse --n 14 --reps 1 --variant one-pass --cpu-gather --cpu-tile 9 --csv \
  >"$work/bench.csv" || fail "bench --cpu-gather --cpu-tile"
grep -q ',naive,' "$work/bench.csv" && fail "--variant one-pass still timed the naive loop"
grep -q ',one-pass,' "$work/bench.csv" || fail "bench --csv lacks the one-pass row"
# Specs with commas are quoted fields (RFC 4180), so every row keeps the header's 15 columns.
"$bmmc" bench --backend cpu --spec axes:64x256:1,0 --reps 1 --variant one-pass --csv >"$work/bench-axes.csv" \
  || fail "bench --csv axes"
grep -q '^"axes:64x256:1,0","axes:64x256:1,0' "$work/bench-axes.csv" || fail "bench --csv does not quote a spec with commas"
python3 -c 'import csv, sys; rows = list(csv.reader(open(sys.argv[1]))); sys.exit(any(len(r) != 15 for r in rows))' \
  "$work/bench-axes.csv" || fail "bench --csv rows do not all have 15 fields"
# --in-place: the bound beside each row. swap:10,11 at 4 B moves half the array in whole sectors, so the bound is
# half the memcpy row's time and that row is 2.000x its bound; rows of other runs leave the columns empty.
"$bmmc" bench --backend cpu --in-place --spec swap:10,11 --n 14 --reps 3 --csv >"$work/bench-inplace.csv" \
  || fail "bench --in-place --csv"
python3 - "$work/bench-inplace.csv" "$work/bench-axes.csv" <<'PY' || fail "bench --in-place bound columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
copy = [r for r in rows if r["variant"] == "memcpy"][0]
assert abs(float(copy["bound_ms"]) - float(copy["median_ms"]) / 2) <= 1e-4, copy
assert copy["x_bound"] == "2.000", copy
inplace = [r for r in rows if r["variant"].startswith("in-place")][0]
assert float(inplace["x_bound"]) > 0 and inplace["bound_ms"] == copy["bound_ms"], inplace
assert all(r["bound_ms"] == "" and r["x_bound"] == "" for r in csv.DictReader(open(sys.argv[2])))
PY

# --- help describes every option ---------------------------------------------------------------------------
help=$("$bmmc" --help)
for cmd in show apply permute demo; do [[ "$help" == *"$cmd"* ]] || fail "--help lacks $cmd"; done
[[ "$help" == *"spec  := term"* ]] || fail "--help lacks the spec language"
phelp=$("$bmmc" permute --help)
for opt in --n --elem-bytes --in --out --backend SPEC; do [[ "$phelp" == *"$opt"* ]] || fail "permute --help lacks $opt"; done
[[ $("$bmmc" show --help) == *"--json"* ]] || fail "show --help lacks --json"
[[ $("$bmmc" demo --help) == *"--backend"* ]] || fail "demo --help lacks --backend"

# --- demo (small, to stay fast) ------------------------------------------------------------------------------
demo=$("$bmmc" demo --n 12 --reps 1) || fail "demo failed: $demo"
for spec in bit-reverse transpose:6 random-bpc:1 random-bmmc:1 gray; do
  [[ "$demo" == *"$spec"* ]] || fail "demo lacks $spec"
done
[[ "$demo" != *WRONG* ]] || fail "demo found wrong results"

# --- hardening (TESTING.md): more bad inputs, each with its exit code and message -------------------------
# Output locations that cannot take the file: nothing is created, no temporary file is left behind.
expect_error 2 "cannot create a temporary file next to '$work/no/such/dir/o.bin'" \
  "$bmmc" permute gray --n 8 -b 4 --in "$work/in.bin" --out "$work/no/such/dir/o.bin"
[[ ! -e "$work/no" ]] || fail "permute into a missing directory created it"
mkdir "$work/outdir"
expect_error 2 "cannot write '$work/outdir': it is a directory" \
  "$bmmc" permute gray --n 8 -b 4 --in "$work/in.bin" --out "$work/outdir"
[[ -d "$work/outdir" && -z $(ls -A "$work/outdir") ]] || fail "permute over a directory changed it"
if [[ $(id -u) -ne 0 ]]; then  # root may write into a read-only directory, so this case needs a plain user
  mkdir "$work/ro" && chmod 555 "$work/ro"
  expect_error 2 "cannot create a temporary file next to '$work/ro/o.bin': Permission denied" \
    "$bmmc" permute gray --n 8 -b 4 --in "$work/in.bin" --out "$work/ro/o.bin"
  chmod 755 "$work/ro"
fi
[[ -z $(find "$work" -name '.*bmmc-*') ]] || fail "a failed permute left a temporary file"
# Inputs that are not a regular file.
expect_error 2 "cannot read '$work/outdir': not a regular file" \
  "$bmmc" permute gray --n 8 -b 4 --in "$work/outdir" --out "$work/new.bin"
# n too large: above what the spec language allows, above what permute addresses, above size_t.
expect_error 2 "Value 65 not in range 0 to 64" "$bmmc" show bit-reverse --n 65
expect_error 2 "n = 63 index bits is out of range; expected 0 <= n <= 62" \
  "$bmmc" permute bit-reverse --n 63 -b 1 --in "$work/in.bin" --out "$work/new.bin"
expect_error 2 "an array of 2^62 elements of 16 bytes needs 2^66 bytes, which does not fit in size_t" \
  "$bmmc" permute bit-reverse --n 62 -b 16 --in "$work/in.bin" --out "$work/new.bin"
[[ ! -e "$work/new.bin" ]] || fail "a failed permute created its output"
# Malformed specs the parser must refuse with a column.
expect_error 2 "empty spec at column 1" "$bmmc" show '' --n 4
expect_error 2 "unmatched ')' at column 5" "$bmmc" show 'gray)' --n 4
expect_error 2 "does not fit in 64 bits at column 8" "$bmmc" show 'rotate:99999999999999999999' --n 4
expect_error 2 "complement '16' does not fit in n = 4 bits" "$bmmc" show 'reverse^16' --n 4
expect_error 2 "spec nests deeper than 200 levels" "$bmmc" show "$(printf '(%.0s' {1..300})gray$(printf ')%.0s' {1..300})" --n 4
expect_error 2 "bit permutation sends bits 0 and 1 both to bit 0" "$bmmc" show bits:0,0,1
expect_error 2 "must be a power of two" "$bmmc" show axes:3x2:0,1
expect_error 2 "'matrix' has 65 rows; at most 64 are supported" "$bmmc" show "matrix:$(seq -s, 1 65)"
# Backends: an unknown name, and cuda where this machine or build has none (a GPU machine runs it instead).
expect_error 2 "--backend: gpu not in {auto,cpu,cuda}" \
  "$bmmc" permute gray --n 8 -b 4 --in "$work/in.bin" --out "$work/new.bin" --backend gpu
rc=0
"$bmmc" permute gray --n 8 -b 4 --in "$work/in.bin" --out "$work/new.bin" --backend cuda >"$work/out" 2>"$work/err" || rc=$?
if [[ $rc -ne 0 ]]; then
  [[ $rc -eq 2 ]] && grep -qF "backend 'cuda' is not available" "$work/err" ||
    fail "--backend cuda without a GPU: exit $rc, $(cat "$work/err")"
  [[ ! -e "$work/new.bin" ]] || fail "a refused --backend cuda created its output"
fi
# --- several ranks (docs/DESIGN.md §9): the distributed plan, and the simulated ranks on files ------------------------
# plan --ranks: the JSON fields; a random BMMC on 4 ranks is an all-to-all (k = g = 2, one group); a swap of a
# rank bit with a local bit has k = 1: 2 destinations, 2 groups.
out=$("$bmmc" plan random-bmmc:1 --n 12 --ranks 4 --json) || fail "plan --ranks --json"
[[ "$out" == *'"k":2,"destinations_per_rank":4,"groups":1,"rounds":4,"elements_per_chunk":256,'* ]] ||
  fail "plan random-bmmc:1 --ranks 4: $out"
for field in k destinations_per_rank groups elements_per_chunk pre post plan_hash remote_bytes_per_rank schedules; do
  [[ "$out" == *"\"$field\":"* ]] || fail "plan --ranks --json lacks $field"
done
[[ $(grep -o '"send_group"' <<<"$out" | wc -l) == 4 ]] || fail "plan --ranks 4 --json: not one schedule per rank"
out=$("$bmmc" plan bits:5,1,2,3,4,0 --ranks 4 -b 8 --json) || fail "plan bits --ranks"
[[ "$out" == *'"k":1,"destinations_per_rank":2,"groups":2,"rounds":2,"elements_per_chunk":8,"bytes_per_chunk":64,'* &&
  "$out" == *'"remote_bytes_per_rank":{"min":64,"max":64}'* ]] || fail "plan of a rank-local bit swap: $out"
[[ $("$bmmc" plan random-bmmc:1 --n 14 --ranks 1024 --json | grep -o '"send_group"' | wc -l) == 1 ]] ||
  fail "plan --ranks 1024 prints more than rank 0's schedule"
# The push plan (§9.5): swapping the rank bit with local bit 0 needs a finishing pass; with the top local bit it
# does not (runs of 2^6 int32 stay on one source rank).
[[ $("$bmmc" plan swap:0,12 --n 13 --ranks 2 --json) == *'"push":{"line_bits":6,"one_pass":false,'* ]] ||
  fail "plan --ranks: push plan of swap:0,12"
[[ $("$bmmc" plan swap:11,12 --n 13 --ranks 2 --json) == *'"push":{"line_bits":6,"one_pass":true,'* ]] ||
  fail "plan --ranks: push plan of swap:11,12"
# The default pipeline: two ranks that each keep a chunk take 26 pieces within 1/8 scratch (15/128 of the array).
[[ $("$bmmc" plan swap:0,20 --n 21 --ranks 2 --json) == *'"pipeline":{"pieces":26,"atoms_per_chunk":128,'*'"send_segments":1,'*'"scratch_fraction":0.1171875}'* ]] ||
  fail "plan --ranks: the default pipeline of swap:0,20"
text=$("$bmmc" plan gray --n 10 --ranks 8) || fail "plan --ranks text"
for part in "k = rank(A_hl)" "pre-pass" "post-pass" "rank 7:" "round 0: send chunk" "push plan:" "pipelined exchange"; do
  [[ "$text" == *"$part"* ]] || fail "plan --ranks text lacks '$part'"
done
# plan --ranks G --nodes N (§9.1b): the worked example (a local-rank bit swapped with a node bit: 16 bytes per rank
# over the network against a bound of 16, where the one-exchange plan sends 0 or 32), rank 0's sends at 1024 ranks
# in 128 nodes, the text form, and the refusals; without --nodes the output is the one-level plan's.
out=$("$bmmc" plan swap:3,4 --n 5 --ranks 4 --nodes 2 --json) || fail "plan --ranks --nodes --json"
[[ "$out" == *'"ranks":4,"nodes":2,"ranks_per_node":2,'*'"node_k":1,'*'"network":{"bytes_per_rank":{"min":16,"max":16},"bound_bytes_per_rank":{"min":16,"max":16},"within_bound":true,"bytes_total":64,"bound_bytes_total":64,"one_exchange_bytes_per_rank":{"min":0,"max":32}}'* &&
  "$out" == *'"intra_pre":{"k":1,"bmmc":{"n":4,"rows":[4,2,8,1],"c":0,"class":"BP"}'* ]] ||
  fail "plan swap:3,4 --ranks 4 --nodes 2: $out"
[[ $(grep -o '"send":' <<<"$out" | wc -l) == 4 ]] || fail "plan --nodes --json: not one send list per rank"
out=$("$bmmc" plan random-bmmc:1 --n 14 --ranks 1024 --nodes 128 --json) || fail "plan --ranks 1024 --nodes 128"
[[ "$out" == *'"within_bound":true,'* && $(grep -o '"send":' <<<"$out" | wc -l) == 1 ]] ||
  fail "plan --ranks 1024 --nodes 128: $out"
text=$("$bmmc" plan bit-reverse --n 10 --ranks 8 --nodes 4) || fail "plan --nodes text"
for part in "node plan: n = 10, 8 ranks in 4 nodes" "network bytes per rank" "1. intra-node pre" "2. inter-node exchange" \
  "3. intra-node post" "over the network"; do
  [[ "$text" == *"$part"* ]] || fail "plan --nodes text lacks '$part'"
done
[[ $("$bmmc" plan gray --n 10 --ranks 8) != *"node plan"* ]] || fail "plan --ranks without --nodes printed a node plan"
expect_error 2 "nodes = 3: expected a power of two from 1 to the rank count 8" "$bmmc" plan gray --n 10 --ranks 8 --nodes 3
expect_error 2 "nodes = 16: expected a power of two" "$bmmc" plan gray --n 10 --ranks 8 --nodes 16
expect_error 2 "give --ranks too" "$bmmc" plan gray --n 10 --nodes 2
# permute --ranks: the same file as without --ranks, for 1 .. 2^n ranks and pieced exchanges.
head -c $((4 << 12)) /dev/urandom >"$work/r12.bin"
for spec in random-bmmc:4 random-bpc:4 bit-reverse transpose:5 reverse; do
  "$bmmc" permute "$spec" --n 12 -b 4 -i "$work/r12.bin" -o "$work/single.bin" || fail "permute $spec"
  for ranks in 1 2 16 4096; do
    "$bmmc" permute "$spec" --n 12 -b 4 -i "$work/r12.bin" -o "$work/dist.bin" --ranks $ranks --backend cpu ||
      fail "permute $spec --ranks $ranks"
    cmp -s "$work/single.bin" "$work/dist.bin" || fail "permute $spec --ranks $ranks differs from the single-array result"
  done
  "$bmmc" permute "$spec" --n 12 -b 4 -i "$work/r12.bin" -o "$work/dist.bin" --ranks 8 --pieces 5 ||
    fail "permute $spec --ranks 8 --pieces 5"
  cmp -s "$work/single.bin" "$work/dist.bin" || fail "permute $spec --ranks 8 --pieces 5 differs"
  "$bmmc" permute "$spec" --n 12 -b 4 -i "$work/r12.bin" -o "$work/dist.bin" --ranks 4 --pieces 7 --depth 3 ||
    fail "permute $spec --ranks 4 --pieces 7 --depth 3"
  cmp -s "$work/single.bin" "$work/dist.bin" || fail "permute $spec --ranks 4 --pieces 7 --depth 3 differs"
  "$bmmc" permute "$spec" --n 12 -b 4 -i "$work/r12.bin" -o "$work/dist.bin" --ranks 2 --pieces 0 ||
    fail "permute $spec --ranks 2 --pieces 0"
  cmp -s "$work/single.bin" "$work/dist.bin" || fail "permute $spec --ranks 2 --pieces 0 (within 1/8 scratch) differs"
done
# Every engine through the distributed door, and in place (an involution: a rank bit with a low bit, and with the
# top local bit).
"$bmmc" permute random-bmmc:4 --n 12 -b 4 -i "$work/r12.bin" -o "$work/single.bin" || fail "permute random-bmmc:4"
for engine in exchange push auto; do
  "$bmmc" permute random-bmmc:4 --n 12 -b 4 -i "$work/r12.bin" -o "$work/dist.bin" --ranks 4 --engine $engine ||
    fail "permute --ranks 4 --engine $engine"
  cmp -s "$work/single.bin" "$work/dist.bin" || fail "permute --ranks 4 --engine $engine differs"
done
for spec in swap:0,11 swap:10,11; do
  "$bmmc" permute "$spec" --n 12 -b 4 -i "$work/r12.bin" -o "$work/single.bin" || fail "permute $spec"
  cp "$work/r12.bin" "$work/inplace.bin"
  "$bmmc" permute "$spec" --n 12 -b 4 -i "$work/inplace.bin" -o "$work/inplace.bin" --ranks 2 --in-place ||
    fail "permute $spec --ranks 2 --in-place"
  cmp -s "$work/single.bin" "$work/inplace.bin" || fail "permute $spec --ranks 2 --in-place differs"
done
expect_error 2 "in place across ranks runs involutions" \
  "$bmmc" permute random-bmmc:4 --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --ranks 2 --in-place
expect_error 2 "'fused' names no distributed engine" \
  "$bmmc" permute gray --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --ranks 4 --engine fused
expect_error 2 "--engine applies to the distributed path" \
  "$bmmc" permute gray --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --engine push
expect_error 2 "--pieces must be at least 0" \
  "$bmmc" permute gray --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --ranks 4 --pieces -1
expect_error 2 "must be a power of two" "$bmmc" permute gray --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --ranks 6
expect_error 2 "8192 ranks need at least 13 index bits, but n = 12" \
  "$bmmc" permute gray --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --ranks 8192
expect_error 2 "at most 2^16 = 65536 ranks" "$bmmc" plan gray --n 20 --ranks 131072
expect_error 2 "the CLI does not split a file over GPUs" \
  "$bmmc" permute gray --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --ranks 4 --backend cuda
expect_error 2 "--pieces applies to the distributed path" \
  "$bmmc" permute gray --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --pieces 3
expect_error 2 "--depth applies to the pipelined distributed path" \
  "$bmmc" permute gray --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --depth 3
expect_error 2 "--depth applies to the pipelined distributed path: give --pieces" \
  "$bmmc" permute gray --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --ranks 4 --depth 3
expect_error 2 "depth = 1: the pipeline needs a ring of at least 2 buffers" \
  "$bmmc" permute gray --n 12 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --ranks 4 --pieces 3 --depth 1
expect_error 2 "bytes" "$bmmc" permute gray --n 13 -b 4 -i "$work/r12.bin" -o "$work/new.bin" --ranks 4
[[ ! -e "$work/new.bin" ]] || fail "a refused permute --ranks created its output"
# --- sort / program: strategies and the fused passes (docs/DESIGN.md §10) ----------------------------------------
expect_error 2 "unknown strategy 'x'; expected folded, permute-then-leaf or fused" "$bmmc" sort --n 8 --random 1 --strategy x
expect_error 2 "--fused-kernel 'x': expected pipelined, registers or shared" "$bmmc" sort --n 8 --random 1 --fused-kernel x
expect_error 2 "expected --tile-bits in 1..24" "$bmmc" sort --n 8 --random 1 --tile-bits 30
expect_error 2 "--run-bits in -1..10" "$bmmc" sort --n 8 --random 1 --run-bits 11
expect_error 2 "--orientation 'x': expected auto, fixed or runtime" "$bmmc" sort --n 8 --random 1 --orientation x
expect_error 2 "--no-relayout applies to the fused strategy, not to folded" "$bmmc" sort --n 8 --random 1 --strategy folded --no-relayout
expect_error 2 "--kernel-dir needs the cuda backend and the fused strategy" "$bmmc" sort --n 8 --random 1 --backend cpu --kernel-dir "$work/kernels"
expect_error 2 "--compare-cub needs the cuda backend" "$bmmc" sort --n 8 --random 1 --backend cpu --compare-cub
# --generic (the precompiled permutation kernels) only matters on a GPU: the CPU sorts the same with or without it.
"$bmmc" sort --n 10 --random 7 --backend cpu --strategy permute-then-leaf --generic --check -o "$work/sorted-generic.bin" ||
  fail "bmmc sort --generic on the cpu backend"
"$bmmc" sort --n 10 --random 7 --backend cpu --check -o "$work/sorted-fused.bin" || fail "bmmc sort --check"
cmp -s "$work/sorted-generic.bin" "$work/sorted-fused.bin" || fail "bmmc sort: permute-then-leaf and fused sort differently"
"$bmmc" sort --n 16 --random 2 --backend cpu --no-relayout --check --stats | grep -q "this run: 9 passes" \
  || fail "bmmc sort --no-relayout: not the network's own order (9 passes at n = 16 on the CPU's cut, 6 relaid)"
"$bmmc" sort --n 16 --random 2 --backend cpu --check --stats | grep -q "this run: 6 passes" || fail "bmmc sort: not relaid (6 passes at n = 16)"
# --compare-std: both host baselines print a row, and the two-thread one agrees with std::sort
"$bmmc" sort --n 12 --random 4 --backend cpu --reps 2 --compare-std >"$work/out" 2>"$work/err" || fail "bmmc sort --compare-std: $(cat "$work/err")"
grep -q "^| std::sort (1 thread) .*| yes" "$work/out" && grep -q "^| std::sort, 2 threads + std::merge .*| yes" "$work/out" ||
  fail "bmmc sort --compare-std: no std::sort rows: $(cat "$work/out")"
expect_error 2 "expected 0 <= line bits < tile bits <= 24" "$bmmc" program sort --n 8 --tile-bits 4 --line-bits 4
expect_out '{"program":"sort","n":24,"strategy":"fused","tile_bits":13,"line_bits":3,"passes":20,"fused_passes":19,"permutation_passes":1,"passes_without_relayout":25,"columns":300,"passes_folded":300,"passes_permute_then_leaf":600}' \
  "$bmmc" program sort --n 24 --json
expect_out '15' bash -c "'$bmmc' program sort --n 24 --json --tile-bits 15 | grep -o '\"passes\":[0-9]*' | cut -d: -f2"
"$bmmc" program sort --n 20 | grep -q "^fused: 12 passes over memory for 210 columns" || fail "bmmc program sort --n 20: no fused pass count"
for strategy in fused folded permute-then-leaf; do
  "$bmmc" sort --n 12 --random 3 --backend cpu --strategy "$strategy" --check >/dev/null 2>"$work/err" ||
    fail "bmmc sort --strategy $strategy: $(cat "$work/err")"
done
"$bmmc" sort --n 9 --random 3 --backend cpu --check --tile-bits 6 --line-bits 2 >/dev/null 2>"$work/err" ||
  fail "bmmc sort --tile-bits 6 --line-bits 2: $(cat "$work/err")"
expect_error 2 "unknown command 'foo'; the commands are demo, show" "$bmmc" foo
# Integer options read numbers as the spec language does: a leading zero is decimal, not octal; words and
# negative counts are refused by name.
expect_out 'n = 10' bash -c "'$bmmc' show identity --n 010 | head -1"
expect_out 'n = 10' bash -c "'$bmmc' show identity --n 0x0a | head -1"
expect_error 2 "'abc' is not an integer" "$bmmc" show identity --n abc
head -c 4096 /dev/urandom >"$work/h.bin"
expect_error 2 "'-1' is negative; expected 0 or more" "$bmmc" permute gray --n 10 -b 4 -i "$work/h.bin" -o "$work/h2.bin" --ranks -1
expect_error 2 "depth = 1000000: at most 128" "$bmmc" permute gray --n 10 -b 4 -i "$work/h.bin" -o "$work/h2.bin" \
  --backend cpu --ranks 4 --pieces 4 --depth 1000000
# Element size 0 and lane widths past any shift: errors, not a crash.
expect_error 2 "element size 0 bytes is not supported" "$bmmc" plan gray --n 8 -b 0
expect_error 2 "a lane access must be at most 16 bytes" "$bmmc" plan bit-reverse --n 12 --vector-bits 64
# In a shape 'x' always separates: 2x0x4 is refused for its 0, not read as 2 x 0x4.
expect_error 2 "dimension 1 of the shape is 0" "$bmmc" show axes:2x0x4:0,1,2
# One file as --in and --out needs --in-place (and is then permuted in place); the file is untouched otherwise.
cp "$work/h.bin" "$work/same.bin"
expect_error 2 "--in and --out name the same file" "$bmmc" permute gray --n 10 -b 4 -i "$work/same.bin" -o "$work/same.bin"
cmp -s "$work/h.bin" "$work/same.bin" || fail "a refused same-file permute changed the file"
"$bmmc" permute gray --n 10 -b 4 -i "$work/h.bin" -o "$work/want.bin" --backend cpu || fail "permute gray to want.bin"
"$bmmc" permute gray --n 10 -b 4 -i "$work/same.bin" -o "$work/same.bin" --in-place --backend cpu || fail "--in-place same file"
cmp -s "$work/want.bin" "$work/same.bin" || fail "--in-place on one file: wrong bytes"
# The output through a symbolic link replaces the file it names (the link stays); into a FIFO the bytes are
# written, the FIFO stays a FIFO (replacing it would, for /dev/null, replace the device); a 250-byte name works.
cp "$work/h.bin" "$work/target.bin"
ln -s target.bin "$work/link.bin"
"$bmmc" permute gray --n 10 -b 4 -i "$work/h.bin" -o "$work/link.bin" --backend cpu || fail "permute into a symlink"
[[ -L "$work/link.bin" ]] || fail "permute replaced the symlink itself"
cmp -s "$work/want.bin" "$work/target.bin" || fail "permute through a symlink: the target does not hold the output"
mkfifo "$work/fifo"
timeout 20 cat "$work/fifo" >"$work/from_fifo" &
reader=$!
timeout 20 "$bmmc" permute gray --n 10 -b 4 -i "$work/h.bin" -o "$work/fifo" --backend cpu || fail "permute into a FIFO"
wait "$reader" || fail "the FIFO's reader got no end of file"
[[ -p "$work/fifo" ]] || fail "permute replaced the FIFO with a file"
cmp -s "$work/want.bin" "$work/from_fifo" || fail "permute into a FIFO: wrong bytes"
# /dev/stdout redirected to a file is appended to (a rename would have cut the shell's file off or clobbered it).
printf 'old\n' >"$work/log"
"$bmmc" permute gray --n 10 -b 4 -i "$work/h.bin" -o /dev/stdout --backend cpu >>"$work/log" || fail "permute -o /dev/stdout"
[[ $(head -1 "$work/log") == old && $(stat -c %s "$work/log") == $((4 + 4096)) ]] || fail "-o /dev/stdout >> log: not appended"
# A dangling link names the file to create (the link stays); a loop of links is refused; a replaced file keeps its mode.
mkdir "$work/sub"
ln -s sub/new.bin "$work/dangling"
"$bmmc" permute gray --n 10 -b 4 -i "$work/h.bin" -o "$work/dangling" --backend cpu || fail "permute into a dangling link"
[[ -L "$work/dangling" ]] && cmp -s "$work/want.bin" "$work/sub/new.bin" || fail "a dangling link: its target not created"
ln -s loop_b "$work/loop_a"
ln -s loop_a "$work/loop_b"
expect_error 2 "too many levels of symbolic links" "$bmmc" permute gray --n 10 -b 4 -i "$work/h.bin" -o "$work/loop_a"
cp "$work/h.bin" "$work/mode.bin"
chmod 640 "$work/mode.bin"
"$bmmc" permute gray --n 10 -b 4 -i "$work/h.bin" -o "$work/mode.bin" --backend cpu || fail "permute over a 640 file"
[[ $(stat -c %a "$work/mode.bin") == 640 ]] || fail "the replaced file lost its mode: $(stat -c %a "$work/mode.bin")"
# A reader that goes away: an error naming the broken pipe (not a silent SIGPIPE death).
head -c $((256 * 1024)) /dev/urandom >"$work/big.bin"
mkfifo "$work/fifo2"
timeout 20 head -c 1 "$work/fifo2" >/dev/null &
expect_error 1 "Broken pipe" timeout 20 "$bmmc" permute gray --n 16 -b 4 -i "$work/big.bin" -o "$work/fifo2" --backend cpu
wait || true
long="$work/$(printf 'a%.0s' $(seq 250))"
"$bmmc" permute gray --n 10 -b 4 -i "$work/h.bin" -o "$long" --backend cpu || fail "permute to a 250-byte file name"
cmp -s "$work/want.bin" "$long" || fail "permute to a 250-byte file name: wrong bytes"
# Options checked rather than taken as something else: negative display limits, sort's sentinels, an unbounded
# --reps, options of the other backend, empty file names (CLI11 stores "" as if the option were absent).
expect_error 2 "--depth: Value -1 not in range" "$bmmc" program sort --n 6 --depth -1
expect_error 2 "--stages: Value -1 not in range" "$bmmc" program sort --n 6 --stages -1
expect_error 2 "--line-bits in 0..24 below it (-1: the default)" "$bmmc" sort --n 10 --random 1 --backend cpu --line-bits -5
expect_error 2 "--reps 2000000: expected 1..100000" "$bmmc" bench --backend cpu --n 10 --reps 2000000
expect_error 2 "--vector-bits applies to the cuda backend" "$bmmc" bench --backend cpu --n 10 --vector-bits 3
expect_error 2 "--block-order applies to the cuda backend" "$bmmc" bench --backend cpu --n 10 --block-order input
expect_error 2 "--mask applies to --in-place swap specs on one GPU" \
  "$bmmc" bench --backend cpu --n 10 --in-place --spec swap:1,2 --mask 3=1
expect_error 2 "--mask applies to --in-place" "$bmmc" bench --n 10 --spec swap:1,2 --mask 3=1
expect_error 2 "expected BIT=VALUE pairs" "$bmmc" bench --n 10 --in-place --spec swap:1,2 --mask 3=2
expect_error 2 "bit 3 is given twice" "$bmmc" bench --n 10 --in-place --spec swap:1,2 --mask 3=1,3=0
# --digit-tune: planner policies of --shape maps on the GPU, each KEY=N malformed item named with its column.
expect_error 2 "'foo=3' at column 11: expected KEY=N" "$bmmc" bench --shape 5x7 --spec axes:1,0 --digit-tune tile=4096,foo=3
expect_error 2 "'tile=-1' at column 1: expected a positive integer" "$bmmc" bench --shape 5x7 --spec axes:1,0 --digit-tune tile=-1
expect_error 2 "'tile=8' at column 11: tile is given twice" "$bmmc" bench --shape 5x7 --spec axes:1,0 --digit-tune tile=4096,tile=8
expect_error 2 "at column 11: expected KEY=N" "$bmmc" bench --shape 5x7 --spec axes:1,0 --digit-tune tile=4096,
expect_error 2 "the number is out of range" "$bmmc" bench --shape 5x7 --spec axes:1,0 --digit-tune run=99999999999
expect_error 2 "a tile takes at most 32768 bytes" "$bmmc" bench --shape 5x7 --spec axes:1,0 --digit-tune tile=65536
expect_error 2 "a multiple of 32, at most 1024" "$bmmc" bench --shape 5x7 --spec axes:1,0 --digit-tune threads=2048
expect_error 2 "min-blocks 12 of 256 threads is more than the 2048" "$bmmc" bench --shape 5x7 --spec axes:1,0 --digit-tune min-blocks=12
expect_error 2 "'cover=2' at column 11: expected cover=0" "$bmmc" bench --shape 5x7 --spec axes:1,0 --digit-tune tile=4096,cover=2
expect_error 2 "'skew=1' at column 1: expected skew=0" "$bmmc" bench --shape 5x7 --spec axes:1,0 --digit-tune skew=1
expect_error 2 "--digit-tune applies to the cuda backend" "$bmmc" bench --backend cpu --shape 5x7 --spec axes:1,0 --digit-tune tile=4096
expect_error 2 "--variant two-pass: the cpu backend times naive and one-pass" "$bmmc" bench --backend cpu --n 10 --variant one-pass two-pass
expect_error 2 "--output: the file name is empty" "$bmmc" gen bit-reverse --n 4 -o ''
expect_error 2 "--out: the file name is empty" "$bmmc" sort --n 4 --random 1 --backend cpu --out ''
expect_error 2 "--in: the file name is empty" "$bmmc" permute bit-reverse --n 4 -b 4 --in '' --out "$work/never.bin"
[[ ! -e "$work/never.bin" ]] || fail "permute --in '': an output was written"
# A long spec: the message quotes a long name shortened and shows the 80 bytes around the column.
longspec="$(printf 'bit-reverse*%.0s' $(seq 2000))zz"
expect_error 2 "unknown name 'zz' at column 24001" "$bmmc" show "$longspec" --n 4
(($(wc -c <"$work/err") < 1000)) || fail "a bad 24 KB spec: the message is $(wc -c <"$work/err") bytes"
expect_error 2 "unknown name 'qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq...' (300 characters) at column 1" \
  "$bmmc" show "$(printf 'q%.0s' $(seq 300))" --n 4
# --- standard streams: '-' is standard input (read whole and size-checked before anything is written) and
# standard output (written in order); a file called '-' is never created ------------------------------------------
mkdir "$work/streams"
pushd "$work/streams" >/dev/null  # where a file called '-' would appear
"$bmmc" permute gray --n 10 -b 4 -i - -o - --backend cpu <"$work/h.bin" >"$work/s1.bin" ||
  fail "permute -i - -o - from a file"
cmp -s "$work/want.bin" "$work/s1.bin" || fail "permute -i - -o -: wrong bytes"
cat "$work/h.bin" | "$bmmc" permute gray --n 10 -b 4 -i - -o - --backend cpu | cat >"$work/s2.bin" ||
  fail "permute -i - -o - in a pipeline"
cmp -s "$work/want.bin" "$work/s2.bin" || fail "permute -i - -o - in a pipeline: wrong bytes"
cat "$work/h.bin" | "$bmmc" permute gray --n 10 -b 4 -i /dev/stdin -o "$work/s3.bin" --backend cpu ||
  fail "permute -i /dev/stdin from a pipe"
cmp -s "$work/want.bin" "$work/s3.bin" || fail "permute -i /dev/stdin: wrong bytes"
cat "$work/h.bin" | "$bmmc" permute gray --n 10 -b 4 -i - -o - --in-place --backend cpu >"$work/s4.bin" ||
  fail "permute -i - -o - --in-place"
cmp -s "$work/want.bin" "$work/s4.bin" || fail "permute -i - -o - --in-place: wrong bytes"
cat "$work/h.bin" | "$bmmc" permute gray --n 10 -b 4 -i - -o - --ranks 4 --backend cpu >"$work/s5.bin" ||
  fail "permute -i - -o - --ranks 4"
cmp -s "$work/want.bin" "$work/s5.bin" || fail "permute -i - -o - --ranks 4: wrong bytes"
# A short or long stream is refused before anything is written (expect_error: nothing on standard output).
expect_error 2 "standard input ended after 100 bytes but 4096 bytes were expected" \
  bash -c "head -c 100 '$work/h.bin' | '$bmmc' permute gray --n 10 -b 4 -i - -o -"
expect_error 2 "standard input holds more than the 4096 bytes expected" \
  bash -c "cat '$work/h.bin' '$work/h.bin' | '$bmmc' permute gray --n 10 -b 4 -i - -o -"
expect_error 2 "'/dev/zero' holds more than the 4096 bytes expected" \
  "$bmmc" permute gray --n 10 -b 4 -i /dev/zero -o "$work/s6.bin"
[[ ! -e "$work/s6.bin" ]] || fail "a refused stream input created the output"
[[ ! -e "$work/streams/-" ]] || fail "permute -o - wrote a file named '-'"
popd >/dev/null
# sort reads keys from standard input; its report goes to standard output, so the keys cannot.
"$bmmc" sort --n 10 --random 5 --backend cpu -o "$work/keys.bin" >/dev/null || fail "sort --random 5 -o keys.bin"
"$bmmc" sort --n 10 --backend cpu -i - -o "$work/sorted-stdin.bin" --check <"$work/keys.bin" >/dev/null ||
  fail "sort -i -"
cmp -s "$work/keys.bin" "$work/sorted-stdin.bin" || fail "sort -i - of sorted keys changed them"
expect_error 2 "--out -: sort prints its report on standard output" "$bmmc" sort --n 10 --random 5 --backend cpu -o -
# --- small runs: times with a unit that shows digits, sizes below 1 MiB in KiB, a raised --reps said -------
[[ "$demo" == *"2^12 int32 elements (16 KiB)"* ]] || fail "demo --n 12: the size is not 16 KiB: $demo"
[[ "$demo" == *"(--reps 1 raised to "*", the least on "* ]] || fail "demo --reps 1: the raise is not said: $demo"
[[ "$demo" != *" 0.00 "* && "$demo" != *"0.000 ms"* ]] || fail "demo --n 12: a time printed as zero: $demo"
grep -Eq '^bit-reverse +BP +[0-9.]+ (ms|µs|ns) ' <<<"$demo" || fail "demo: the bit-reverse time has no unit: $demo"
"$bmmc" bench --backend cpu --spec bit-reverse --n 12 --reps 3 >"$work/bench.txt" || fail "bench --n 12"
grep -q "0\.000" "$work/bench.txt" && fail "bench --n 12 printed a zero time: $(cat "$work/bench.txt")"
grep -Eq '^bit-reverse +one-pass +[0-9.]+ (ms|µs|ns) +[0-9.]+ (ms|µs|ns) +[0-9.]+ (ms|µs|ns) ' "$work/bench.txt" ||
  fail "bench --n 12: the one-pass times have no unit: $(cat "$work/bench.txt")"
# --- messages: CLI11's errors in the tool's form; a negative index; a spec's two columns said once each ------
expect_error 2 "bmmc: error: --elem-bytes is required" "$bmmc" permute gray --n 8 -i "$work/in.bin" -o "$work/x.bin"
grep -qF "Run 'bmmc permute --help' for more information." "$work/err" || fail "no pointer to permute's help: $(cat "$work/err")"
expect_error 2 "bmmc: error: The following argument was not expected: --bogus" "$bmmc" show gray --n 4 --bogus
expect_error 2 "index -1 is negative: indices are 0..2^4-1" "$bmmc" apply bit-reverse --n 4 -1
expect_error 2 "expected ')' at column 9 to close the 'inv(' at column 1, found end of spec" \
  "$bmmc" show 'inv(gray' --n 4
# --- end hardening ---------------------------------------------------------------------------------------------

if ((failures > 0)); then
  echo "$failures CLI check(s) failed" >&2
  exit 1
fi
echo "all CLI checks passed"
