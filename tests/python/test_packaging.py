"""What a user of the installed package builds on: cubind.get_include() (one
directory), cubind.get_cuda_include() (found the way the loader finds
libraries), the README's Cython snippet compiled with only those paths and
get_library_dir(), and `python -m cubind` (whole messages, --json).

No GPU needed: without a driver the snippet must fail with the loader's error.
"""
import json
import os
import re
import subprocess
import sys

import pytest

import cubind
from conftest import DRIVER_PRESENT, build_cython_module, run_python

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_get_include_is_one_directory_with_every_cubind_header():
    include = cubind.get_include()
    assert isinstance(include, str)
    for header in ("cubind/raw/driver.hpp", "cubind/raw/nvrtc.hpp", "cubind/raw/nvjitlink.hpp",
                   "cubind/raw/runtime.hpp", "cubind/raw/nvvm.hpp", "cubind/raw/nvfatbin.hpp", "nvFatbin.h", "cubind/raw/nvml.hpp", "nvml.h", "cubind/raw/cufile.hpp", "cufile.h", "cubind/raw/cudla.hpp", "cudla.h", "cubind/detail/loader_support.hpp", "cubind/stream.hpp"):
        assert os.path.isfile(os.path.join(include, header)), header


def test_get_cuda_include_finds_cuda_h():
    assert os.path.isfile(os.path.join(cubind.get_cuda_include(), "cuda.h"))


