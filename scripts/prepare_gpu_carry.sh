#!/usr/bin/env bash
# The GPU machine has no network and no GoogleTest or Google Benchmark. This
# fetches their Debian packages here and unpacks them into .carry/root (ignored
# by git), for the device tool to carry: scripts/gpu_suite.sh uses them.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.carry/' .git/info/exclude 2>/dev/null || echo '/.carry/' >> .git/info/exclude
mkdir -p .carry && cd .carry
apt-get download libgtest-dev libbenchmark-dev libbenchmark1debian googletest >/dev/null
for f in *.deb; do dpkg -x "$f" root; done
echo "prepared $(pwd)/root"
