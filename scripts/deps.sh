# Sourced by scripts/demo.sh and scripts/test.sh: the build's Debian packages (installed when missing, with
# sudo when not root) and the CUDA toolkit in its default place even when nvcc is not on PATH, so both
# README commands work on a fresh machine.
bmmc_install_deps() {
  local packages=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev googletest libgtest-dev)
  local missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} > 0)); then
    echo "bmmc: installing ${missing[*]}"
    local sudo=()
    [[ $(id -u) -ne 0 ]] && sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  if ! command -v nvcc >/dev/null 2>&1 && [[ -z "${CUDACXX:-}" && -x /usr/local/cuda/bin/nvcc ]]; then
    export CUDACXX=/usr/local/cuda/bin/nvcc
  fi
}
