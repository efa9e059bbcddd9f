#!/usr/bin/env bash
# The main job: set up, build the generator, libcubind and the examples, then
# compile a kernel with NVRTC, link it with nvJitLink and, where a GPU is
# present, launch it and check the result.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

BUILD=${CUBIND_BUILD_DIR:-build/main}
cmake -S . -B "$BUILD" -G Ninja -DCUBIND_BUILD_CODEGEN=ON -DCUBIND_BUILD_EXAMPLES=ON >/dev/null
cmake --build "$BUILD" -j "$(nproc)"

echo "== coverage (cubind-codegen coverage)"
"$BUILD/codegen/cubind-codegen" coverage
echo "== example: NVRTC -> nvJitLink -> launch"
"$BUILD/examples/cpp/nvrtc_link_launch"
