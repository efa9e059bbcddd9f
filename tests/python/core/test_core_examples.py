"""The cubind.core examples through their runner: each exits 0, on cubind.core
and, where it is installed, on cuda.core; without a GPU each says it skipped."""
import glob
import importlib.util
import os
import subprocess
import sys

import pytest

from conftest import GPU_COUNT

HERE = os.path.dirname(os.path.abspath(__file__))
FOLDER = os.path.normpath(os.path.join(HERE, "..", "..", "..", "examples", "python", "core"))
RUNNER = os.path.join(FOLDER, "run.py")
EXAMPLES = sorted(p for p in glob.glob(os.path.join(FOLDER, "[a-z]*.py")) if os.path.basename(p) != "run.py")
IMPLEMENTATIONS = ["cubind"] + (["cuda.core"] if importlib.util.find_spec("cuda.core") else [])


def test_there_are_examples():
    assert {os.path.basename(p) for p in EXAMPLES} >= {
        "vector_add.py", "saxpy.py", "load_from_disk.py", "stream_events.py", "lto.py", "graphs.py"}


def test_runner_swaps_only_the_cuda_core_import():
    spec = importlib.util.spec_from_file_location("core_example_runner", RUNNER)
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    for path in EXAMPLES:
        original = open(path).read()
        swapped = runner.source_for("cubind", path)
        assert "from cuda.core import" in original
        assert "cuda.core" not in swapped.replace("cubind.core", "")
        assert swapped.replace("cubind.core", "cuda.core") == original
        assert runner.source_for("cuda.core", path) == original


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@pytest.mark.parametrize("example", EXAMPLES, ids=os.path.basename)
def test_example_exits_zero(example, implementation):
    result = subprocess.run([sys.executable, RUNNER, implementation, example], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines, result.stderr
    if GPU_COUNT == 0:
        assert lines[-1].startswith("no GPU:") and lines[-1].endswith("; skipped")
    else:
        assert "FAILED" not in result.stdout
