#!/usr/bin/env bash
# The generator's numbers, measured on this machine:
#   1. regenerating all four libraries (goal: <= 15 s on 2 cores), best of 3;
#   2. a cold build of the whole project: configure and build the generator,
#      libcubind, the C++ tests and examples, then build the Python wheel
#      (goal: <= 5 minutes on 2 cores).
# Prints a table. Usage: bash benchmarks/codegen_timing.sh  (after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { python3 -c 'import time; print(time.monotonic())'; }
elapsed() { python3 -c "print(f'{$2 - $1:.1f}')"; }

t0=$(now)
cmake -S . -B "$work/build" -G Ninja -DCUBIND_BUILD_CODEGEN=ON -DCUBIND_BUILD_TESTS=ON \
      -DCUBIND_BUILD_EXAMPLES=ON >/dev/null
cmake --build "$work/build" -j "$JOBS" >/dev/null
t1=$(now)
python3 -m pip wheel -q --no-build-isolation --no-deps -w "$work/wheel" \
  -C build-dir="$work/wheel-build" . >/dev/null 2>&1
t2=$(now)
cold_cmake=$(elapsed "$t0" "$t1")
cold_wheel=$(elapsed "$t1" "$t2")
cold_total=$(elapsed "$t0" "$t2")

best=""
for i in 1 2 3; do
  s=$(now)
  "$work/build/codegen/cubind-codegen" generate --output "$work/out" >/dev/null
  e=$(now)
  r=$(elapsed "$s" "$e")
  if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $r < $best else 1)"; then best=$r; fi
done
# The output must equal the committed bindings.
diff -r -q "$work/out" bindings >/dev/null && same="identical to bindings/" || same="DIFFERS from bindings/"

echo "| measurement | seconds | goal | cores |"
echo "|---|---:|---:|---:|"
echo "| regenerate driver, runtime, nvrtc, nvjitlink (best of 3) | $best | 15 | $(nproc) |"
echo "| cold build: generator, libcubind, C++ tests, examples | $cold_cmake | | $JOBS |"
echo "| cold build: Python wheel (libcubind + extension modules) | $cold_wheel | | $JOBS |"
echo "| cold build: whole project | $cold_total | 300 | $JOBS |"
echo "regenerated output: $same"
