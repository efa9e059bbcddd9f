"""Kernel faults: a store to an unmapped address, a trap and a failing device
assert, each in a process of its own (the context is lost after one), through
cubind.bindings and cubind.core. The sync reports the fault's error (a status
for cubind.bindings, a CUDAError naming it for cubind.core), later calls
report the same error, and the objects made before the fault are released
without a crash. docs/faults.md describes the behaviour.
"""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "_fault_scenarios.py")
BAD_SIGNS = ["Fatal Python error", "Exception ignored", "Segmentation fault", "terminate called",
             "core dumped", "Traceback"]


@pytest.mark.parametrize("fault", ["illegal_address", "trap", "assert"])
@pytest.mark.parametrize("api", ["bindings", "core"])
def test_a_fault_is_reported_sticky_and_survived_at_exit(api, fault):
    try:
        result = subprocess.run([sys.executable, SCRIPT, api, fault], capture_output=True, text=True, cwd=HERE,
                                timeout=180)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{api} {fault}: still running after 180 s\nstdout:\n{e.stdout}\nstderr:\n{e.stderr}")
    report = f"{api} {fault}: exit {result.returncode}\nstdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-6000:]}"
    assert result.returncode == 0, report
    assert "# checked" in result.stdout, report
    for sign in BAD_SIGNS:
        assert sign not in result.stderr, report
