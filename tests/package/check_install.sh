#!/usr/bin/env bash
# Installs cubind into a temporary prefix, then configures, builds and runs
# tests/package/consumer against it with find_package(cubind): one program
# on cubind::core, one on cubind::raw alone, whose binary must not depend on
# the core. Then builds examples/ (a CMake project of its own) against the
# same prefix and runs the NVRTC -> nvJitLink example.
#   tests/package/check_install.sh [build-dir-of-cubind]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build/package}
WORK=$(mktemp -d /tmp/cubind-package.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -G Ninja >/dev/null
fi
cmake --build "$BUILD" --target cubind cubind_raw
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
cmake -S tests/package/consumer -B "$WORK/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
cmake --build "$WORK/consumer"

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
fail() { echo "package check FAILED: $*" >&2; exit 1; }

"$WORK/consumer/cubind_consumer"
needed "$WORK/consumer/cubind_consumer" | grep -qx 'libcubind.so' || fail "cubind_consumer does not link libcubind.so"

"$WORK/consumer/cubind_raw_consumer"
raw_needed=$(needed "$WORK/consumer/cubind_raw_consumer")
echo "$raw_needed" | grep -qx 'libcubind_raw.so' || fail "cubind_raw_consumer does not link libcubind_raw.so"
if echo "$raw_needed" | grep -qx 'libcubind.so'; then fail "cubind_raw_consumer links the core (libcubind.so)"; fi
if ldd "$WORK/consumer/cubind_raw_consumer" | grep -q 'libcubind\.so'; then
  fail "cubind_raw_consumer loads the core (libcubind.so)"
fi
# The raw library itself depends on nothing of cubind.
raw_lib=$(find "$WORK/prefix" -name libcubind_raw.so)
[ -n "$raw_lib" ] || fail "libcubind_raw.so is not installed"
if needed "$raw_lib" | grep -q '^libcubind'; then fail "libcubind_raw.so links another cubind library"; fi

# The examples, as a user builds them from an installed cubind.
cmake -S examples -B "$WORK/examples" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
cmake --build "$WORK/examples"
for ex in nvrtc_link_launch saxpy_program load_cubin peer_copy; do
  [ -x "$WORK/examples/cpp/$ex" ] || fail "examples/: $ex was not built against the install"
done
"$WORK/examples/cpp/nvrtc_link_launch"

echo "package check: find_package(cubind) gives cubind::core and cubind::raw from $WORK/prefix;" \
     "the raw consumer needs $(echo $raw_needed | tr ' ' ',') and not libcubind.so; examples/ builds against it"
