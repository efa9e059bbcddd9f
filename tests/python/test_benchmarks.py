"""benchmarks/side_by_side.py's rows against the stand-in driver: each row
that can run without a GPU runs once, and those that cannot say why in
their cells, so the GPU machine's run (scripts/gpu_suite.sh bench) does not
meet a broken row first. The timings themselves are not checked here."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "benchmarks", "side_by_side.py")


def test_side_by_side_rows_run_on_the_stand_in_driver(fake_driver_dir, tmp_path):
    pytest.importorskip("Cython")
    pytest.importorskip("numpy")
    env = dict(os.environ, LD_LIBRARY_PATH=fake_driver_dir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    out = subprocess.run([sys.executable, SCRIPT, "--standin", "--json", str(tmp_path / "rows.json")],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, f"stdout:\n{out.stdout[-3000:]}\nstderr:\n{out.stderr[-3000:]}"
    table = out.stdout
    for row in ("launch, 0 arguments", "launch, 16 x np.int32", "launch, 16 x ctypes Structure",
                "launch, 64 mixed", "launch, 4 x int, LaunchConfig made per call", "Device(0)",
                "create_stream().close()", "create_event().close()", "allocate(4096).close(), DeviceMemoryResource",
                "cuDeviceGetAttribute", "cuLaunchKernel, 16 arguments, NumPy array of addresses"):
        line = next((l for l in table.splitlines() if l.startswith(f"| {row}")), None)
        assert line is not None, f"no row {row!r} in:\n{table}"
        cubind_cell = line.split("|")[3].strip()
        assert cubind_cell.endswith(("ns", "us")), (row, line)
    # The NVIDIA and C columns say why they are empty.
    assert "not run on the stand-in driver" in table
    assert table.rstrip().splitlines()[-1].startswith("goals:")
