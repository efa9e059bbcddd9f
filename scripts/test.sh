#!/usr/bin/env bash
# Every test: set up, build with tests, check that bindings/ is exactly what the
# generator emits, run the generator's check, ctest, the install check, then
# build the Python package's wheel (build/wheelhouse), check it in a fresh venv
# with NVIDIA's wheels and no toolkit, install it into the project's venv
# (.venv, made by scripts/setup.sh) and run pytest there (the documentation's
# snippets included), build the documentation site with warnings as errors,
# and type-check the Python examples against the stubs. Tests that need a GPU
# skip with a reason where none is present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

BUILD=${CUBIND_BUILD_DIR:-build/test}
cmake -S . -B "$BUILD" -G Ninja -DCUBIND_BUILD_CODEGEN=ON -DCUBIND_BUILD_TESTS=ON \
      -DCUBIND_BUILD_EXAMPLES=ON >/dev/null
cmake --build "$BUILD" -j "$(nproc)"

echo "== drift check: regenerate bindings/ and compare with what is committed"
# The generator's folders only: bindings/loader and bindings/CMakeLists.txt
# are hand-written, and the generator never writes there.
GENERATED=(bindings/include/cubind/raw bindings/src bindings/python)
bash scripts/regenerate.sh "$BUILD/codegen/cubind-codegen"
if [ -n "$(git status --porcelain -- "${GENERATED[@]}")" ]; then
  git status --short -- "${GENERATED[@]}"
  git --no-pager diff --stat -- "${GENERATED[@]}"
  echo "drift check FAILED: ${GENERATED[*]} differ from the generator's output; run scripts/regenerate.sh and commit" >&2
  exit 1
fi
echo "${GENERATED[*]} match the generator's output"

echo "== cubind-codegen check"
"$BUILD/codegen/cubind-codegen" check

echo "== ctest"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"

echo "== examples"
for ex in nvrtc_link_launch saxpy_program load_cubin peer_copy; do
  "$BUILD/examples/cpp/$ex"
done

echo "== find_package(cubind) from an install"
bash tests/package/check_install.sh "$BUILD"

# ---- sanitizers: the C++ core, the loader and the generator with their tests under
# ASan + UBSan (CMakePresets.json, preset asan); any report fails its test.
echo "== ctest under AddressSanitizer and UndefinedBehaviorSanitizer (preset asan)"
SECONDS_BEFORE_ASAN=$SECONDS
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$(nproc)"
ctest --preset asan -j "$(nproc)"
# The generator under the sanitizers on the real headers: check, and a regeneration that changes nothing.
build/asan/codegen/cubind-codegen check
bash scripts/regenerate.sh build/asan/codegen/cubind-codegen
if [ -n "$(git status --porcelain -- "${GENERATED[@]}")" ]; then
  echo "the generator built with the sanitizers wrote other bindings/ than the release build" >&2
  exit 1
fi
echo "asan preset: built and tested in $((SECONDS - SECONDS_BEFORE_ASAN)) s"
# ---- end of sanitizers

PY=$PWD/.venv/bin/python
echo "== wheel (pip wheel . into build/wheelhouse)"
rm -rf build/wheelhouse
"$PY" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps -w build/wheelhouse .
WHEEL=$(ls build/wheelhouse/cubind-*.whl)

echo "== the wheel: size, and NVRTC + nvJitLink from NVIDIA's wheels with no toolkit"
bash tests/package/check_wheel.sh "$WHEEL"

echo "== pytest (in $PWD/.venv)"
"$PY" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "$WHEEL"
# CUBIND_BUILD_DIR: the documentation's C++ snippets build against an install of it.
CUBIND_BUILD_DIR="$BUILD" "$PY" -m pytest -ra tests/python

echo "== docs: the site, warnings as errors"
bash scripts/docs.sh "$PY"

echo "== type check: the Python examples against the stubs (mypy --strict, pyright)"
bash scripts/typecheck.sh "$PY"
