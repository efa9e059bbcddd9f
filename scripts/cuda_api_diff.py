#!/usr/bin/env python3
"""The functions each CUDA release added, per library, read from NVIDIA's header wheels.

    python scripts/cuda_api_diff.py                 what the pinned headers add over CUDA 13.0
    python scripts/cuda_api_diff.py --base 13.2     ... over another release
    python scripts/cuda_api_diff.py --each-release  every release from the base to the pin, and
                                                    for each added function the release that added it

The headers of a release come from the wheels pip downloads (nvidia-cuda-runtime
for cuda.h and cuda_runtime_api.h, nvidia-cuda-nvrtc, nvidia-nvjitlink), cached in
build/cuda-api-diff/<release>; the pinned ones from .cuda-headers (scripts/cuda_headers.py).
A function is a public name declared by the header: the driver's and the runtime's
as cubind binds them (versioned declarations such as cuGraphAddNode_v3 included),
NVRTC's and nvJitLink's public C names. Standard library only.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "build" / "cuda-api-diff"
LIBRARIES = {
    # library: (header, wheel, the declaration pattern of a public function)
    "driver": ("cuda.h", "nvidia-cuda-runtime", r"^\s*CUresult\s+CUDAAPI\s+(cu\w+)\s*\("),
    "runtime": ("cuda_runtime_api.h", "nvidia-cuda-runtime",
                r"^\s*extern\s+__host__\s+(?:__cudart_builtin__\s+)?(?:CUDART_DEVICE\s+)?cudaError_t\s+CUDARTAPI\s+(cuda\w+)\s*\("),
    "nvrtc": ("nvrtc.h", "nvidia-cuda-nvrtc", r"^\s*nvrtcResult\s+(nvrtc\w+)\s*\("),
    "nvjitlink": ("nvJitLink.h", "nvidia-nvjitlink", r"^\s*(?:static\s+inline\s+)?nvJitLinkResult\s+(nvJitLink\w+)\s*\("),
}
# Declarations that are not public entry points: the driver's versioned aliases of
# deprecated ABIs behind #if blocks are listed by cuda.h's own macros.
WHEELS = sorted({w for _, w, _ in LIBRARIES.values()})


def pinned() -> tuple[str, Path]:
    lock = json.loads((ROOT / "scripts" / "cuda-headers.lock.json").read_text())
    include = ROOT / ".cuda-headers" / "include"
    if not (include / "cuda.h").is_file():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "cuda_headers.py"), "fetch"], check=True)
    runtime = next(w for w in lock["wheels"] if w["name"] == "nvidia-cuda-runtime")
    return runtime["version"], include


def release_versions() -> list[str]:
    """The newest wheel version of each 13.x release on PyPI (pip index versions)."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "nvidia-cuda-runtime"],
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("Available versions:"))
    newest: dict[str, str] = {}
    for v in line.split(":", 1)[1].replace(" ", "").split(","):
        minor = ".".join(v.split(".")[:2])
        if minor not in newest or tuple(map(int, v.split("."))) > tuple(map(int, newest[minor].split("."))):
            newest[minor] = v
    return [newest[m] for m in sorted(newest, key=lambda m: tuple(map(int, m.split("."))))]


def headers_of(release: str) -> Path:
    """The include folder of a release (MAJOR.MINOR or a full wheel version), fetched once."""
    if release.count(".") == 1:
        release = next(v for v in release_versions() if v.startswith(release + "."))
    folder = CACHE / release
    if (folder / "include" / "nvJitLink.h").is_file():
        return folder / "include"
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        minor = ".".join(release.split(".")[:2])
        # The release's three wheels: each at its newest version of that minor.
        reqs = [f"{w}=={release}" if w == "nvidia-cuda-runtime" else f"{w}=={minor}.*" for w in WHEELS]
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "--only-binary=:all:", "--platform", "manylinux_2_17_x86_64", "--platform",
                        "manylinux2014_x86_64", "--dest", tmp, *reqs], check=True)
        for wheel in Path(tmp).glob("*.whl"):
            with zipfile.ZipFile(wheel) as z:
                for name in z.namelist():
                    base = name.rsplit("/", 1)[-1]
                    if name.startswith("nvidia/cu13/include/") and base in {h for h, _, _ in LIBRARIES.values()}:
                        (folder / "include").mkdir(exist_ok=True)
                        (folder / "include" / base).write_bytes(z.read(name))
    return folder / "include"


def functions(include: Path) -> dict[str, set[str]]:
    out = {}
    for library, (header, _, pattern) in LIBRARIES.items():
        text = (include / header).read_text(encoding="utf-8", errors="replace")
        names = set(re.findall(pattern, text, flags=re.M))
        # nvJitLink's versioned symbols (__nvJitLinkCreate_13_0) are not public names.
        out[library] = {n for n in names if not n.startswith("__")}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="13.0", help="the release to compare with (default 13.0)")
    parser.add_argument("--each-release", action="store_true", help="name the release that added each function")
    parser.add_argument("--json", action="store_true", help="print JSON: {library: {function: release}}")
    args = parser.parse_args()
    pin_version, pin_include = pinned()
    new = functions(pin_include)
    base = functions(headers_of(args.base))
    added = {lib: sorted(new[lib] - base[lib]) for lib in LIBRARIES}
    removed = {lib: sorted(base[lib] - new[lib]) for lib in LIBRARIES}
    since = {lib: {f: ".".join(pin_version.split(".")[:2]) for f in added[lib]} for lib in LIBRARIES}
    if args.each_release:
        base_minor = tuple(map(int, args.base.split(".")[:2]))
        pin_minor = tuple(map(int, pin_version.split(".")[:2]))
        for release in release_versions():
            minor = tuple(map(int, release.split(".")[:2]))
            if not base_minor < minor < pin_minor:
                continue
            present = functions(headers_of(release))
            for lib in LIBRARIES:
                for f in added[lib]:
                    if f in present[lib] and since[lib][f] == ".".join(pin_version.split(".")[:2]):
                        since[lib][f] = f"{minor[0]}.{minor[1]}"
    if args.json:
        print(json.dumps(since, indent=1))
        return
    total = sum(len(v) for v in added.values())
    print(f"CUDA {pin_version} (pinned) over CUDA {args.base}: {total} functions added")
    for lib in LIBRARIES:
        print(f"\n{lib}: {len(added[lib])} added" + (f", {len(removed[lib])} removed" if removed[lib] else ""))
        for f in added[lib]:
            print(f"  {f}" + (f"  (CUDA {since[lib][f]})" if args.each_release else ""))
        for f in removed[lib]:
            print(f"  - {f} (removed)")


if __name__ == "__main__":
    main()
