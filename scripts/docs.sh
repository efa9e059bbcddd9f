#!/usr/bin/env bash
# Builds the documentation site into build/docs/html with warnings as errors,
# from the installed cubind package (the API reference is read from it) and
# from core/include/cubind through Doxygen. Installs Sphinx and its extensions
# with pip and Doxygen with apt-get where missing.
#   bash scripts/docs.sh [python]     # python: the interpreter cubind is installed in
#                                     # (default: the project's venv, .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${1:-$PWD/.venv/bin/python}
if [ ! -x "$PYTHON" ] && ! command -v "$PYTHON" >/dev/null; then
  echo "docs: no $PYTHON; run bash scripts/run_main.sh first (it makes .venv and installs cubind there)" >&2
  exit 1
fi
OUT=${CUBIND_DOCS_OUT:-build/docs/html}

if ! command -v doxygen >/dev/null; then
  echo "docs: apt-get install doxygen"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq doxygen >/dev/null
fi
if ! "$PYTHON" -c "import sphinx, furo, myst_parser, breathe" 2>/dev/null; then
  echo "docs: pip install -r docs/requirements.txt"
  "$PYTHON" -m pip install -q -r docs/requirements.txt
fi
if ! "$PYTHON" -c "import cubind.bindings.driver, cubind.core" 2>/dev/null; then
  echo "docs: cubind is not installed in $PYTHON; run bash scripts/run_main.sh (or: $PYTHON -m pip install --no-build-isolation .)" >&2
  exit 1
fi

"$PYTHON" -m sphinx -E -b html -W --keep-going -q -d build/docs/doctrees docs "$OUT"
echo "docs: $OUT/index.html"
