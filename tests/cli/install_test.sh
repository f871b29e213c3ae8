#!/usr/bin/env bash
# Usage: install_test.sh CMAKE BUILD_DIR CONSUMER_SOURCE WORK_DIR GENERATOR [README]
# Installs BUILD_DIR into WORK_DIR/prefix, then builds and runs the consumer project against that prefix only;
# with README, also the "## C++" section's example as printed there (its cmake lines and its program, which must
# print 5).
set -euo pipefail
cmake=$1 build=$2 consumer=$3 work=$4 generator=$5 readme=${6:-}
rm -rf "$work"
mkdir -p "$work"
"$cmake" --install "$build" --prefix "$work/prefix" > "$work/install.log"
"$cmake" -S "$consumer" -B "$work/build" -G "$generator" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release
"$cmake" --build "$work/build"
"$work/build/bmmc_consumer"
"$work/build/bmmc_c_consumer"

if [[ -n "$readme" ]]; then
  # The README's lines verbatim: its first cmake block under a project() line, its first cpp block as app.cpp.
  mkdir -p "$work/readme"
  section=$(awk '/^## C\+\+$/ {on = 1; next} on && /^## / {exit} on' "$readme")
  block() { awk -v lang="$1" '$0 == "```" lang {on = 1; next} on && /^```$/ {exit} on'; }
  { echo "cmake_minimum_required(VERSION 3.24)"; echo "project(readme_app CXX)"; block cmake <<<"$section"; } \
    > "$work/readme/CMakeLists.txt"
  block cpp <<<"$section" > "$work/readme/app.cpp"
  grep -q "bmmc::bmmc" "$work/readme/CMakeLists.txt" || { echo "README.md's C++ section has no cmake block" >&2; exit 1; }
  grep -q "int main" "$work/readme/app.cpp" || { echo "README.md's C++ section has no program" >&2; exit 1; }
  "$cmake" -S "$work/readme" -B "$work/readme/build" -G "$generator" -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_BUILD_TYPE=Release
  "$cmake" --build "$work/readme/build"
  got=$("$work/readme/build/app")
  [[ "$got" == 5 ]] || { echo "README.md's C++ example printed '$got', its comment says 5" >&2; exit 1; }
  echo "README.md's C++ example: built against the installed package, prints 5"
fi
