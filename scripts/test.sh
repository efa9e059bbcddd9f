#!/usr/bin/env bash
# Every test, in stages, the verdicts a developer waits for first and the
# sanitizer build last:
#   setup          scripts/setup.sh (apt-get, .venv)
#   build          the generator, libraries, C++ tests and examples (build/test)
#   drift          bindings/ is exactly what the generator emits
#   codegen-check  cubind-codegen check
#   ctest          the C++ tests
#   examples       the C++ examples (without a GPU: compile and link, launch skipped)
#   install        find_package(cubind) from an install (tests/package/check_install.sh)
#   wheel          pip wheel . into build/wheelhouse (progress: scikit-build-core's
#                  stages and ninja's count; the whole log build/wheelhouse.log),
#                  installed into .venv
#   pytest         pytest in .venv (the documentation's snippets included, their
#                  C++ ones against build/test)
#   instructions   the instructions per call of every benchmark row that runs
#                  without a GPU (callgrind, stand-in driver) against the committed
#                  benchmarks/instruction_counts.json: fails when a row grows by
#                  more than 5% (benchmarks/README.md says how to update the table)
#   docs           the documentation site, warnings as errors
#   typecheck      the Python examples against the stubs (mypy --strict, pyright)
#   doc-commands   every command of the README, examples/README.md and
#                  docs/getting-started/ (tests/doc_commands/check_doc_commands.py)
#   wheel-check    the wheel in a fresh venv with NVIDIA's wheels and no toolkit
#   asan           the C++ core, the loader and the generator with their tests under
#                  ASan + UBSan (preset asan), and a regeneration that changes nothing
# Each stage prints its name as it starts and its verdict and duration as it
# ends. A failing stage does not stop the others: those that need it are
# skipped (and say so), the rest still run; the closing summary lists every
# stage with its verdict and time, and the script exits 1 if any stage did not
# pass. Tests that need a GPU skip with a reason where none is present.
#   bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
BUILD=${CUBIND_BUILD_DIR:-build/test}
PY=$PWD/.venv/bin/python
# The generator's folders only: bindings/loader and bindings/CMakeLists.txt
# are hand-written, and the generator never writes there.
GENERATED=(bindings/include/cubind/raw bindings/src bindings/python)

st_setup() { bash scripts/setup.sh; }

st_build() {
  cmake -S . -B "$BUILD" -G Ninja -DCUBIND_BUILD_CODEGEN=ON -DCUBIND_BUILD_TESTS=ON \
        -DCUBIND_BUILD_EXAMPLES=ON >/dev/null
  cmake --build "$BUILD" -j "$(nproc)"
}

st_drift() {
  bash scripts/regenerate.sh "$BUILD/codegen/cubind-codegen"
  if [ -n "$(git status --porcelain -- "${GENERATED[@]}")" ]; then
    git status --short -- "${GENERATED[@]}"
    git --no-pager diff --stat -- "${GENERATED[@]}"
    echo "drift check FAILED: ${GENERATED[*]} differ from the generator's output; run scripts/regenerate.sh and commit" >&2
    return 1
  fi
  echo "${GENERATED[*]} match the generator's output"
}

st_codegen_check() { "$BUILD/codegen/cubind-codegen" check; }

