#!/usr/bin/env bash
# End-to-end tests of the bmmc CLI on arrays of any shape (--shape S: SPEC is an any-shape map, docs/DESIGN.md §11).
# Usage: shape_test.sh PATH/TO/bmmc. permute is checked byte for byte against a reference computed here from the
# map's definition (bmmc/core/digit_map.hpp); plan, gen and show by their content; every bad input by its exit
# code, its message (with the column where there is one) and an output left as it was. Needs only bash and coreutils.
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

# expect_error CODE "stderr substring" cmd...: the exit code, the message, and nothing on stdout.
expect_error() {
  local code=$1 part=$2 rc=0
  shift 2
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  [[ $rc == "$code" ]] || fail "$*: expected exit $code, got $rc (stderr: $(cat "$work/err"))"
  [[ "$(cat "$work/err")" == *"$part"* ]] || fail "$*: stderr lacks '$part': $(cat "$work/err")"
  [[ ! -s "$work/out" ]] || fail "$*: printed to stdout on error: $(cat "$work/out")"
}

# bytes FILE: the file's bytes, one decimal per line.
bytes() { od -An -v -tu1 -w1 "$1" | tr -d ' '; }

# iota FILE COUNT: COUNT bytes 0, 1, 2, ... (mod 256).
iota() {
  local s="" i h
  for ((i = 0; i < $2; i++)); do
    printf -v h '\\x%02x' $((i % 256))
    s+=$h
  done
  printf "$s" >"$1"
}

