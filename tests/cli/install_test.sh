#!/usr/bin/env bash
# Usage: install_test.sh CMAKE BUILD_DIR CONSUMER_SOURCE WORK_DIR GENERATOR
# Installs BUILD_DIR into WORK_DIR/prefix, then builds and runs the consumer project against that prefix only.
set -euo pipefail
cmake=$1 build=$2 consumer=$3 work=$4 generator=$5
rm -rf "$work"
mkdir -p "$work"
"$cmake" --install "$build" --prefix "$work/prefix" > "$work/install.log"
"$cmake" -S "$consumer" -B "$work/build" -G "$generator" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release
"$cmake" --build "$work/build"
"$work/build/bmmc_consumer"
"$work/build/bmmc_c_consumer"