st_ctest() { ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"; }

st_examples() {
  for ex in nvrtc_link_launch saxpy_program load_cubin peer_copy; do
    "$BUILD/examples/cpp/$ex"
  done
}

st_install() { bash tests/package/check_install.sh "$BUILD"; }

st_wheel() {
  rm -rf build/wheelhouse
  mkdir -p build
  if ! "$PY" -m pip wheel -v --disable-pip-version-check --no-build-isolation --no-deps -w build/wheelhouse . \
       2>&1 | tee build/wheelhouse.log | bash scripts/condense_build_log.sh; then
    tail -n 40 build/wheelhouse.log >&2
    echo "pip wheel FAILED; the whole log: build/wheelhouse.log" >&2
    return 1
  fi
  ls build/wheelhouse/cubind-*.whl
  "$PY" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall build/wheelhouse/cubind-*.whl
}

st_pytest() {
  # CUBIND_BUILD_DIR: the documentation's C++ snippets build against an install of it.
  # Exit status 5 (no tests collected) fails this stage as any other non-zero one.
  CUBIND_BUILD_DIR="$BUILD" "$PY" -m pytest -ra tests/python
}

st_instructions() { "$PY" benchmarks/instruction_counts.py --check; }

st_docs() { bash scripts/docs.sh "$PY"; }

st_typecheck() { bash scripts/typecheck.sh "$PY"; }

st_doc_commands() { "$PY" tests/doc_commands/check_doc_commands.py; }

st_wheel_check() { bash tests/package/check_wheel.sh build/wheelhouse/cubind-*.whl; }

st_asan() {
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$(nproc)"
  ctest --preset asan -j "$(nproc)"
  # The generator under the sanitizers on the real headers: check, and a regeneration that changes nothing.
  build/asan/codegen/cubind-codegen check
  bash scripts/regenerate.sh build/asan/codegen/cubind-codegen
  if [ -n "$(git status --porcelain -- "${GENERATED[@]}")" ]; then
    echo "the generator built with the sanitizers wrote other bindings/ than the committed ones" >&2
    return 1
  fi
}

# ---- the stages: name, the stages it needs, the function that runs it
NAMES=(); VERDICTS=(); TIMES=()
declare -A PASSED=()
duration() { printf '%dm %02ds' $(($1 / 60)) $(($1 % 60)); }
stage() {
  local name=$1 needs=$2 fn=$3 need
  for need in $needs; do
    if [ -z "${PASSED[$need]:-}" ]; then
      echo "== [$name] skipped: needs $need, which did not pass"
      NAMES+=("$name"); VERDICTS+=("skipped (needs $need)"); TIMES+=("")
      return 0
    fi
  done
  echo "== [$name] ..."
  local t0=$SECONDS rc
  # A subshell with set -e of its own, outside any condition, so that a failing
  # command inside the stage ends the stage (and only the stage).
  set +e
  ( set -euo pipefail; "$fn" )
  rc=$?
  set -e
  local took
  took=$(duration $((SECONDS - t0)))
  NAMES+=("$name"); TIMES+=("$took")
  if [ "$rc" -eq 0 ]; then
    PASSED[$name]=1; VERDICTS+=("passed")
    echo "== [$name] passed in $took"
  else
    VERDICTS+=("FAILED (exit $rc)")
    echo "== [$name] FAILED (exit $rc) in $took" >&2
  fi
}

stage setup         ""            st_setup
stage build         "setup"       st_build
stage drift         "build"       st_drift
stage codegen-check "build"       st_codegen_check
stage ctest         "build"       st_ctest
stage examples      "build"       st_examples
stage install       "build"       st_install
stage wheel         "setup"       st_wheel
stage pytest        "wheel"       st_pytest
stage instructions  "wheel"       st_instructions
stage docs          "wheel"       st_docs
stage typecheck     "wheel"       st_typecheck
stage doc-commands  "wheel"       st_doc_commands
stage wheel-check   "wheel"       st_wheel_check
stage asan          "setup"       st_asan

echo
echo "== summary: scripts/test.sh in $(duration $((SECONDS - START)))"
failed=0
for i in "${!NAMES[@]}"; do
  printf '  %-14s %-26s %s\n' "${NAMES[$i]}" "${VERDICTS[$i]}" "${TIMES[$i]}"
  [ "${VERDICTS[$i]}" = passed ] || failed=$((failed + 1))
done
if [ "$failed" -ne 0 ]; then
  echo "test.sh: $failed of ${#NAMES[@]} stages did not pass" >&2
  exit 1
fi
echo "test.sh: all ${#NAMES[@]} stages passed"
