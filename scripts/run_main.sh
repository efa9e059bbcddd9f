#!/usr/bin/env bash
# The main job: set up, build the generator, libcubind and the examples, then
# compile a kernel with NVRTC, link it with nvJitLink and, where a GPU is
# present, launch it and check the result; last, build and install the Python
# package cubind into the project's venv (.venv), so that
# .venv/bin/python -c "import cubind.core" works when it ends.
# Progress: ninja's [done/total] lines for the C++ build, and pip's verbose
# build output condensed to scikit-build-core's stages and ninja's count every
# 10 % (the whole log: build/pip-install.log).
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
bash scripts/setup.sh

BUILD=${CUBIND_BUILD_DIR:-build/main}
echo "== build (cmake, ninja) into $BUILD"
cmake -S . -B "$BUILD" -G Ninja -DCUBIND_BUILD_CODEGEN=ON -DCUBIND_BUILD_EXAMPLES=ON >/dev/null
cmake --build "$BUILD" -j "$(nproc)"

echo "== coverage (cubind-codegen coverage)"
"$BUILD/codegen/cubind-codegen" coverage
echo "== example: NVRTC -> nvJitLink -> launch"
"$BUILD/examples/cpp/nvrtc_link_launch"

PY=$PWD/.venv/bin/python
LOG=build/pip-install.log
mkdir -p build
echo "== install the Python package into .venv (pip install --no-build-isolation .; build tree build/<wheel tag>)"
if ! "$PY" -m pip install -v --disable-pip-version-check --no-build-isolation --no-deps . 2>&1 | tee "$LOG" | bash scripts/condense_build_log.sh; then
  tail -n 40 "$LOG" >&2
  echo "pip install FAILED; the whole log: $LOG" >&2
  exit 1
fi
"$PY" -c "import cubind.core, cubind.bindings.driver"

echo "== done in $((SECONDS - START)) s"
echo "cubind is installed in .venv; use it with"
echo "  .venv/bin/python -c \"import cubind.core\"     (or: source .venv/bin/activate)"
echo "  .venv/bin/python -m cubind                     (versions, driver, devices, libraries found)"
echo "documentation: docs/getting-started/python.md and cpp.md; the site: bash scripts/docs.sh (build/docs/html/index.html)"
echo "tests: bash scripts/test.sh"
