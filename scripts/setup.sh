#!/usr/bin/env bash
# Installs what building and testing cubind needs on a fresh Debian 12 machine
# with the CUDA toolkit at /usr/local/cuda: clang 19 LibTooling for the
# generator, yaml-cpp, CLI11, nlohmann-json, GoogleTest, Google Benchmark,
# ninja, valgrind (apt-get); and from PyPI Cython, scikit-build-core, pytest, cuda-bindings
# and cuda-core, into the project's venv .venv at the repository root (made with
# python3 -m venv, reused by later runs), never into the system's Python.
# The other scripts run Python as .venv/bin/python.
set -euo pipefail
cd "$(dirname "$0")/.."

# libegl-dev, libgl-dev, libvdpau-dev: the generator parses CUDA's graphics-interop
# headers, which include theirs (a build without them uses bindings/loader/standin).
# valgrind: test.sh's instructions stage counts instructions with callgrind.
APT_PACKAGES=(libclang-cpp19-dev llvm-19-dev libclang-19-dev clang-19 libyaml-cpp-dev libcli11-dev
              nlohmann-json3-dev libgtest-dev libbenchmark-dev ninja-build cmake g++ binutils
              libegl-dev libgl-dev libvdpau-dev python3-dev python3-venv valgrind)
# cuda-bindings: NVIDIA's bindings of the same CUDA version as the pinned
# headers (scripts/cuda-headers.lock.json), which the
# compatibility tests compare cubind.bindings with (names, signatures, values);
# cuda-core: NVIDIA's cuda.core 1.2, which cubind.core is compared with.
PIP_PACKAGES=("cython>=3.0" "scikit-build-core>=0.10" "pytest>=7" "cuda-bindings==13.5.0" "cuda-core==1.2.*")

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

VENV=$PWD/.venv
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: python3 -m venv $VENV"
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import Cython, scikit_build_core, pytest, cuda.bindings, cuda.core
from importlib.metadata import version; assert version('cuda-bindings') == '13.5.0'" 2>/dev/null; then
  echo "setup: pip install into $VENV: ${PIP_PACKAGES[*]}"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PIP_PACKAGES[@]}"
fi

# Headers a toolkit may lack (nvFatbin.h, cufile.h, cudla.h, nvml.h), from the NVIDIA wheels
# pinned in scripts/cuda-extras.lock, into .cuda-extras/.
bash scripts/fetch_cuda_extras.sh "$VENV/bin/python"
# The same cuda-bindings 13.5 installed apart: the tests compare with it where the
# environment's own cuda-bindings is another release (a venv made for 13.0), putting
# it first on sys.path (tests/python/conftest.py) and on the PYTHONPATH of the
# processes they start.
if [ ! -d .cuda-bindings-new/cuda/bindings ]; then
  echo "setup: pip install --target .cuda-bindings-new cuda-bindings==13.5.0"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --target .cuda-bindings-new "cuda-bindings==13.5.0"
fi

if [ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/cuda.h" ]; then
  echo "setup: no CUDA toolkit at ${CUDA_HOME:-/usr/local/cuda} (cuda.h missing); set CUDA_HOME" >&2
  exit 1
fi

# The CUDA headers the bindings are generated and built from: NVIDIA's wheels at
# the versions of scripts/cuda-headers.lock.json, every header's sha256 checked,
# unpacked into .cuda-headers/include (a no-op when it already matches).
"$VENV/bin/python" scripts/cuda_headers.py fetch
