#!/usr/bin/env bash
# The whole GPU suite in one command, for a GPU machine with no network and no
# clang development files: builds libcubind, the examples, the C++ tests where
# GoogleTest is installed and the Python package from the committed bindings/,
# runs every test (GPU ones included), every example on cubind and on NVIDIA's
# package, and the benchmarks, and prints summary tables last. Results also go
# to $OUT when it is set.
#
#   bash scripts/gpu_suite.sh          everything
#   bash scripts/gpu_suite.sh tests    build, tests and examples
#   bash scripts/gpu_suite.sh bench    build (a no-op when done) and benchmarks
#   bash scripts/gpu_suite.sh sanitize build, then a slice of the tests and examples under
#                                      compute-sanitizer (scripts/gpu_sanitize.sh); not part of all
# The two halves fit a runner's time limit each; the second reuses the first's build.
# CUBIND_GPU_SKIP leaves parts of the tests phase out, to split it over calls
# on one machine: any of ctest, ctest_one_gpu (the rerun as one GPU on a machine of
# several), pytest, samples, core_examples.
# CUBIND_GPU_PYTEST_ONLY runs only the test files whose path contains it.
# The tests phase runs the GPU-marked tests; CI runs all the others.
set -uo pipefail
cd "$(dirname "$0")/.."
PHASE=${1:-all}
case "$PHASE" in all|tests|bench|sanitize) ;; *) echo "usage: $0 [all|tests|bench|sanitize]" >&2; exit 2 ;; esac
OUT=${OUT:-build/gpu-suite-out}
mkdir -p "$OUT"
BUILD=build/gpu
declare -A RESULT
SAMPLE_ROWS=()
CORE_EXAMPLES=()