def test_cuda_include_override_is_the_only_place_tried(tmp_path):
    result = run_python("import cubind; print(cubind.get_cuda_include())",
                        env={"CUBIND_CUDA_INCLUDE": str(tmp_path)})
    assert result.returncode != 0
    assert f"CUBIND_CUDA_INCLUDE: no cuda.h in {tmp_path}" in result.stderr
    assert "/usr/local/cuda" not in result.stderr
    assert "correct it or unset it" in result.stderr
    # cuda.h alone is not enough: cubind's headers include the others too.
    (tmp_path / "cuda.h").write_text("/* stand-in */\n")
    result = run_python("import cubind; print(cubind.get_cuda_include())",
                        env={"CUBIND_CUDA_INCLUDE": str(tmp_path)})
    assert result.returncode != 0
    assert f"CUBIND_CUDA_INCLUDE: {tmp_path} lacks cudaProfiler.h, cuda_profiler_api.h" in result.stderr
    for header in cubind._CUDA_HEADERS:
        (tmp_path / header).write_text("/* stand-in */\n")
    result = run_python("import cubind; print(cubind.get_cuda_include())",
                        env={"CUBIND_CUDA_INCLUDE": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path)


def test_cuda_include_search_order_and_error(tmp_path, monkeypatch):
    empty = str(tmp_path)
    monkeypatch.delenv("CUBIND_CUDA_INCLUDE", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    monkeypatch.setenv("CUDA_HOME", empty)
    monkeypatch.setenv("CUDA_PATH", empty)
    places = [place for place, _, _ in cubind._cuda_include_candidates()]
    # The loader's order for libraries (docs/loading.md), the override first.
    assert places == ["NVIDIA wheels", "$CONDA_PREFIX", "$CUDA_HOME", "$CUDA_PATH", "/usr/local/cuda"]
    # Without /usr/local/cuda and the wheels, nothing holds cuda.h: every place is named.
    original = cubind._cuda_include_candidates
    monkeypatch.setattr(cubind, "_cuda_include_candidates",
                        lambda: [c for c in original() if c[0] not in ("NVIDIA wheels", "/usr/local/cuda")])
    with pytest.raises(RuntimeError) as info:
        cubind.get_cuda_include()
    message = str(info.value)
    assert message.startswith("cubind could not find the CUDA headers (cuda.h). Tried:\n")
    assert "  - CUBIND_CUDA_INCLUDE: not set" in message
    assert "  - $CONDA_PREFIX: not set" in message
    assert f"  - $CUDA_HOME: no cuda.h in {empty}/include" in message
    assert f"$CUDA_PATH" not in message, "a directory named twice is tried once"
    assert "Set CUBIND_CUDA_INCLUDE" in message


def readme_cython_snippet():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    blocks = re.findall(r"```cython\n(.*?)```", text, re.S)
    assert blocks, "README.md has no ```cython block"
    return blocks[0]


def test_readme_cython_snippet_builds_and_runs(tmp_path):
    snippet = readme_cython_snippet()
    assert "cimport cydriver" in snippet
    workdir = str(tmp_path)
    pyx = os.path.join(workdir, "readme_snippet.pyx")
    with open(pyx, "w") as f:
        f.write(snippet + "\nprint('driver version', version)\n")
    # The module as the README builds it: get_include(), get_cuda_include() and
    # get_library_dir() are the only paths given.
    module = build_cython_module(pyx, workdir)
    result = subprocess.run([sys.executable, "-c", "import readme_snippet"], cwd=os.path.dirname(module),
                            capture_output=True, text=True)
    if DRIVER_PRESENT:
        assert result.returncode == 0, result.stderr
        assert re.search(r"driver version \d+", result.stdout), result.stdout
    else:
        # No driver: the call raises the loader's error, whole, and nothing crashes.
        assert result.returncode == 1, result.stderr
        assert "RuntimeError: cubind could not load the CUDA driver (libcuda.so.1). Tried:" in result.stderr
        assert "system loader (libcuda.so.1)" in result.stderr
        assert "The NVIDIA driver is not installed" in result.stderr


def run_main(*args, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "cubind", *args], capture_output=True, text=True, env=full_env)


def test_main_prints_whole_loader_errors(tmp_path):
    missing = str(tmp_path / "libnvrtc.so.13")
    result = run_main(env={"CUBIND_NVRTC_LIBRARY": missing})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # Every line of NVRTC's loader error, the override and the advice after it included.
    assert "nvrtc                   not found: cubind could not load NVRTC (libnvrtc.so.13). Tried:" in out
    assert f"CUBIND_NVRTC_LIBRARY={missing}" in out
    assert "CUBIND_NVRTC_LIBRARY is set, so no other place was searched: correct it or unset it." in out
    if not DRIVER_PRESENT:
        assert "driver                  not available: cubind could not load the CUDA driver" in out
        assert "system loader (libcuda.so.1)" in out
        assert "The NVIDIA driver is not installed" in out
    # Continuation lines sit under the value, not at the margin.
    assert "\n" + " " * 24 + f"  - CUBIND_NVRTC_LIBRARY={missing}: " in out
    assert "\n" + " " * 24 + "CUBIND_NVRTC_LIBRARY is set" in out


def test_main_json_is_the_same_report(tmp_path):
    missing = str(tmp_path / "libnvrtc.so.13")
    result = run_main("--json", env={"CUBIND_NVRTC_LIBRARY": missing})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["cubind"] == cubind.__version__
    assert set(report["libraries"]) == {"runtime", "nvrtc", "nvjitlink", "nvvm", "nvfatbin", "nvml", "cufile", "cudla"}
    nvml = report["libraries"]["nvml"]
    if not DRIVER_PRESENT:
        assert nvml["version"] is None and "libnvidia-ml.so.1" in nvml["error"], nvml
    nvrtc = report["libraries"]["nvrtc"]
    assert nvrtc["path"] is None and nvrtc["version"] is None
    assert nvrtc["error"].startswith("cubind could not load NVRTC (libnvrtc.so.13). Tried:\n")
    assert nvrtc["error"].endswith("correct it or unset it.")
    assert set(report["driver"]) == {"version", "devices", "error", "path", "missing"}
    if not DRIVER_PRESENT:
        assert "system loader (libcuda.so.1)" in report["driver"]["error"]
    # The text report says the same, line for line.
    text = run_main(env={"CUBIND_NVRTC_LIBRARY": missing}).stdout
    for line in nvrtc["error"].splitlines():
        assert line in text
    for name in ("nvjitlink", "nvvm", "nvfatbin"):
        lib = report["libraries"][name]
        if lib["error"] is None:
            assert os.path.isfile(lib["path"]), name
            assert re.fullmatch(r"\d+\.\d+", lib["version"]), name
        else:
            assert lib["error"].startswith("cubind could not load "), name
