#!/usr/bin/env python3
"""The CUDA headers cubind is generated and built from, pinned.

scripts/cuda-headers.lock.json names NVIDIA's wheels (name and exact version)
and the sha256 of every header taken from them. This script (standard library
only; the wheels come through pip, the ordinary client of PyPI) fetches those
wheels, unpacks their include/ folders into one folder (.cuda-headers/include
at the repository root by default, ignored by git) and checks every header
against the lock, so the generator and the C++ and Cython builds read exactly
the pinned headers, whatever toolkit the machine has.

    python scripts/cuda_headers.py fetch [--dest DIR]   fetch and verify (a no-op when DIR matches)
    python scripts/cuda_headers.py verify [--dest DIR]  verify only; exit 1 on any difference
    python scripts/cuda_headers.py include              print the include folder
    python scripts/cuda_headers.py version              print the pinned CUDA version (13.5)
    python scripts/cuda_headers.py lock NAME==VERSION...
        rewrite the lock for other wheels (scripts/move_cuda_pin.sh uses it)
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "scripts" / "cuda-headers.lock.json"
DEFAULT_DEST = ROOT / ".cuda-headers"
# Inside each wheel, the headers live under this folder; they keep their paths below it.
WHEEL_INCLUDE = "nvidia/cu13/include/"
# The wheels' contents are the same on every platform; one platform keeps the
# download (and so the lock) the same on every machine.
PLATFORM = "manylinux_2_17_x86_64"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_lock() -> dict:
    with open(LOCK, encoding="utf-8") as f:
        return json.load(f)


def download(requirements: list[str], into: Path) -> list[Path]:
    """Downloads the wheels with pip (exact versions, no dependencies) into `into`."""
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps",
           "--only-binary=:all:", "--platform", PLATFORM, "--platform", "manylinux2014_x86_64",
           "--dest", str(into), *requirements]
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit(f"cuda_headers: pip download {' '.join(requirements)} failed:\n{result.stdout}")
    return sorted(into.glob("*.whl"))


def wheel_headers(wheel: Path) -> dict[str, bytes]:
    """The files under the wheel's include folder, by their path below it."""
    out = {}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith(WHEEL_INCLUDE) and not name.endswith("/"):
                out[name[len(WHEEL_INCLUDE):]] = z.read(name)
    return out


def wheel_name(wheel: Path) -> str:
    # nvidia_cuda_runtime-13.5.37-py3-none-... -> nvidia-cuda-runtime
    return wheel.name.split("-", 1)[0].replace("_", "-")


def check(dest: Path, lock: dict) -> list[str]:
    """What differs between the folder and the lock: missing or changed headers."""
    problems = []
    include = dest / "include"
    for wheel in lock["wheels"]:
        for rel, digest in wheel["headers"].items():
            path = include / rel
            if not path.is_file():
                problems.append(f"{rel} (from {wheel['name']}=={wheel['version']}): missing")
            elif sha256(path) != digest:
                problems.append(f"{rel} (from {wheel['name']}=={wheel['version']}): "
                                f"sha256 {sha256(path)}, the lock says {digest}")
    return problems


def fetch(dest: Path) -> None:
    lock = read_lock()
    if not check(dest, lock):
        print(f"cuda_headers: {dest / 'include'} holds the CUDA {lock['cuda']} headers of the lock")
        return
    requirements = [f"{w['name']}=={w['version']}" for w in lock["wheels"]]
    with tempfile.TemporaryDirectory(prefix="cubind-cuda-headers-") as tmp:
        wheels = download(requirements, Path(tmp))
        staging = Path(tmp) / "include"
        for wheel in wheels:
            for rel, data in wheel_headers(wheel).items():
                path = staging / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        (Path(tmp) / "staged").mkdir()
        shutil.move(str(staging), str(Path(tmp) / "staged" / "include"))
        problems = check(Path(tmp) / "staged", lock)
        if problems:
            sys.exit("cuda_headers: the downloaded headers differ from scripts/cuda-headers.lock.json:\n  "
                     + "\n  ".join(problems))
        dest.mkdir(parents=True, exist_ok=True)
        if (dest / "include").exists():
            shutil.rmtree(dest / "include")
        shutil.move(str(Path(tmp) / "staged" / "include"), str(dest / "include"))
    (dest / "VERSION").write_text(lock["cuda"] + "\n", encoding="utf-8")
    print(f"cuda_headers: fetched the CUDA {lock['cuda']} headers into {dest / 'include'} "
          f"({sum(len(w['headers']) for w in lock['wheels'])} files, sha256 checked)")


def write_lock(requirements: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="cubind-cuda-headers-") as tmp:
        wheels = download(requirements, Path(tmp))
        entries = []
        for wheel in wheels:
            version = wheel.name.split("-")[1]
            headers = {rel: hashlib.sha256(data).hexdigest()
                       for rel, data in sorted(wheel_headers(wheel).items())}
            entries.append({"name": wheel_name(wheel), "version": version, "headers": headers})
    runtime = next((e for e in entries if e["name"] == "nvidia-cuda-runtime"), None)
    if runtime is None:
        sys.exit("cuda_headers: the lock needs nvidia-cuda-runtime (cuda.h)")
    major, minor = runtime["version"].split(".")[:2]
    lock = {
        "comment": "The CUDA headers cubind is generated and built from; written by "
                   "scripts/cuda_headers.py lock, read by scripts/cuda_headers.py fetch.",
        "cuda": f"{major}.{minor}",
        "wheels": entries,
    }
    LOCK.write_text(json.dumps(lock, indent=1) + "\n", encoding="utf-8")
    print(f"cuda_headers: wrote {LOCK.relative_to(ROOT)} for CUDA {lock['cuda']}: "
          + ", ".join(f"{e['name']}=={e['version']}" for e in entries))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("fetch", "verify", "include"):
        p = sub.add_parser(name)
        p.add_argument("--dest", type=Path, default=Path(os.environ.get("CUBIND_CUDA_HEADERS", DEFAULT_DEST)))
    sub.add_parser("version")
    p = sub.add_parser("lock")
    p.add_argument("requirements", nargs="+", help="NAME==VERSION of each wheel")
    args = parser.parse_args()
    if args.command == "fetch":
        fetch(args.dest.resolve())
    elif args.command == "verify":
        problems = check(args.dest.resolve(), read_lock())
        if problems:
            sys.exit("cuda_headers: " + str(args.dest) + " differs from the lock:\n  " + "\n  ".join(problems)
                     + "\nrun: python scripts/cuda_headers.py fetch")
        print(f"cuda_headers: {args.dest} matches the lock")
    elif args.command == "include":
        print(args.dest.resolve() / "include")
    elif args.command == "version":
        print(read_lock()["cuda"])
    else:
        write_lock(args.requirements)


if __name__ == "__main__":
    main()
