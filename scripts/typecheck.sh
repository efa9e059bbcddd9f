#!/usr/bin/env bash
# Type-checks the cuda.bindings samples (examples/python/bindings) and the
# sample runner with mypy --strict and pyright, against the .pyi stubs of the
# installed cubind.bindings: each sample imports cuda.bindings.<module>, which
# a stub-only package built here re-exports from cubind.bindings.<module>, as
# run_example.py does at run time. Installs mypy and pyright with pip where
# missing.
#   bash scripts/typecheck.sh [python]     # python: the interpreter cubind is installed in
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${1:-python3}
SHIM=build/typecheck/shim

if ! "$PYTHON" -c "import mypy, pyright" 2>/dev/null; then
  echo "typecheck: pip install mypy pyright"
  "$PYTHON" -m pip install -q "mypy>=2.4,<3" "pyright>=1.1.414,<1.2"
fi

rm -rf "$SHIM"
mkdir -p "$SHIM/cuda/bindings"
: > "$SHIM/cuda/__init__.pyi"
: > "$SHIM/cuda/bindings/__init__.pyi"
for module in driver runtime nvrtc nvjitlink; do
  echo "from cubind.bindings.$module import *" > "$SHIM/cuda/bindings/$module.pyi"
done

FILES=(examples/python/bindings examples/python/run_example.py)
echo "== mypy --strict ${FILES[*]}"
MYPYPATH="$SHIM" "$PYTHON" -m mypy --strict --python-executable "$(command -v "$PYTHON")" \
  --cache-dir build/typecheck/mypy-cache "${FILES[@]}"

echo "== pyright ${FILES[*]}"
cat > build/typecheck/pyrightconfig.json <<JSON
{
  "include": [$(printf '"../../%s",' "${FILES[@]}" | sed 's/,$//')],
  "extraPaths": ["shim", "../../examples/python/bindings"],
  "typeCheckingMode": "standard",
  "pythonVersion": "3.9"
}
JSON
"$PYTHON" -m pyright --pythonpath "$(command -v "$PYTHON")" -p build/typecheck/pyrightconfig.json
