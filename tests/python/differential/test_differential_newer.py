"""Differential suite, the modules that cuda-bindings 13.0 lacks (nvfatbin): the
whole suite runs again in a child process, against the cuda-bindings release their
headers are pinned to (scripts/cuda-extras.lock), which scripts/setup.sh installs
apart in the repository's .cuda-bindings-new; the child's sys.path puts it first, so
that its cuda.bindings is imported instead of the venv's. Its cases are listed in
known_differences.py like every other case, and its summary is printed here."""
import os
import subprocess
import sys

import pytest

import _diff  # noqa: E402
from conftest import newer_cuda_bindings_env, newer_cuda_bindings_missing  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

if _diff.NEWER:
    pytest.skip("this is the child process", allow_module_level=True)


def test_newer_modules_against_newer_cuda_bindings():
    if newer_cuda_bindings_missing():
        pytest.skip(newer_cuda_bindings_missing())
    env = {**os.environ, **newer_cuda_bindings_env(), "CUBIND_DIFF_NEWER": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", HERE],
                          env=env, cwd=HERE, capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    summary = [line for line in out.splitlines() if line.startswith(("differential suite", "  "))
               and ("passed" in line or "differences listed" in line or "failed" in line)]
    print("\n".join(summary))
    assert proc.returncode == 0, f"the suite against the newer cuda-bindings failed:\n{out[-6000:]}"
