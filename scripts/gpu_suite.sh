#!/usr/bin/env bash
# The whole GPU suite in one command, for a GPU machine with no network and no
# clang development files: builds libcubind, the examples, the C++ tests where
# GoogleTest is installed and the Python package from the committed bindings/,
# runs every test (GPU ones included) and the benchmarks, and prints a summary
# table last. Results also go to $OUT when it is set.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu-suite-out}
mkdir -p "$OUT"
BUILD=build/gpu
declare -A RESULT

nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/gpus.txt"

tests=ON
if ! cmake -S . -B "$BUILD" -G Ninja -DCUBIND_BUILD_TESTS=ON -DCUBIND_BUILD_EXAMPLES=ON >"$OUT/cmake.log" 2>&1; then
  tests=OFF
  rm -rf "$BUILD"
  cmake -S . -B "$BUILD" -G Ninja -DCUBIND_BUILD_EXAMPLES=ON >>"$OUT/cmake.log" 2>&1 || { tail -20 "$OUT/cmake.log"; exit 1; }
fi
start=$SECONDS
if cmake --build "$BUILD" -j "$(nproc)" >"$OUT/build.log" 2>&1; then
  RESULT[build]="ok ($((SECONDS - start)) s, C++ tests $tests)"
else
  tail -30 "$OUT/build.log"; RESULT[build]="FAILED"
fi

if [ "$tests" = ON ]; then
  ctest --test-dir "$BUILD" --output-on-failure 2>&1 | tee "$OUT/ctest.log" | tail -3
  RESULT[ctest]=$(grep -E "tests passed|tests failed" "$OUT/ctest.log" | tail -1)
else
  RESULT[ctest]="not built (no GoogleTest on this machine)"
fi

"$BUILD/examples/cpp/nvrtc_link_launch" 2>&1 | tee "$OUT/example.log"
RESULT[example]=$(tail -1 "$OUT/example.log")

python3 -m pip install -q --no-build-isolation --no-deps . >"$OUT/pip.log" 2>&1 || { tail -30 "$OUT/pip.log"; RESULT[pip]="FAILED"; }
python3 -m pytest -v -rs tests/python --junitxml="$OUT/pytest.xml" 2>&1 | tee "$OUT/pytest.log" | tail -25
RESULT[pytest]=$(grep -E "passed|failed" "$OUT/pytest.log" | tail -1 | tr -d '=')
RESULT[pytest_gpu]=$(grep -E "^gpu-marked tests:" "$OUT/pytest.log" | tail -1)

if ls benchmarks/*.py >/dev/null 2>&1; then
  for b in benchmarks/gpu_*.py; do
    [ -e "$b" ] || continue
    python3 "$b" 2>&1 | tee "$OUT/$(basename "$b" .py).txt"
  done
fi

echo
echo "| step | result |"
echo "|---|---|"
for k in build ctest example pytest pytest_gpu; do echo "| $k | ${RESULT[$k]:-} |"; done