# The EGL and OpenGL loaders (.gl, from scripts/prepare_gpu_carry.sh, carried)
# for the OpenGL interop tests, which render headless; without them those skip.
if ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  egl_vendor=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  [ -f "$egl_vendor" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl_vendor
fi

nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/gpus.txt"

# GoogleTest and Google Benchmark come from .carry (scripts/prepare_gpu_carry.sh) there.
PREFIX=""
[ -d .carry/root/usr ] && PREFIX="-DCMAKE_PREFIX_PATH=$PWD/.carry/root/usr"
tests=ON
if ! cmake -S . -B "$BUILD" -G Ninja -DCUBIND_BUILD_TESTS=ON -DCUBIND_BUILD_EXAMPLES=ON \
     -DCUBIND_BUILD_BENCHMARKS=ON $PREFIX >"$OUT/cmake.log" 2>&1; then
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

# The Python package (build/{wheel_tag} is reused, so a second phase rebuilds nothing).
python3 -m pip install -q --no-build-isolation --no-deps . >"$OUT/pip.log" 2>&1 || { tail -30 "$OUT/pip.log"; RESULT[pip]="FAILED"; }
# NVIDIA's cuda.bindings (and cuda.pathfinder), which the samples also run on, as
# wheels carried in .carry/wheels where the machine lacks them.
if ! python3 -c "import cuda.bindings.driver" 2>/dev/null && ls .carry/wheels/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps .carry/wheels/*.whl >>"$OUT/pip.log" 2>&1
fi

# nvFatbin's and cuFile's libraries: the wheels of scripts/cuda-extras.lock for this
# machine, from .cuda-extras (carried; its headers are what the build above needs).
for whl in .cuda-extras/wheels/*"$(uname -m)"*.whl; do
  [ -f "$whl" ] && python3 -m pip install -q --no-index --no-deps "$whl" >>"$OUT/pip.log" 2>&1
done
if [ "$PHASE" = sanitize ]; then
  if [ "$tests" = ON ]; then
    BUILD=$BUILD OUT=$OUT bash scripts/gpu_sanitize.sh 2>&1 | tee "$OUT/sanitize.log" | tail -25
    if [ "${PIPESTATUS[0]}" -eq 0 ]; then
      RESULT[sanitize]="clean: no sanitizer errors (table in $OUT/sanitize.log)"
    else
      RESULT[sanitize]="FAILED: errors, timeouts or failed targets (table in $OUT/sanitize.log)"
    fi
  else
    RESULT[sanitize]="not run (no GoogleTest on this machine)"
  fi
fi

skip() { [[ " ${CUBIND_GPU_SKIP:-} " == *" $1 "* ]]; }

if [ "$PHASE" = all ] || [ "$PHASE" = tests ]; then
if skip ctest; then
  RESULT[ctest]="left out (CUBIND_GPU_SKIP)"
elif [ "$tests" = ON ]; then
  ctest --test-dir "$BUILD" --output-on-failure -j 4 2>&1 | tee "$OUT/ctest.log" | tail -5
  RESULT[ctest]=$(grep -E "tests passed|tests failed" "$OUT/ctest.log" | tail -1)
  ctest --test-dir "$BUILD" -L multi_gpu 2>&1 | tee "$OUT/ctest_multi_gpu.log" | tail -2
  RESULT[ctest_multi_gpu]=$(grep -E "tests passed|tests failed|No tests" "$OUT/ctest_multi_gpu.log" | tail -1)
  RESULT[ctest_skipped]="$(grep -c "(Skipped)" "$OUT/ctest.log") skipped"
  # On a machine of several GPUs, the suite again as a one-GPU machine sees it.
  if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -gt 1 ] && ! skip ctest_one_gpu; then
    CUDA_VISIBLE_DEVICES=0 ctest --test-dir "$BUILD" -j 4 >"$OUT/ctest_one_gpu.log" 2>&1
    RESULT[ctest_one_gpu]="$(grep -E "tests passed|tests failed" "$OUT/ctest_one_gpu.log" | tail -1), $(grep -c "(Skipped)" "$OUT/ctest_one_gpu.log") skipped"
  fi
else
  RESULT[ctest]="not built (no GoogleTest on this machine)"
fi

for ex in nvrtc_link_launch saxpy_program load_cubin peer_copy; do
  [ -x "$BUILD/examples/cpp/$ex" ] || continue
  "$BUILD/examples/cpp/$ex" 2>&1 | tee "$OUT/example_$ex.log" | tail -2
  RESULT[example_$ex]=$(tail -1 "$OUT/example_$ex.log")
done

# The GPU-marked tests (CI runs the rest), each file in a process of its own
# under a timeout, so a crash or a hang costs one file's row, not the run;
# -X faulthandler and faulthandler_timeout print the stacks of either.
if ! skip pytest; then
  : >"$OUT/pytest.log"
  gp=0 gf=0 gs=0 broken=""
  for f in $(grep -l -E "mark\.(gpu|multi_gpu)" -r tests/python --include='test_*.py' | sort); do
    [ -n "${CUBIND_GPU_PYTEST_ONLY:-}" ] && [[ "$f" != *"$CUBIND_GPU_PYTEST_ONLY"* ]] && continue
    start=$SECONDS
    timeout 900 python3 -X faulthandler -m pytest -q -rs -p no:cacheprovider -m "gpu or multi_gpu" \
      -o faulthandler_timeout=150 "$f" >"$OUT/pytest_file.log" 2>&1
    rc=$?
    line=$(grep -E "^gpu-marked tests:" "$OUT/pytest_file.log" | tail -1)
    { echo "=== $f (exit $rc, $((SECONDS - start)) s): ${line:-no summary}"; cat "$OUT/pytest_file.log"; } >>"$OUT/pytest.log"
    echo "$f: exit $rc, $((SECONDS - start)) s, ${line:-no summary}"
    read -r p q s2 <<<"$(echo "$line" | sed -E 's/[^0-9]+/ /g')"
    gp=$((gp + ${p:-0})); gf=$((gf + ${q:-0})); gs=$((gs + ${s2:-0}))
    case $rc in 0|1|5) ;; *) broken="$broken $(basename "$f")(exit $rc)" ;; esac
  done
  rm -f "$OUT/pytest_file.log"
  RESULT[pytest_gpu]="gpu-marked tests: $gp passed, $gf failed, $gs skipped; crashed or timed out:${broken:- none}"
fi

# Every cuda.bindings sample, unchanged, on cubind.bindings and on cuda.bindings:
# one table row each, all output in one log.
: >"$OUT/samples.log"
for s in examples/python/bindings/*.py; do
  skip samples && break
  name=$(basename "$s" .py)
  [ "$name" = helpers ] && continue
  row="| $name |"
  for impl in cubind cuda; do
    out=$(timeout 600 python3 examples/python/run_example.py --impl "$impl" "$s" 2>&1)
    rc=$?
    printf '== %s on %s (exit %s)\n%s\n' "$name" "$impl" "$rc" "$out" >>"$OUT/samples.log"
    last=$(printf '%s\n' "$out" | grep -v '^[[:space:]]*$' | tail -1 | tr '|' '/')
    if [ "$rc" -eq 0 ] && [[ "$last" == *PASSED ]]; then
      cell="PASSED"
    elif [ "$rc" -eq 0 ] && [[ "$last" == *"; skipped" ]]; then
      cell="skipped: ${last:0:100}"
    else
      cell="FAILED (exit $rc): ${last:0:100}"
    fi
    row="$row $cell |"
  done
  SAMPLE_ROWS+=("$row")
  echo "$row"
done

# cubind.core's examples, each on cubind.core and on cuda.core (the runner
# swaps the import): one row per example, the last line of each run.
for ex in examples/python/core/[a-z]*.py; do
  skip core_examples && break
  [ "$(basename "$ex")" = run.py ] && continue
  name=$(basename "$ex" .py)
  row=""
  for impl in cubind cuda.core; do
    log="$OUT/core_example_${name}_${impl}.log"
    if [ "$impl" = cuda.core ] && ! python3 -c "import cuda.core" 2>/dev/null; then
      row="$row | cuda.core not installed"
      continue
    fi
    if python3 examples/python/core/run.py "$impl" "$ex" >"$log" 2>&1; then status="ok"; else status="FAILED"; fi
    row="$row | $status: $(tail -1 "$log" | tr '|' '/')"
  done
  CORE_EXAMPLES+=("| $name$row |")
done

fi

if [ "$PHASE" = all ] || [ "$PHASE" = bench ]; then
# cubind against NVIDIA's packages, CuPy and the C floor, one table with a
# goal per row (benchmarks/README.md); the progress lines go to the log.
# The whole table (over a hundred rows) goes to $OUT/side_by_side.md; the
# summary below prints the rows whose goal is not met.
timeout 900 python3 benchmarks/side_by_side.py --json "$OUT/side_by_side.json" \
  >"$OUT/side_by_side.md" 2>"$OUT/side_by_side.log"
rc=$?
RESULT[side_by_side]="exit $rc: $(grep -E '^goals:' "$OUT/side_by_side.md" | tail -1) (table in $OUT/side_by_side.md)"
[ "$rc" -eq 0 ] || tail -20 "$OUT/side_by_side.log"
# p2p_matrix.py needs two GPUs (with one it says so and stops).
for b in benchmarks/program_cache_hit.py benchmarks/strided_view_host.py benchmarks/p2p_matrix.py; do
  [ -e "$b" ] || continue
  timeout 300 python3 "$b" 2>&1 | tee "$OUT/$(basename "$b" .py).txt"
done
for b in cubind_launch_benchmarks cubind_core_benchmarks; do
  exe=$(find "$BUILD/benchmarks" -name "$b" -type f 2>/dev/null | head -1)
  [ -n "$exe" ] || continue
  # Repetitions of all benchmarks are interleaved, so a machine's drift during
  # the run does not fall on one side of a comparison.
  LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} timeout 240 "$exe" \
    --benchmark_enable_random_interleaving=true 2>&1 | tee "$OUT/$b.txt" | tail -25
done

fi

echo
echo "| step | result |"
echo "|---|---|"
for k in build ctest ctest_multi_gpu ctest_skipped ctest_one_gpu example_nvrtc_link_launch example_saxpy_program example_load_cubin example_peer_copy pytest_gpu sanitize side_by_side; do
  [ -n "${RESULT[$k]:-}" ] && echo "| $k | ${RESULT[$k]} |"
done

if ((${#SAMPLE_ROWS[@]})); then
  echo
  echo "| sample | cubind | cuda.bindings |"
  echo "|---|---|---|"
  printf '%s\n' "${SAMPLE_ROWS[@]}"
fi
if { [ "$PHASE" = all ] || [ "$PHASE" = bench ]; } && [ -s "$OUT/side_by_side.md" ]; then
  echo
  echo "side by side: the rows whose goal is not met or not judged (the whole table: $OUT/side_by_side.md)"
  head -2 "$OUT/side_by_side.md"
  grep -E "NOT met|not judged" "$OUT/side_by_side.md" | grep -v "^goals:"
  grep -A4 -E "^\| import \| goal" "$OUT/side_by_side.md"
  grep -E "^goals:" "$OUT/side_by_side.md"
fi
if ((${#CORE_EXAMPLES[@]})); then
  echo
  echo "| cubind.core example | cubind.core | cuda.core |"
  echo "|---|---|---|"
  printf '%s\n' "${CORE_EXAMPLES[@]}"
fi
