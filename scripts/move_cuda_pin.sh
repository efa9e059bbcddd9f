#!/usr/bin/env bash
# Moves cubind to the headers of a newer CUDA 13.x release in one step, for one commit:
#   bash scripts/move_cuda_pin.sh 13.6
# 1. rewrites scripts/cuda-headers.lock.json for the newest wheels of that release
#    (nvidia-cuda-runtime, -crt, -nvrtc, nvidia-nvjitlink; the profiler API's newest 13.x)
#    and fetches them into .cuda-headers (scripts/cuda_headers.py);
# 2. builds the generator, runs `cubind-codegen check` (a new pointer parameter
#    needs an annotation: the check names each) and regenerates bindings/;
# 3. pins cuda-bindings to the same release (scripts/setup.sh, pyproject.toml),
#    installs it and cubind into .venv, and runs the differential suite and the
#    compatibility tests against it;
# 4. prints the functions the release added (scripts/cuda_api_diff.py).
# Then: annotate what check reports, list the release in the docs, commit.
set -euo pipefail
cd "$(dirname "$0")/.."
RELEASE=${1:?usage: scripts/move_cuda_pin.sh MAJOR.MINOR (a CUDA 13.x release)}
[[ "$RELEASE" =~ ^13\.[0-9]+$ ]] || { echo "expected a CUDA 13.x release such as 13.6, not '$RELEASE'" >&2; exit 2; }
PY=$PWD/.venv/bin/python
BUILD=${CUBIND_BUILD_DIR:-build/main}

echo "== pin the CUDA $RELEASE headers"
"$PY" scripts/cuda_headers.py lock "nvidia-cuda-runtime==$RELEASE.*" "nvidia-cuda-crt==$RELEASE.*" \
  "nvidia-cuda-nvrtc==$RELEASE.*" "nvidia-nvjitlink==$RELEASE.*" "nvidia-nvvm==$RELEASE.*" "nvidia-cuda-profiler-api>=13,<14"
"$PY" scripts/cuda_headers.py fetch

echo "== generator: check and regenerate"
cmake -S . -B "$BUILD" -G Ninja -DCUBIND_BUILD_CODEGEN=ON >/dev/null
cmake --build "$BUILD" --target cubind-codegen -j "$(nproc)"
"$BUILD/codegen/cubind-codegen" check
bash scripts/regenerate.sh "$BUILD/codegen/cubind-codegen"

echo "== cuda-bindings $RELEASE for the differential suite"
sed -i -E "s/\"cuda-bindings==13\.[0-9]+(\.[0-9]+|\.\*)\"/\"cuda-bindings==$RELEASE.*\"/" scripts/setup.sh pyproject.toml
sed -i -E "s/version\('cuda-bindings'\) == '13\.[0-9.]+'/version('cuda-bindings').startswith('$RELEASE.')/" scripts/setup.sh
"$PY" -m pip install -q --disable-pip-version-check "cuda-bindings==$RELEASE.*"
"$PY" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .
"$PY" -m pytest -q -p no:cacheprovider tests/python/differential tests/python/test_compat_fields.py \
  tests/python/test_compat_params.py tests/python/test_compat_signatures.py || {
  echo "the differential suite or the compatibility tests fail: fix by class in the generator, or list a" >&2
  echo "deliberate difference in tests/python/differential/known_differences.py and the migration guide" >&2
  exit 1
}

echo "== what CUDA $RELEASE adds"
"$PY" scripts/cuda_api_diff.py --base 13.0 --each-release
git status --short
