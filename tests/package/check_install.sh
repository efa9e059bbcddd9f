#!/usr/bin/env bash
# Installs cubind into a temporary prefix, then configures, builds and runs
# tests/package/consumer against it with find_package(cubind).
#   tests/package/check_install.sh [build-dir-of-cubind]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build/package}
WORK=$(mktemp -d /tmp/cubind-package.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -G Ninja >/dev/null
fi
cmake --build "$BUILD" --target cubind
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
cmake -S tests/package/consumer -B "$WORK/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
cmake --build "$WORK/consumer"
"$WORK/consumer/cubind_consumer"
echo "package check: find_package(cubind) and cubind::core work from $WORK/prefix"
