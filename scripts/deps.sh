# shellcheck shell=bash
# Sourced by scripts/demo.sh and scripts/test.sh: the one place that installs Debian packages (apt), so both
# README commands work on a fresh machine.
#   bmmc_install_deps               the build's packages, and CUDACXX set to the CUDA toolkit in its default
#                                   place when nvcc is not on PATH
#   bmmc_install_packages WHY PKG…  any other packages (test.sh: clang for the fuzz smoke, python3-venv and
#                                   python3-dev for the Python tests); WHY is printed with the install
# Each installs only the packages dpkg does not report installed, with sudo when not root.

bmmc_install_packages() {
  local why=$1
  shift
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} > 0)); then
    echo "bmmc: installing ${missing[*]} ($why)"
    local sudo=()
    [[ $(id -u) -ne 0 ]] && sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
}

bmmc_install_deps() {
  bmmc_install_packages "the build" cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev googletest \
    libgtest-dev
  if ! command -v nvcc >/dev/null 2>&1 && [[ -z "${CUDACXX:-}" && -x /usr/local/cuda/bin/nvcc ]]; then
    export CUDACXX=/usr/local/cuda/bin/nvcc
  fi
}
