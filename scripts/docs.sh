#!/usr/bin/env bash
# The API reference, built and checked: HTML only, into build/docs (BMMC_DOCS_DIR moves it).
#   scripts/docs.sh                 C++ and C: Doxygen over the public headers (include/bmmc/**, the C API
#                                   bmmc/bmmc.h among them; headers whose opening comment calls them internal
#                                   are left out) with docs/api/mainpage.md -> build/docs/cpp/index.html
#   scripts/docs.sh --python PY     also Python: pdoc over the bmmc package that interpreter PY imports (pdoc
#                                   installed beside it; docs/api/python_reference.py) -> build/docs/python/index.html
# Either fails on any warning: for Doxygen an unresolved \ref or \link, an unknown command, a \param naming no
# parameter (or one left out where others are documented), bad markup (docs/api/Doxyfile: WARN_IF_DOC_ERROR,
# WARN_IF_INCOMPLETE_DOC); for Python a module that does not import, a pdoc warning, or a docstring naming a
# bmmc object that does not exist. Before building, the script checks that each check still fails on a planted
# broken reference (a \ref to a missing symbol, a docstring naming a missing function, a module that does not
# import), so a check that can no longer fail fails the script. Needs doxygen (Debian: apt-get install
# doxygen; scripts/test.sh installs it); graphviz is not used.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

python=
while (($# > 0)); do
  case $1 in
    --python) python=${2:?"--python needs an interpreter"}; shift 2 ;;
    *) echo "usage: scripts/docs.sh [--python PYTHON]" >&2; exit 2 ;;
  esac
done
command -v doxygen >/dev/null || { echo "docs: doxygen is needed (Debian: apt-get install doxygen)" >&2; exit 1; }
if [[ -n "$python" ]] && ! "$python" -c "import pdoc" 2>/dev/null; then
  echo "docs: pdoc is needed beside $python ($python -m pip install pdoc)" >&2
  exit 1
fi
out=${BMMC_DOCS_DIR:-build/docs}
mkdir -p "$out"
out=$(realpath "$out")

# Doxygen's own bug, not a documentation error: a std::hash specialisation written as `struct std::hash<…>`
# outside namespace std (bmmc/core/bmmc.hpp) has no scope for it.
known_doxygen_bug='warning: Internal inconsistency: scope for class std::hash< bmmc::Bmmc > not found!'

# doxygen_check OUT HEADER…: the reference of these headers (and the main page) into OUT/cpp; every warning
# printed, and a failure when there is any.
doxygen_check() {
  local dir=$1
  shift
  local inputs=() f
  for f in "$@" "$root/docs/api/mainpage.md"; do inputs+=("\"$f\""); done
  mkdir -p "$dir"
  rm -f "$dir/doxygen-warnings.log"
  BMMC_DOCS_OUT=$dir BMMC_DOCS_ROOT=$root BMMC_DOCS_INPUT="${inputs[*]}" doxygen "$root/docs/api/Doxyfile"
  if grep -v -F -e "$known_doxygen_bug" "$dir/doxygen-warnings.log" | grep . >&2; then
    echo "docs: Doxygen warned (above; the full log: $dir/doxygen-warnings.log)" >&2
    return 1
  fi
}

# The public headers: every one under include/bmmc but those whose opening comment says they are internal.
public_headers() {
  local h
  while IFS= read -r h; do
    if awk '!/^(\/\/|\/\*| \*)/ { exit } { print }' "$h" | grep -qiw internal; then
      continue
    fi
    echo "$root/$h"
  done < <(find include/bmmc -name '*.hpp' -o -name '*.h' | sort)
}

# Each check must fail on a planted broken reference.
self_test() {
  local scratch=$1
  # C++: a copy of the front door with one more function, whose comment names a symbol that does not exist.
  { cat include/bmmc/permute.hpp
    printf '%s\n' 'namespace bmmc {' '/// Planted: see \ref bmmc::no_such_symbol.' 'void planted_reference();' '}'
  } >"$scratch/permute.hpp"
  if doxygen_check "$scratch/cpp" "$scratch/permute.hpp" 2>"$scratch/cpp.err" ||
     ! grep -q "unable to resolve reference to 'bmmc::no_such_symbol'" "$scratch/cpp.err"; then
    cat "$scratch/cpp.err" >&2
    printf '%s\n' 'docs: self-test: a \ref to a missing symbol did not fail the C++ reference' >&2
    return 1
  fi
  # Python: a package whose docstring names a function it does not have, and one that does not import.
  if [[ -n "$python" ]]; then
    mkdir -p "$scratch/py/planted" "$scratch/py/broken"
    # shellcheck disable=SC2016  # the backquotes are the docstring's, not the shell's
    printf '"""Planted: see `planted.no_such_function`."""\n\ndef permute():\n    """Exists."""\n' \
      >"$scratch/py/planted/__init__.py"
    printf 'import no_such_module_of_bmmc\n' >"$scratch/py/broken/__init__.py"
    local m expected
    for m in planted broken; do
      expected="\`planted.no_such_function\` names nothing"
      [[ $m == broken ]] && expected="No module named 'no_such_module_of_bmmc'"
      if PYTHONPATH="$scratch/py" "$python" docs/api/python_reference.py "$scratch/py-out" "$m" \
           2>"$scratch/py.err" >/dev/null || ! grep -q -F "$expected" "$scratch/py.err"; then
        cat "$scratch/py.err" >&2
        echo "docs: self-test: the Python reference did not fail on the planted module '$m' with: $expected" >&2
        return 1
      fi
    done
  fi
  echo "docs: self-test passed (planted broken references fail the checks)"
}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
self_test "$scratch"
mapfile -t headers < <(public_headers)
rm -rf "$out/cpp"  # no page of a header that is gone
doxygen_check "$out" "${headers[@]}"
echo "docs: C++ and C reference of ${#headers[@]} headers -> $out/cpp/index.html"
if [[ -n "$python" ]]; then
  rm -rf "$out/python"
  "$python" docs/api/python_reference.py "$out/python"
fi
