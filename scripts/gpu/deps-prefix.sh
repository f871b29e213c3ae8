#!/usr/bin/env bash
# Builds .deps/prefix HERE: the header packages (and GoogleTest's static libraries) that a GPU machine without
# network lacks — fmt, CLI11, nlohmann-json, GoogleTest/GoogleMock — copied from this machine's Debian packages
# with their CMake package files, so that scripts/gpu/build.sh can configure and build the tree THERE
# (CMAKE_PREFIX_PATH=.deps/prefix). About 5 MiB; .deps/ is git-ignored and travels as a carried path.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
P="$ROOT/.deps/prefix"
source "$ROOT/scripts/deps.sh"
bmmc_install_deps
bmmc_install_packages "GoogleMock for the GPU machine's prefix" libgmock-dev
rm -rf "$P"
mkdir -p "$P"
for pkg in libfmt-dev libfmt9 libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev; do
  dpkg -L "$pkg" | while read -r f; do
    [[ -f "$f" || -L "$f" ]] || continue
    case "$f" in
      /usr/include/* | /usr/lib/* | /usr/share/cmake/*)
        mkdir -p "$(dirname "$P/${f#/usr/}")"
        cp -a "$f" "$P/${f#/usr/}" ;;
    esac
  done
done
echo "deps-prefix: $P ($(du -sh "$P" | cut -f1))"
