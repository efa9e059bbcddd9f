"""The process checkpoint_process.py checkpoints (also started by the GPU
tests): it keeps a buffer of known contents on the GPU, clears its host
copy, says "ready", and then, for each "check" line on its standard input,
copies the buffer back and answers "verified" or where it differs; "done" or
the end of its input ends it.

    python _checkpoint_child.py cuda.core     (or cubind.core)
"""
import ctypes
import importlib
import sys

N = 1 << 16


def expected(i: int) -> int:
    return (i * 2654435761) & 0xFFFFFFFF


def main(package: str) -> None:
    core = importlib.import_module(package)
    device = core.Device(0)
    device.set_current()
    stream = device.create_stream()
    pinned = core.LegacyPinnedMemoryResource().allocate(N * 4, stream=stream)
    host = (ctypes.c_uint32 * N).from_address(int(pinned.handle))
    for i in range(N):
        host[i] = expected(i)
    data = device.allocate(N * 4, stream=stream)
    data.copy_from(pinned, stream=stream)
    stream.sync()
    ctypes.memset(int(pinned.handle), 0, N * 4)
    print("ready", flush=True)
    for line in sys.stdin:  # one line per checkpoint cycle of the parent
        if line.strip() == "done":
            break
        data.copy_to(pinned, stream=stream)
        stream.sync()
        bad = [i for i in range(N) if host[i] != expected(i)]
        print("verified" if not bad else f"mismatch at {bad[:5]}", flush=True)
        ctypes.memset(int(pinned.handle), 0, N * 4)


if __name__ == "__main__":
    main(sys.argv[1])