# reference SHAPE AXES FLIPS ROLLS E IN OUT: OUT = IN permuted by the map's definition. The array has shape SHAPE
# (C order, comma-separated extents) of E-byte elements; output axis j takes input axis a = AXES[j] and the element
# at input coordinates i goes to o_j = ((FLIPS[j] ? d_a − 1 − i_a : i_a) + ROLLS[j]) mod d_a.
reference() {
  local -a d ax fl ro in out i
  IFS=, read -ra d <<<"$1"
  IFS=, read -ra ax <<<"$2"
  IFS=, read -ra fl <<<"$3"
  IFS=, read -ra ro <<<"$4"
  local e=$5 k=${#d[@]} total=1 x a j b g o rest
  for ((a = 0; a < k; a++)); do total=$((total * d[a])); done
  mapfile -t in < <(bytes "$6")
  for ((x = 0; x < total; x++)); do
    rest=$x
    for ((a = k - 1; a >= 0; a--)); do
      i[a]=$((rest % d[a]))
      rest=$((rest / d[a]))
    done
    o=0
    for ((j = 0; j < k; j++)); do
      a=${ax[j]}
      g=${i[a]}
      ((fl[j])) && g=$((d[a] - 1 - g))
      g=$((((g + ro[j]) % d[a] + d[a]) % d[a]))
      o=$((o * d[a] + g))
    done
    for ((b = 0; b < e; b++)); do out[o * e + b]=${in[x * e + b]}; done
  done
  local s="" h
  for ((x = 0; x < total * e; x++)); do
    printf -v h '\\x%02x' "${out[x]}"
    s+=$h
  done
  printf "$s" >"$7"
}

# The reference on a worked example (numpy.transpose of a 2x3 array): 0 1 2 / 3 4 5 -> 0 3 / 1 4 / 2 5.
iota "$work/six.bin" 6
reference 2,3 1,0 0,0 0,0 1 "$work/six.bin" "$work/six-t.bin"
[[ $(bytes "$work/six-t.bin" | tr '\n' ' ') == "0 3 1 4 2 5 " ]] || fail "the reference transpose: $(bytes "$work/six-t.bin")"
# ... and numpy.roll(np.flip(x), 1) of [0 1 2 3 4]: [4 3 2 1 0] rolled by 1 -> [0 4 3 2 1].
iota "$work/five.bin" 5
reference 5 0 1 1 1 "$work/five.bin" "$work/five-r.bin"
[[ $(bytes "$work/five-r.bin" | tr '\n' ' ') == "0 4 3 2 1 " ]] || fail "the reference flip+roll: $(bytes "$work/five-r.bin")"

# --- permute: byte for byte against the reference, every element size, digit and BMMC maps ---------------------
# case := SHAPE|SPEC|AXES|FLIPS|ROLLS (the map as digit_map.hpp defines it: per output axis). The default backend:
# with a GPU, the maps that are BMMCs (4x8 on 1/2/4/8/16-byte elements) run on it, the others on the CPU.
cases=(
  "3x4x5|axes:2,0,1|2,0,1|0,0,0|0,0,0"
  "3x4x5|roll:1,0,2*flip:0*axes:2,0,1|2,0,1|1,0,0|1,0,2"
  "3x4x5|axes:3x4x5:2,0,1|2,0,1|0,0,0|0,0,0"
  "3x4x5|inv(axes:1,2,0)|2,0,1|0,0,0|0,0,0"
  "3x5|flip|0,1|1,1|0,0"
  "3x5|flip:-1|0,1|0,1|0,0"
  "3x5|roll:-1,7|0,1|0,0|2,2"
  "3x4|fftshift|0,1|0,0|1,2"
  "3x4|ifftshift|0,1|0,0|2,2"
  "7|roll:3|0|0|3"
  "2x1x3x2|axes:3,1,0,2|3,1,0,2|0,0,0,0|0,0,0,0"
  "4x8|axes:1,0|1,0|0,0|0,0"
  "4x8|fftshift*axes:1,0|1,0|0,0|4,2"
  "2x3x5x2|flip:1*axes:3,2,1,0|3,2,1,0|0,1,0,0|0,0,0,0"
)
for b in 1 2 3 4 8 16; do
  for c in "${cases[@]}"; do
    IFS='|' read -r shape spec axes flips rolls <<<"$c"
    head -c $((${shape//x/*} * b)) /dev/urandom >"$work/in.bin"
    reference "${shape//x/,}" "$axes" "$flips" "$rolls" "$b" "$work/in.bin" "$work/want.bin"
    rm -f "$work/got.bin"
    "$bmmc" permute --shape "$shape" "$spec" -b "$b" -i "$work/in.bin" -o "$work/got.bin" ||
      fail "permute --shape $shape '$spec' -b $b"
    cmp -s "$work/want.bin" "$work/got.bin" || fail "permute --shape $shape '$spec' -b $b: not the reference"
  done
done

# Standard input and output, and the auto backend.
iota "$work/a.bin" 120  # 3x4x5 of 2 bytes
reference 3,4,5 2,0,1 1,0,0 1,0,2 2 "$work/a.bin" "$work/want.bin"
"$bmmc" permute --shape 3x4x5 'roll:1,0,2*flip:0*axes:2,0,1' -b 2 -i - -o - <"$work/a.bin" >"$work/got.bin" ||
  fail "permute --shape through standard input and output"
cmp -s "$work/want.bin" "$work/got.bin" || fail "permute --shape -i - -o -: not the reference"
# In place (an involution: a flip, a square transpose), --in and --out one file.
iota "$work/f.bin" 60
reference 3,4,5 0,1,2 1,0,1 0,0,0 1 "$work/f.bin" "$work/want.bin"
"$bmmc" permute --shape 3x4x5 'flip:0,2' -b 1 -i "$work/f.bin" -o "$work/f.bin" --in-place ||
  fail "permute --shape --in-place of a flip"
cmp -s "$work/want.bin" "$work/f.bin" || fail "permute --shape --in-place of a flip: not the reference"
iota "$work/sq.bin" 75  # 5x5 of 3 bytes
reference 5,5 1,0 0,0 0,0 3 "$work/sq.bin" "$work/want.bin"
"$bmmc" permute --shape 5x5 'axes:1,0' -b 3 -i "$work/sq.bin" -o "$work/sq.bin" --in-place ||
  fail "permute --shape --in-place of a square transpose"
cmp -s "$work/want.bin" "$work/sq.bin" || fail "permute --shape --in-place of a square transpose: not the reference"
# A round trip through the inverse on a larger array of 3-byte elements.
head -c $((31 * 17 * 9 * 3)) /dev/urandom >"$work/big.bin"
"$bmmc" permute --shape 31x17x9 'roll:5,-3,1*flip:2*axes:1,2,0' -b 3 -i "$work/big.bin" -o "$work/m.bin" ||
  fail "permute 31x17x9"
"$bmmc" permute --shape 17x9x31 'inv(roll:5,-3,1*flip:2*axes:1,2,0)' -b 3 -i "$work/m.bin" -o "$work/back.bin" ||
  fail "permute the inverse on 17x9x31"
cmp -s "$work/big.bin" "$work/back.bin" || fail "permute --shape: the inverse does not bring the array back"

# --backend cuda: a BMMC map and any other run on the GPU (the file's array goes through device memory). Without a
# usable GPU both are refused as unavailable.
iota "$work/t.bin" 32
reference 4,8 1,0 0,0 0,0 1 "$work/t.bin" "$work/want.bin"
if "$bmmc" permute --shape 4x8 'axes:1,0' -b 1 -i "$work/t.bin" -o "$work/got.bin" --backend cuda 2>"$work/err"; then
  cmp -s "$work/want.bin" "$work/got.bin" || fail "permute --shape 4x8 axes:1,0 --backend cuda: not the reference"
  iota "$work/odd.bin" 30
  reference 3,5 1,0 0,0 0,0 2 "$work/odd.bin" "$work/want.bin"
  "$bmmc" permute --shape 3x5 'axes:1,0' -b 2 -i "$work/odd.bin" -o "$work/got.bin" --backend cuda ||
    fail "permute --shape 3x5 --backend cuda failed"
  cmp -s "$work/want.bin" "$work/got.bin" || fail "permute --shape 3x5 axes:1,0 --backend cuda: not the reference"
else
  grep -q "is not available" "$work/err" || fail "permute --shape --backend cuda: $(cat "$work/err")"
fi

# --- show --------------------------------------------------------------------------------------------------------
expect_out $'spec = roll:0,5,0*flip:0*axes:2,0,1\nmap = roll:0,5,0*flip:0*axes:2,0,1\nshape = 7x3x2 -> 2x7x3\ncanonical = roll:0,15*flip:0*axes:1,0 on 21x2 -> 2x21\ninvolution = no\nidentity = no\nbmmc = none (runs on the digit planner)' \
  "$bmmc" show --shape 7x3x2 'roll:0,5,0*flip:0*axes:2,0,1'
expect_out '{"spec":"axes:0,2,1","map":"axes:0,2,1","shape":[1,4,8],"out_shape":[1,8,4],"canonical":{"map":"axes:1,0","shape":[4,8],"out_shape":[8,4]},"involution":false,"identity":false,"bmmc":{"n":5,"rows":[8,16,1,2,4],"c":0,"class":"BP"}}' \
  "$bmmc" show --shape 1x4x8 'axes:0,2,1' --json
expect_out '{"spec":"fftshift","map":"roll:2,4","shape":[4,8],"out_shape":[4,8],"canonical":{"map":"roll:2,4","shape":[4,8],"out_shape":[4,8]},"involution":true,"identity":false,"bmmc":{"n":5,"rows":[1,2,4,8,16],"c":20,"class":"BPC"}}' \
  "$bmmc" show --shape 4x8 fftshift --json
[[ $("$bmmc" show --shape 3x5 'flip*flip' --json) == *'"involution":true,"identity":true,"bmmc":null}' ]] ||
  fail "show --shape 3x5 flip*flip --json"
[[ $("$bmmc" show --shape 4x8 'axes:1,0') == *$'bmmc = class BP on n = 5 bits, c = 0x0\nA (row i'* ]] ||
  fail "show --shape 4x8 axes:1,0: the Bmmc"

# --- plan: the digit plan with the checker's verdict; a BMMC says so and prints the BMMC plan ---------------------
out=$("$bmmc" plan --shape 3x5x7 'flip:0*axes:2,0,1' -b 2) || fail "plan --shape"
[[ "$out" == "digit plan: flip:0*axes:2,0,1 of shape 3x5x7, 2-byte elements"* ]] || fail "plan --shape: $out"
[[ "$out" == *$'\ncheck: correct yes, 105 writes,'* ]] || fail "plan --shape: no check: $out"
out=$("$bmmc" plan --shape 3x5x7 'roll:1,2,3*axes:2,0,1' -b 3 --json) || fail "plan --shape --json"
[[ "$out" == '{"runs_as":"digits","kind":"digit","spec":"roll:1,2,3*axes:2,0,1","shape":[3,5,7],"elem_bytes":3,'* ]] ||
  fail "plan --shape --json: $out"
[[ "$out" == *'"check":{"checked":true,"ok":true,"writes":315,'* ]] || fail "plan --shape --json: check: $out"
out=$("$bmmc" plan --shape 2000x3001 'axes:1,0' -b 1) || fail "plan --shape 2000x3001"
[[ "$out" == *$'\ncheck: not checked: the checker executes every element, and this plan moves 6002000 elements (more than 2^22)' ]] ||
  fail "plan of a large shape: $out"
[[ $("$bmmc" plan --shape 2000x3001 'axes:1,0' -b 1 --json) == *'"check":{"checked":false,"why":"not checked: '* ]] ||
  fail "plan of a large shape --json"
out=$("$bmmc" plan --shape 4x8 'axes:1,0' -b 4 --check) || fail "plan --shape of a BMMC"
[[ "$out" == "'axes:1,0' on shape 4x8 runs as the BMMC on n = 5 bits, class BP"*$'\nplan: variant one-pass, n = 5,'*$'\ncheck: correct yes,'* ]] ||
  fail "plan --shape of a BMMC: $out"
[[ "$out" == *"$("$bmmc" plan 'axes:4x8:1,0' -b 4 --check)"* ]] || fail "plan --shape of a BMMC is not the BMMC's plan"
[[ $("$bmmc" plan --shape 4x8 'axes:1,0' --json) == '{"runs_as":"bmmc","map":"axes:1,0","shape":[4,8],"bmmc":{"n":5,"rows":[8,16,1,2,4],"c":0,"class":"BP"},"variant":"one-pass",'* ]] ||
  fail "plan --shape of a BMMC --json"
[[ $("$bmmc" plan --shape 4x8 'axes:1,0' -b 3) == "digit plan: axes:1,0 of shape 4x8, 3-byte elements"* ]] ||
  fail "plan --shape of a BMMC of 3-byte elements is not a digit plan"

# --- gen: the digit kernel, or the BMMC kernel for a BMMC ------------------------------------------------------------
out=$("$bmmc" gen --shape 3x5x7 'flip:0*axes:2,0,1' -b 2) || fail "gen --shape"
[[ "$out" == *'any-shape digit plan'*'__global__'*'bmmc_digit(const unsigned char* __restrict__ in'*'digit_tile_pass<G, 2, '* ]] ||
  fail "gen --shape: $out"
[[ $("$bmmc" gen --shape 4x8 'axes:1,0') == "$("$bmmc" gen 'axes:4x8:1,0')" ]] || fail "gen --shape of a BMMC"
"$bmmc" gen --shape 5x6 'roll:1,1' -b 16 -o "$work/k.cu" || fail "gen --shape -o"
grep -q 'bmmc_digit' "$work/k.cu" || fail "gen --shape -o wrote no digit kernel"

# --- bad input: exit 2, a message (with its column), nothing written --------------------------------------------
iota "$work/in.bin" 30  # 3x5 of 2 bytes
echo "old content" >"$work/old.bin"
for cmd in show plan gen; do
  expect_error 2 $'expected an extent at column 3, found \'x\'\n  --shape 3xx5\n            ^' \
    "$bmmc" $cmd --shape 3xx5 'axes:1,0'
  expect_error 2 "--shape and --n both give the array's size: give one" "$bmmc" $cmd --shape 3x5 'axes:1,0' --n 4
done
expect_error 2 "extent 1 of the shape is 0 at column 3" "$bmmc" show --shape 3x0 flip
expect_error 2 "the shape is empty" "$bmmc" show --shape '' flip
expect_error 2 $'axis 3 is out of range for a rank-3 shape 4x5x6 at column 8 (expected 0..2)\n  axes:0,3,1\n         ^' \
  "$bmmc" show --shape 4x5x6 'axes:0,3,1'
expect_error 2 $'at column 8, found \',\'\n  axes:1,,0\n         ^' \
  "$bmmc" permute --shape 3x5 'axes:1,,0' -b 2 -i "$work/in.bin" -o "$work/old.bin"
expect_error 2 $'found a negative number at column 3 (only roll shifts and flip axes may be negative)\n  --shape 3x-5\n            ^' \
  "$bmmc" permute --shape 3x-5 flip -b 2 -i "$work/in.bin" -o "$work/old.bin"
expect_error 2 "--shape and --n both give the array's size: give one" \
  "$bmmc" permute --shape 3x5 flip --n 4 -b 2 -i "$work/in.bin" -o "$work/old.bin"
expect_error 2 "'$work/in.bin' has 30 bytes, but an array of shape 3x5 of 4-byte elements has 60 bytes" \
  "$bmmc" permute --shape 3x5 'axes:1,0' -b 4 -i "$work/in.bin" -o "$work/old.bin"
expect_error 2 "'$work/in.bin' has 30 bytes, but an array of shape 4x8 of 1-byte elements has 32 bytes" \
  "$bmmc" permute --shape 4x8 'axes:1,0' -b 1 -i "$work/in.bin" -o "$work/old.bin"
expect_error 2 "standard input ended after 30 bytes but 45 bytes were expected" \
  "$bmmc" permute --shape 3x5 flip -b 3 -i - -o "$work/old.bin" <"$work/in.bin"
expect_error 2 "in place needs a map that is its own inverse; axes:1,0 on shape 3x5 is not" \
  "$bmmc" permute --shape 3x5 'axes:1,0' -b 2 -i "$work/in.bin" -o "$work/old.bin" --in-place
expect_error 2 "--elem-bytes 0: expected 1 byte or more" \
  "$bmmc" permute --shape 3x5 flip -b 0 -i "$work/in.bin" -o "$work/old.bin"
expect_error 2 "--elem-bytes -2: expected 1 byte or more" \
  "$bmmc" permute --shape 3x5 flip -b -2 -i "$work/in.bin" -o "$work/old.bin"
expect_error 2 "more than 2^62 bytes" \
  "$bmmc" permute --shape 1048576x1048576x1048576 flip -b 16 -i "$work/in.bin" -o "$work/old.bin"
expect_error 2 "they do not apply to --shape" \
  "$bmmc" permute --shape 4x8 'axes:1,0' -b 1 --ranks 2 -i "$work/in.bin" -o "$work/old.bin"
expect_error 2 "--in and --out name the same file" \
  "$bmmc" permute --shape 3x5 flip -b 2 -i "$work/in.bin" -o "$work/in.bin"
expect_error 2 "--variant applies to BMMC plans; 'axes:1,0' on shape 3x5 is not a BMMC" \
  "$bmmc" plan --shape 3x5 'axes:1,0' --variant naive
expect_error 2 "--in-place applies to BMMC plans" "$bmmc" plan --shape 3x5 flip --in-place
expect_error 2 "--threads applies to BMMC plans" "$bmmc" gen --shape 3x5 flip --threads 64
expect_error 2 "--check executes every element; this plan moves 6002000 elements (at most 2^22)" \
  "$bmmc" plan --shape 2000x3001 'axes:1,0' -b 1 --check
[[ $(cat "$work/old.bin") == "old content" ]] || fail "a failed permute --shape changed its output"
[[ ! -e "$work/new.bin" ]] || fail "a failed permute --shape created its output"
[[ -z $(find "$work" -name '.*bmmc-*') ]] || fail "a failed permute --shape left a temporary file"

# --- help: the shape spec language and --shape on every command that takes it -----------------------------------
[[ $("$bmmc" --help) == *"Shape specs (with --shape D0xD1x..."*"roll:S0,S1,..."* ]] || fail "--help lacks the shape specs"
for cmd in permute plan gen show; do
  [[ $("$bmmc" $cmd --help) == *"--shape"*"Shape specs"* ]] || fail "$cmd --help lacks --shape or the shape specs"
done

if ((failures > 0)); then
  echo "$failures --shape CLI check(s) failed" >&2
  exit 1
fi
echo "all --shape CLI checks passed"
