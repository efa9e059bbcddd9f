"""Checkpointing a CUDA process from another: a child process holds a buffer
of known contents on the GPU; this process locks it, checkpoints its GPU
memory to host memory (the GPU is released), restores it and unlocks it,
reading its state after each step, and the child then checks its buffer.
Where the driver or the container refuses (no permission, no support), the
example says why and skips."""
import os
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import Device  # noqa: E402
from cuda.core.checkpoint import Process  # noqa: E402

CHILD = textwrap.dedent("""
    import ctypes, sys
    from cuda.core import Device, LegacyPinnedMemoryResource
    N = 1 << 16
    device = Device(0)
    device.set_current()
    stream = device.create_stream()
    pinned = LegacyPinnedMemoryResource().allocate(N * 4, stream=stream)
    host = (ctypes.c_uint32 * N).from_address(int(pinned.handle))
    for i in range(N):
        host[i] = i * 7 + 3
    data = device.allocate(N * 4, stream=stream)
    data.copy_from(pinned, stream=stream)
    stream.sync()
    ctypes.memset(int(pinned.handle), 0, N * 4)
    print("ready", flush=True)
    sys.stdin.readline()                       # the parent has restored us
    data.copy_to(pinned, stream=stream)
    stream.sync()
    print("verified" if all(host[i] == i * 7 + 3 for i in range(N)) else "corrupted", flush=True)
""")

device = device_or_exit(Device)
child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
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
    child.stdin.write("go\n")
    child.stdin.flush()
    answer = child.stdout.readline().strip()
    ok = states == ["running", "locked", "checkpointed", "locked", "running"] and answer == "verified"
    print(f"the child's buffer after checkpoint and restore: {answer}")
finally:
    if child.poll() is None:
        child.stdin.close()
        child.wait(timeout=60)
print("PASSED" if ok else "FAILED")
sys.exit(0 if ok else 1)
