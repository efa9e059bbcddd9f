"""Checkpointing a CUDA process from another: a child process holds a buffer
of known contents on the GPU; this process locks it, checkpoints its GPU
memory to host memory (the GPU is released), restores it and unlocks it,
reading its state after each step, and the child then checks its buffer.
Where the driver or the container refuses (no permission, no support), the
example says why and skips."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import Device  # noqa: E402
from cuda.core.checkpoint import Process  # noqa: E402

# The child runs the same package as this process (NVIDIA's, or the package
# that replaced it).
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_checkpoint_child.py")
PACKAGE = ".".join(Device.__module__.split(".")[:2])

device = device_or_exit(Device)
child = subprocess.Popen([sys.executable, CHILD, PACKAGE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
assert child.stdin is not None and child.stdout is not None  # both are pipes
ok = False
try:
    if child.stdout.readline().strip() != "ready":
        raise SystemExit("the child process did not start")
    process = Process(child.pid)
    states = [process.state]
    try:
        process.lock(timeout_ms=30_000)
    except Exception as error:  # RuntimeError (no support) or CUDAError (refused)
        print(f"checkpointing pid {child.pid} is refused here ({' '.join(str(error).split())}); skipped")
        sys.exit(0)
    states.append(process.state)
    try:
        process.checkpoint()
    except Exception as error:
        process.unlock()
        print(f"checkpointing pid {child.pid} is refused here ({' '.join(str(error).split())}); skipped")
        sys.exit(0)
    states.append(process.state)
    process.restore()
    states.append(process.state)
    process.unlock()
    states.append(process.state)
    print("states:", " -> ".join(states))
    child.stdin.write("check\n")
    child.stdin.flush()
    answer = child.stdout.readline().strip()
    ok = states == ["running", "locked", "checkpointed", "locked", "running"] and answer == "verified"
    print(f"the child's buffer after checkpoint and restore: {answer}")
finally:
    if child.poll() is None:
        child.stdin.close()  # the end of its input ends the child
        child.wait(timeout=60)
print("PASSED" if ok else "FAILED")
sys.exit(0 if ok else 1)
