"""cubind.core.checkpoint on a GPU: a child process holds a CUDA context and a
buffer of known contents; this process locks, checkpoints, restores and
unlocks it, reading its state back at each step, and the child then checks
its buffer. Where the driver or the container refuses (no permission to trace
the child, a platform without checkpointing), the test skips with the
driver's own error, after checking that the error is the clear one."""
import os
import subprocess
import sys

import pytest

from cubind.core import CUDAError, Device
from cubind.core.checkpoint import Process

pytestmark = pytest.mark.gpu

# The child process of examples/python/core/checkpoint_process.py, on cubind.core.
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "python", "core",
                     "_checkpoint_child.py")


@pytest.fixture
def child():
    proc = subprocess.Popen([sys.executable, CHILD, "cubind.core"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if line != "ready":
        proc.kill()
        pytest.fail(f"the child did not start: {line!r} {proc.stderr.read()[-2000:]}")
    yield proc
    if proc.poll() is None:
        try:
            proc.stdin.write("done\n")
            proc.stdin.flush()
            proc.wait(timeout=30)
        except Exception:
            proc.kill()
            proc.wait()


# What a driver answers where the container or platform forbids checkpointing:
# CUDA_ERROR_OPERATING_SYSTEM and CUDA_ERROR_NOT_PERMITTED (no right to trace
# the child). Not supported at all is RuntimeError. Any other error fails.
REFUSALS = (304, 800)


def _skip_if_refused(process, error):
    """The driver said no: check the error is the clear one, then skip with it."""
    text = str(error)
    assert f"Process(pid={process.pid})." in text, text
    if isinstance(error, CUDAError):
        if error.status not in REFUSALS:
            raise error
    else:
        assert text.startswith("CUDA checkpointing is not supported by the installed NVIDIA driver"), text
    pytest.skip(f"the driver refuses to checkpoint here: {text}")


def _cycle(proc, process, gpu_mapping=None):
    states = [process.state]
    process.lock(timeout_ms=30_000)
    states.append(process.state)
    tid = process.restore_thread_id
    assert os.path.isdir(f"/proc/{proc.pid}/task/{tid}"), f"restore thread {tid} is no thread of the child"
    process.checkpoint()
    states.append(process.state)
    process.restore(gpu_mapping)
    states.append(process.state)
    process.unlock()
    states.append(process.state)
    assert states == ["running", "locked", "checkpointed", "locked", "running"]
    proc.stdin.write("check\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "verified"


def test_a_checkpointed_process_gets_its_gpu_memory_back(child):
    process = Process(child.pid)
    try:
        assert process.state == "running"
        process.lock(timeout_ms=30_000)
    except (RuntimeError, CUDAError) as error:
        _skip_if_refused(process, error)
    try:
        process.checkpoint()
    except (RuntimeError, CUDAError) as error:
        process.unlock()
        _skip_if_refused(process, error)
    assert process.state == "checkpointed"
    process.restore()
    assert process.state == "locked"
    process.unlock()
    assert process.state == "running"
    child.stdin.write("check\n")
    child.stdin.flush()
    assert child.stdout.readline().strip() == "verified"

    # Again, each state read back, with the restore thread checked; then
    # once more onto the same GPUs named by UUID, where every GPU is visible.
    _cycle(child, process)
    if "CUDA_VISIBLE_DEVICES" not in os.environ:
        _cycle(child, process, {device.uuid: device.uuid for device in Device.get_all_devices()})


def test_a_process_without_cuda_is_refused_with_its_pid():
    # A process that never used CUDA cannot be locked: the driver says so,
    # and the error names the operation and the pid.
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises((CUDAError, RuntimeError)) as info:
            Process(sleeper.pid).lock()
        assert f"Process(pid={sleeper.pid}).lock: " in str(info.value)
    finally:
        sleeper.kill()
        sleeper.wait()
