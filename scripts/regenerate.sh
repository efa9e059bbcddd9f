#!/usr/bin/env bash
# Regenerates bindings/ from the pinned CUDA headers (scripts/cuda-headers.lock.json,
# fetched and checked by scripts/cuda_headers.py into .cuda-headers/include):
#   scripts/regenerate.sh [path/to/cubind-codegen]
set -euo pipefail
cd "$(dirname "$0")/.."
CODEGEN=${1:-build/main/codegen/cubind-codegen}
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
"$PY" scripts/cuda_headers.py fetch >/dev/null
INCLUDE=$("$PY" scripts/cuda_headers.py include)
"$CODEGEN" generate --cuda-include "$INCLUDE" \
  --annotations codegen/annotations --output bindings
