#!/usr/bin/env bash
# Fetches the NVIDIA wheels of scripts/cuda-extras.lock (pinned versions, checked
# against their sha256) and unpacks their headers into .cuda-extras/include, where
# cubind-codegen and the build look for the headers a CUDA toolkit lacks
# (nvFatbin.h, cufile.h, cudla.h), and their libraries into .cuda-extras/lib.
# The wheels built for this machine are also installed into the given Python's
# environment (scripts/setup.sh passes the venv's), so that cubind and
# cuda.bindings find their libraries (libnvfatbin, libcufile) as they find any
# NVIDIA wheel's.
#   scripts/fetch_cuda_extras.sh PYTHON
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:?usage: scripts/fetch_cuda_extras.sh PYTHON}
DEST=$PWD/.cuda-extras
mkdir -p "$DEST/wheels" "$DEST/include" "$DEST/lib"
machine=$(uname -m)

while read -r dist version platform sha256; do
  [[ -z "$dist" || "$dist" == \#* ]] && continue
  prefix="${dist//-/_}-$version-"
  wheel=$(find "$DEST/wheels" -maxdepth 1 -name "$prefix*$platform*.whl" | head -n 1)
  if [ -z "$wheel" ]; then
    echo "setup: pip download $dist==$version ($platform)"
    pip_download=(download --quiet --disable-pip-version-check --no-deps --only-binary=:all:
                  --platform "$platform" --dest "$DEST/wheels" "$dist==$version")
    "$PY" -m pip "${pip_download[@]}"
    wheel=$(find "$DEST/wheels" -maxdepth 1 -name "$prefix*$platform*.whl" | head -n 1)
    [ -n "$wheel" ] || { echo "setup: pip download of $dist==$version gave no $platform wheel" >&2; exit 1; }
  fi
  actual=$(sha256sum "$wheel" | cut -d' ' -f1)
  if [ "$actual" != "$sha256" ]; then
    rm -f "$wheel"
    echo "setup: $(basename "$wheel") has sha256 $actual; scripts/cuda-extras.lock expects $sha256" >&2
    exit 1
  fi
  stamp="$DEST/.$(basename "$wheel").unpacked"
  if [ ! -f "$stamp" ]; then
    tmp=$(mktemp -d)
    "$PY" -m zipfile -e "$wheel" "$tmp"
    cp -f "$tmp"/nvidia/*/include/* "$DEST/include/"
    # nvidia-nvml-dev has headers only (libnvidia-ml comes with the driver).
    if [[ "$platform" == *"$machine"* ]] && compgen -G "$tmp/nvidia/*/lib/*" >/dev/null; then
      cp -f "$tmp"/nvidia/*/lib/* "$DEST/lib/"
    fi
    rm -rf "$tmp"
    touch "$stamp"
  fi
  installed=$("$PY" -m pip show "$dist" 2>/dev/null | sed -n 's/^Version: //p' || true)
  if [[ "$platform" == *"$machine"* && "$installed" != "$version" ]]; then
    echo "setup: pip install $(basename "$wheel") into $("$PY" -c 'import sys; print(sys.prefix)')"
    "$PY" -m pip install --quiet --disable-pip-version-check --no-deps "$wheel"
  fi
done < scripts/cuda-extras.lock

