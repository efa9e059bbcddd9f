"""Memory shared between two processes: a producer allocates from an
IPC-enabled memory pool, fills a buffer with a kernel and records an
IPC-enabled event; a consumer, started with multiprocessing's spawn, receives
the pool, the buffer and the event through a Queue, makes its stream wait on
the event and reads the buffer. The producer frees the memory only after the
consumer has let go of its mapping."""
import ctypes
import importlib
import multiprocessing
import os
import queue
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

SOURCE = r"""
extern "C" __global__ void fill(unsigned int* out, unsigned int seed, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = seed * 2654435761u + i;
}
"""

N = 1 << 20
SEED = 12345
TIMEOUT = 120


def consumer(core_name: str, inbox: Any, replies: Any) -> None:
    # The child imports the same package as its parent, by name.
    core = importlib.import_module(core_name)
    device = core.Device(0)
    device.set_current()
    stream = device.create_stream()
    mr, buffer, ready = inbox.get(timeout=TIMEOUT)  # unpickling maps the pool and the buffer
    mapped = mr.is_mapped and buffer.is_mapped
    stream.wait(ready)  # ordered after the producer's kernel, though it ran in another process
    host = core.LegacyPinnedMemoryResource().allocate(N * 4, stream=stream)
    buffer.copy_to(host, stream=stream)
    stream.sync()
    values = (ctypes.c_uint32 * N).from_address(int(host.handle))  # pinned memory, read in place
    ok = all(values[i] == (SEED * 2654435761 + i) & 0xFFFFFFFF for i in range(0, N, 997))
    buffer.close(stream)  # unmap here before the producer frees the memory
    stream.sync()
    host.close()
    replies.put((ok, mapped))


def main() -> int:
    from cuda.core import (
        Device, DeviceMemoryResource, DeviceMemoryResourceOptions, EventOptions, LaunchConfig, Program,
        ProgramOptions, launch,
    )

    device = device_or_exit(Device)
    if not device.properties.mempool_supported_handle_types & 1:  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        print("the device's memory pools cannot be shared as file descriptors; skipped")
        return 0
    core_name = ".".join(Device.__module__.split(".")[:2])
    kernel = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("fill")

    stream = device.create_stream()
    mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(ipc_enabled=True))
    buffer = mr.allocate(N * 4, stream=stream)
    launch(stream, LaunchConfig(grid=(N + 255) // 256, block=256), kernel, buffer, SEED, N)
    ready = stream.record(options=EventOptions(ipc_enabled=True))

    ctx = multiprocessing.get_context("spawn")
    inbox, replies = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=consumer, args=(core_name, inbox, replies))
    child.start()
    inbox.put((mr, buffer, ready))  # the pool travels as its file descriptor, the buffer and event as bytes
    answer = None
    for _ in range(TIMEOUT):  # a consumer that died is noticed within a second, not after the timeout
        try:
            answer = replies.get(timeout=1)
            break
        except queue.Empty:
            if not child.is_alive():
                break
    ok, mapped = answer if answer is not None else (False, False)
    if answer is None:
        print(f"no answer from the consumer (exit code {child.exitcode})")
    child.join(TIMEOUT)
    if child.is_alive():
        child.kill()
        ok = False
    ok = ok and mapped and child.exitcode == 0
    print(f"a buffer filled in one process, read in another after its IPC event: {'OK' if ok else 'FAILED'}")
    buffer.close(stream)
    stream.sync()
    mr.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
