#!/usr/bin/env bash
# A slice of the GPU suite under NVIDIA's compute-sanitizer: the C++ GPU tests
# and a handful of Python examples (cubind.bindings samples and cubind.core
# examples), each under memcheck, and the kernels that use shared memory and
# barriers under racecheck and synccheck. Prints one table row per run: tool,
# target, the sanitizer's findings (memory errors, hazards), and apart from
# them the CUDA calls that returned an error, which memcheck also reports.
# About a minute on an H200.
#
#   bash scripts/gpu_sanitize.sh [memcheck|racecheck|synccheck ...]   (default: all three)
#
# Environment: BUILD (default build/gpu) holds the C++ tests, built here when
# missing; COMPUTE_SANITIZER (default /usr/local/cuda/bin/compute-sanitizer);
# OUT (default build/gpu-suite-out) receives one log per run; SANITIZE_TIMEOUT
# (default 240) bounds each run, in seconds.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
SANITIZER=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
BUILD=${BUILD:-build/gpu}
OUT=${OUT:-build/gpu-suite-out}
LIMIT=${SANITIZE_TIMEOUT:-240}
TOOLS=("$@")
[ ${#TOOLS[@]} -eq 0 ] && TOOLS=(memcheck racecheck synccheck)
for tool in "${TOOLS[@]}"; do
  case "$tool" in memcheck|racecheck|synccheck) ;; *) echo "usage: $0 [memcheck|racecheck|synccheck ...]" >&2; exit 2 ;; esac
done
if [ ! -x "$SANITIZER" ]; then
  echo "gpu_sanitize: no compute-sanitizer at $SANITIZER (set COMPUTE_SANITIZER)" >&2
  exit 1
fi
mkdir -p "$OUT/sanitize"

