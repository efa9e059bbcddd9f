#!/usr/bin/env bash
# The GPU machine has no network, no GoogleTest or Google Benchmark and no
# EGL/OpenGL loaders. This fetches their Debian packages here: GoogleTest and
# Google Benchmark unpacked into .carry/root, the loaders' packages into .gl
# (both ignored by git), for the device tool to carry; scripts/gpu_suite.sh
# uses them (it unpacks .gl/*.deb into / there, as the OpenGL tests need).
# The pinned CUDA headers (scripts/cuda_headers.py) go into .carry/cuda-headers:
# the C++ core and the Cython modules compile against them there too.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.carry/' .git/info/exclude 2>/dev/null || echo '/.carry/' >> .git/info/exclude
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
"$PY" scripts/cuda_headers.py fetch --dest .carry/cuda-headers
mkdir -p .carry && cd .carry
apt-get download libgtest-dev libbenchmark-dev libbenchmark1debian googletest >/dev/null
for f in *.deb; do dpkg -x "$f" root; done
echo "prepared $(pwd)/root"
cd ..
grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo '/.gl/' >> .git/info/exclude
mkdir -p .gl /tmp/amd64-lists/partial
apt_amd64=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64-lists)
apt-get "${apt_amd64[@]}" update >/dev/null
(cd .gl && apt-get "${apt_amd64[@]}" download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null)
echo "prepared $(pwd)/.gl"
