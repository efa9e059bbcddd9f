#!/usr/bin/env bash
# Checks a built cubind wheel as a user gets it:
#   1. prints its size and the size installed, per part (goal: 12 MB at most);
#   2. installs it with the extra cu13 (NVIDIA's NVRTC, nvJitLink and runtime
#      wheels) into a fresh venv, then, with no CUDA toolkit in sight
#      (/usr/local/cuda under an empty tmpfs in a private mount namespace where
#      `unshare -m` is allowed, CUDA_HOME and CUDA_PATH an empty folder,
#      LD_LIBRARY_PATH empty), compiles with NVRTC and links with nvJitLink
#      through cubind.bindings and checks every library came from the wheels
#      (tests/package/wheel_without_toolkit.py).
# Prints "skipped" and succeeds only when pip cannot reach the package index.
#   tests/package/check_wheel.sh path/to/cubind-*.whl
set -euo pipefail
cd "$(dirname "$0")/../.."
WHEEL=$(realpath "${1:?usage: $0 path/to/cubind-*.whl}")
WORK=$(mktemp -d /tmp/cubind-wheel.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB (%.1f MiB)", b / 1e6, b / 1048576 }'; }

echo "wheel: $(basename "$WHEEL"): $(mb "$(stat -c %s "$WHEEL")")"

python3 -m venv "$WORK/venv"
PY=$WORK/venv/bin/python
if ! "$PY" -m pip install -q --disable-pip-version-check "$WHEEL[cu13]" >"$WORK/pip.log" 2>&1; then
  if grep -qiE "NewConnectionError|Failed to establish|Temporary failure in name resolution|Network is unreachable|ConnectTimeout|ReadTimeout|No matching distribution found for nvidia" "$WORK/pip.log"; then
    echo "wheel check skipped: pip cannot reach the package index for NVIDIA's wheels:"
    tail -3 "$WORK/pip.log"
    exit 0
  fi
  cat "$WORK/pip.log" >&2
  echo "wheel check FAILED: pip install $WHEEL[cu13]" >&2
  exit 1
fi

# The installed size, per part.
PKG=$("$PY" -c "import cubind, os; print(os.path.dirname(cubind.__file__))")
bytes_of() { du -sb "$@" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
total=$(bytes_of "$PKG")
echo "installed: $PKG: $(mb "$total")"
echo "  libcubind_raw.so (raw layer)  $(mb "$(bytes_of "$PKG"/libcubind_raw.so)")"
echo "  libcubind.so (C++ core)       $(mb "$(bytes_of "$PKG"/libcubind.so)")"
echo "  cubind/bindings               $(mb "$(bytes_of "$PKG"/bindings)")"
echo "  cubind/core                   $(mb "$(bytes_of "$PKG"/core)")"
echo "  cubind/include (headers)      $(mb "$(bytes_of "$PKG"/include)")"
# The goal is 12 MB installed. What takes the room: the code of the driver and
# runtime modules, and the header documentation they carry as docstrings.
if [ "$total" -gt 12000000 ]; then
  echo "note: the installed package is over the 12 MB (12,000,000 bytes) goal by $(mb $((total - 12000000)))"
fi
if file "$PKG"/libcubind_raw.so "$PKG"/bindings/*.so | grep -q "with debug_info"; then
  echo "wheel check FAILED: the wheel's libraries carry debug info (install.strip)" >&2
  exit 1
fi

# NVRTC and nvJitLink from the wheels, no toolkit in sight.
mkdir -p "$WORK/empty"
run_check() {
  env -u CONDA_PREFIX -u CUBIND_NVRTC_LIBRARY -u CUBIND_NVJITLINK_LIBRARY -u CUBIND_CUDART_LIBRARY \
      -u CUBIND_CUDA_INCLUDE CUDA_HOME="$WORK/empty" CUDA_PATH="$WORK/empty" LD_LIBRARY_PATH= \
      "$@" "$PY" tests/package/wheel_without_toolkit.py
}
if [ -e /usr/local/cuda ] && unshare -m true 2>/dev/null; then
  # A tmpfs over /usr/local/cuda (over the folder it links to) in this
  # process's own mount namespace: the rest of the machine still sees it.
  run_check unshare -m sh -c 'mount -t tmpfs cubind-hide /usr/local/cuda ||
    echo "note: cannot mount over /usr/local/cuda here; it stays visible, after the wheels in the search order"
    exec "$@"' sh
else
  [ -e /usr/local/cuda ] && echo "note: unshare -m is not allowed here; /usr/local/cuda stays visible, after the wheels in the search order"
  run_check
fi