# The C++ GPU tests, built when missing (gpu_suite.sh builds them first).
if [ ! -x "$BUILD/tests/cpp/cubind_gpu_tests" ] || [ ! -x "$BUILD/tests/cpp/cubind_launch_gpu_tests" ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    PREFIX=""
    [ -d .carry/root/usr ] && PREFIX="-DCMAKE_PREFIX_PATH=$PWD/.carry/root/usr"
    cmake -S . -B "$BUILD" -G Ninja -DCUBIND_BUILD_TESTS=ON $PREFIX >"$OUT/sanitize/cmake.log" 2>&1
  fi
  cmake --build "$BUILD" -j "$(nproc)" --target cubind_gpu_tests cubind_launch_gpu_tests \
    >"$OUT/sanitize/build.log" 2>&1 || { tail -20 "$OUT/sanitize/build.log"; exit 1; }
fi
python3 -c "import cubind.bindings, cubind.core" 2>/dev/null ||
  python3 -m pip install -q --no-build-isolation --no-deps . >"$OUT/sanitize/pip.log" 2>&1

# Targets: a name and a command. The IPC test (two processes exchanging pool
# handles) and the peer tests are left out: they time out under memcheck's
# slowdown without testing memory accesses of their own.
declare -A COMMAND
COMMAND[cpp_runtime]="$BUILD/tests/cpp/cubind_gpu_tests --gtest_filter=-*Ipc*"
COMMAND[cpp_launch]="$BUILD/tests/cpp/cubind_launch_gpu_tests"
COMMAND[py_vector_add_drv]="python3 examples/python/run_example.py --impl cubind examples/python/bindings/vector_add_drv.py"
COMMAND[py_stream_ordered_allocation]="python3 examples/python/run_example.py --impl cubind examples/python/bindings/stream_ordered_allocation.py"
COMMAND[py_simple_cuda_graphs]="python3 examples/python/run_example.py --impl cubind examples/python/bindings/simple_cuda_graphs.py"
COMMAND[py_global_to_shmem_async_copy]="python3 examples/python/run_example.py --impl cubind examples/python/bindings/global_to_shmem_async_copy.py"
COMMAND[py_conjugate_gradient_multi_block_cg]="python3 examples/python/run_example.py --impl cubind examples/python/bindings/conjugate_gradient_multi_block_cg.py"
COMMAND[py_core_saxpy]="python3 examples/python/core/run.py cubind examples/python/core/saxpy.py"
COMMAND[py_core_stream_events]="python3 examples/python/core/run.py cubind examples/python/core/stream_events.py"
COMMAND[py_core_vector_add]="python3 examples/python/core/run.py cubind examples/python/core/vector_add.py"
# Which targets each tool runs: memcheck all; racecheck (shared memory hazards)
# and synccheck (barriers) only the kernels that use shared memory or
# __syncthreads, since they cost the most per kernel.
declare -A TARGETS
TARGETS[memcheck]="cpp_runtime cpp_launch py_vector_add_drv py_stream_ordered_allocation py_simple_cuda_graphs py_core_saxpy py_core_stream_events py_core_vector_add"
TARGETS[racecheck]="cpp_launch py_global_to_shmem_async_copy py_conjugate_gradient_multi_block_cg"
TARGETS[synccheck]="py_global_to_shmem_async_copy py_conjugate_gradient_multi_block_cg"

ROWS=()
failed=0
for tool in "${TOOLS[@]}"; do
  for target in ${TARGETS[$tool]}; do
    log="$OUT/sanitize/${tool}_${target}.log"
    start=$SECONDS
    # --error-exitcode separates the sanitizer's findings from the target's own failures.
    # shellcheck disable=SC2086
    timeout "$LIMIT" "$SANITIZER" --tool "$tool" --target-processes all --error-exitcode 86 --print-limit 50 \
      ${COMMAND[$target]} >"$log" 2>&1
    rc=$?
    seconds=$((SECONDS - start))
    # One "ERROR SUMMARY: N errors" line per process the sanitizer followed;
    # racecheck may say it as "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)".
    errors=$(grep -oE "ERROR SUMMARY: [0-9]+ error" "$log" | awk '{n += $3} END {print n + 0}')
    if ! grep -q "ERROR SUMMARY" "$log"; then
      errors=$(grep -E "RACECHECK SUMMARY" "$log" | grep -oE "\([0-9]+ error" | tr -d '(' |
               awk '{n += $1} END {print n + 0}')
    fi
    # memcheck also counts every CUDA call that returned an error ("Program hit
    # CUDA_ERROR_..."): the tests of error paths make them on purpose, and
    # Kernel::param_info finds the parameter count by asking past the last one.
    # Those are listed apart; the findings are the memory and hazard errors.
    api=$(grep -c "Program hit CUDA_ERROR" "$log")
    findings=$((errors - api))
    [ "$rc" -eq 86 ] && [ "$findings" -eq 0 ] && rc=0
    [ "$rc" -eq 0 ] && [ "$findings" -gt 0 ] && rc=86
    case "$rc" in
      0) status="ok" ;;
      86) status="sanitizer findings"; failed=1 ;;
      124) status="timed out after ${LIMIT} s"; failed=1 ;;
      *) status="target failed (exit $rc)"; failed=1 ;;
    esac
    calls=$(grep -oE "Program hit CUDA_ERROR_[A-Z_]+ .* API call to [A-Za-z0-9_]+" "$log" |
            sed -E 's/Program hit (CUDA_ERROR_[A-Z_]+) .* API call to ([A-Za-z0-9_]+)/\2:\1/' | sort | uniq -c |
            awk '{printf "%s%s x%s", sep, $2, $1; sep = ", "}')
    row="| $tool | $target | $findings | $api${calls:+ ($calls)} | $status (${seconds} s) |"
    ROWS+=("$row")
    echo "$row"
  done
done

echo
echo "| tool | target | findings | CUDA calls that returned an error (error-path tests, probes) | result |"
echo "|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo "(logs in $OUT/sanitize)"
exit $failed
