#!/usr/bin/env bash
# Regenerates bindings/ from the CUDA headers: scripts/regenerate.sh [path/to/cubind-codegen]
set -euo pipefail
cd "$(dirname "$0")/.."
CODEGEN=${1:-build/main/codegen/cubind-codegen}
"$CODEGEN" generate --cuda-include "${CUDA_HOME:-/usr/local/cuda}/include" \
  --annotations codegen/annotations --output bindings
