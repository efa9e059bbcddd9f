#!/usr/bin/env bash
# Type-checks the Python examples with mypy --strict and pyright against the
# installed cubind: the cuda.bindings samples (examples/python/bindings, with
# run_example.py) against the .pyi stubs of cubind.bindings, and the cuda.core
# programs (examples/python/core) against cubind.core (which has no stubs yet:
# its classes read as Any, so only the examples' own code is checked there).
# Each example imports
# cuda.bindings.<module> or cuda.core, which a stub-only package built here
# re-exports from cubind, as the runners do at run time. The interop examples'
# libraries (CuPy, PyTorch, Numba, JAX) are not installed here: stubs of one
# line each make every name of theirs Any. Installs mypy and pyright with pip
# where missing.
#   bash scripts/typecheck.sh [python]     # python: the interpreter cubind is installed in
#                                          # (default: the project's venv, .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${1:-$PWD/.venv/bin/python}
SHIM=build/typecheck/shim

if ! "$PYTHON" -c "import mypy, pyright" 2>/dev/null; then
  echo "typecheck: pip install mypy pyright"
  "$PYTHON" -m pip install -q "mypy>=2.4,<3" "pyright>=1.1.414,<1.2"
fi

rm -rf "$SHIM"
mkdir -p "$SHIM/cuda/bindings"
: > "$SHIM/cuda/__init__.pyi"
: > "$SHIM/cuda/bindings/__init__.pyi"
for module in driver runtime nvrtc nvjitlink nvvm nvfatbin nvml cufile cudla; do
  echo "from cubind.bindings.$module import *" > "$SHIM/cuda/bindings/$module.pyi"
done
mkdir -p "$SHIM/cuda/core"
echo "from cubind.core import *" > "$SHIM/cuda/core/__init__.pyi"
echo "from cubind.core.graph import *" > "$SHIM/cuda/core/graph.pyi"
echo "from cubind.core.texture import *" > "$SHIM/cuda/core/texture.pyi"
# cubind.core.system is plain Python with annotations: the shim re-exports it, typed.
mkdir -p "$SHIM/cuda/core/system"
echo "from cubind.core.system import *" > "$SHIM/cuda/core/system/__init__.pyi"
echo "from cubind.core.system.typing import *" > "$SHIM/cuda/core/system/typing.pyi"
# cubind.core.checkpoint is an extension module without stubs: its names are Any.
printf 'from typing import Any\ndef __getattr__(name: str) -> Any: ...\n' > "$SHIM/cuda/core/checkpoint.pyi"
# cubind.core.utils (the program caches, StridedMemoryView) has no stubs yet:
# its names are Any, but for the decorator, which keeps the function's type.
cat > "$SHIM/cuda/core/utils.pyi" <<'PYI'
from typing import Any, Callable, TypeVar
_F = TypeVar("_F", bound=Callable[..., Any])
def args_viewable_as_strided_memory(arg_indices: tuple[int, ...]) -> Callable[[_F], _F]: ...
def __getattr__(name: str) -> Any: ...
PYI
mkdir -p "$SHIM/jax"
for stub in cupy torch numba jax/__init__ jax/dlpack jax/numpy; do
  printf 'from typing import Any\ndef __getattr__(name: str) -> Any: ...\n' > "$SHIM/$stub.pyi"
done
cat > build/typecheck/mypy.ini <<'INI'
[mypy]
# numba.cuda.jit, untyped without numba's stubs, decorates a kernel there.
[mypy-interop_numba]
disallow_untyped_decorators = False
# _egl.py is the examples' ctypes wrapper of libEGL and libGL (no stubs exist for
# them); it is not checked for annotations, and gl_interop may call it untyped.
[mypy-_egl]
ignore_errors = True
[mypy-gl_interop]
disallow_untyped_calls = False
INI

FILES=(examples/python/bindings examples/python/run_example.py examples/python/core)
# Each folder alone: both have modules of the same names (helpers, _gpu, run).
for folder in "examples/python/bindings examples/python/run_example.py" examples/python/core; do
  echo "== mypy --strict $folder"
  # shellcheck disable=SC2086
  MYPYPATH="$SHIM" "$PYTHON" -m mypy --strict --config-file build/typecheck/mypy.ini \
    --python-executable "$(command -v "$PYTHON")" --cache-dir build/typecheck/mypy-cache $folder
done

echo "== pyright ${FILES[*]}"
cat > build/typecheck/pyrightconfig.json <<JSON
{
  "include": [$(printf '"../../%s",' "${FILES[@]}" | sed 's/,$//')],
  "extraPaths": ["shim", "../../examples/python/bindings", "../../examples/python/core"],
  "typeCheckingMode": "standard",
  "reportMissingModuleSource": "none",
  "pythonVersion": "3.9"
}
JSON
"$PYTHON" -m pyright --pythonpath "$(command -v "$PYTHON")" -p build/typecheck/pyrightconfig.json
