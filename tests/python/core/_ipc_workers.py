"""Process bodies for the IPC tests: multiprocessing's spawn start method
imports them by name in the child, so they live in a module, not a test.
Each reports through a Queue as ("ok", value) or ("error", type name, text),
so a failure in the child is a test failure with its reason, not a hang.
"""
import traceback


def _report(queue, body):
    try:
        queue.put(("ok", body()))
    except BaseException as error:  # the parent shows it
        queue.put(("error", type(error).__name__, f"{error}\n{traceback.format_exc()}"))


def read_descriptor(queue, handle):
    """The bytes behind an IPCAllocationHandle received at spawn time."""
    import os

    def body():
        return os.pread(int(handle), 64, 0)

    _report(queue, body)


def read_descriptor_from_queue(queue, inbox):
    """The bytes behind an IPCAllocationHandle received through a Queue
    after the process started."""
    import os

    def body():
        handle = inbox.get(timeout=60)
        return os.pread(int(handle), 64, 0), handle.uuid

    _report(queue, body)


def send_handle_and_exit(queue, path):
    """Puts an IPCAllocationHandle over a file in queue and exits: its
    receiver finds no sender to fetch the descriptor from."""
    import os
    import uuid

    from cubind.core import IPCAllocationHandle

    handle = IPCAllocationHandle._init(os.open(path, os.O_RDONLY), uuid.uuid4())
    queue.put(handle)
    queue.close()
    queue.join_thread()


def map_shared_objects(queue, mr, buffer, event):
    """With the stand-in driver: what the consumer sees of a pool, a buffer
    and an event sent as Process arguments."""

    def body():
        from cubind.core import DeviceMemoryResource

        return {
            "mapped": mr.is_mapped,
            "registered": DeviceMemoryResource.from_registry(mr.uuid) is mr,
            "same_pool": buffer.memory_resource is mr,
            "handle": int(buffer.handle),
            "size": buffer.size,
            "buffer_mapped": buffer.is_mapped,
            "event_ipc": event.is_ipc_enabled,
        }

    _report(queue, body)


def produce_and_exit(queue, pinned):
    """Allocates from an IPC pool, sends the pool and a buffer through queue,
    and exits before anyone receives them."""
    from cubind.core import (
        Device,
        DeviceMemoryResource,
        DeviceMemoryResourceOptions,
        PinnedMemoryResource,
        PinnedMemoryResourceOptions,
    )

    device = Device(0)
    device.set_current()
    stream = device.create_stream()
    if pinned:
        mr = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))
    else:
        mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(ipc_enabled=True))
    buffer = mr.allocate(4096, stream=stream)
    stream.sync()
    queue.put((mr, buffer))
    queue.close()
    queue.join_thread()


# The kernel the GPU producer writes its pattern with.
FILL_SOURCE = r"""
extern "C" __global__ void fill(unsigned int* out, unsigned int seed, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = seed * 2654435761u + i;
}
"""


def expected_pattern(seed, n):
    return [(seed * 2654435761 + i) & 0xFFFFFFFF for i in range(n)]


def gpu_producer(queue, outbox, results, pinned, words, seed):
    """Allocates from an IPC pool, holds its stream behind a host callback
    until the consumer has the objects, writes the pattern with a kernel,
    records an IPC event, and waits for the consumer's verdict before it
    frees anything."""

    def body():
        import threading

        from cubind.core import (
            Device,
            DeviceMemoryResource,
            DeviceMemoryResourceOptions,
            EventOptions,
            LaunchConfig,
            PinnedMemoryResource,
            PinnedMemoryResourceOptions,
            Program,
            ProgramOptions,
            launch,
        )

        device = Device(0)
        device.set_current()
        stream = device.create_stream()
        if pinned:
            mr = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))
        else:
            mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(ipc_enabled=True))
        buffer = mr.allocate(4 * words, stream=stream)
        stream.sync()
        kernel = Program(FILL_SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("fill")
        ready = device.create_event(EventOptions(ipc_enabled=True))
        gate = threading.Event()
        # The kernel waits behind this callback until the consumer has the
        # objects, so the consumer's wait on the event is what orders its read.
        stream.launch_host_func(lambda: gate.wait(120))
        try:
            launch(stream, LaunchConfig(grid=(words + 255) // 256, block=256), kernel, buffer, seed, words)
            stream.record(ready)
            outbox.put((mr, buffer, ready))
            reply = results.get(timeout=120)
        finally:
            gate.set()
        # The consumer unmaps the buffer before the verdict; only then is it freed here.
        verdict = results.get(timeout=120)
        stream.sync()
        buffer.close(stream)
        stream.sync()
        return reply, verdict

    _report(queue, body)


def gpu_consumer(queue, inbox, results, words, seed):
    """Receives the pool, the buffer and the event, waits on the event on a
    stream of its own, copies the buffer out and checks every word."""

    def body():
        import struct

        from cubind.core import Device, LegacyPinnedMemoryResource

        device = Device(0)
        device.set_current()
        stream = device.create_stream()
        mr, buffer, ready = inbox.get(timeout=120)
        assert mr.is_mapped and buffer.is_mapped and ready.is_ipc_enabled
        results.put("received")
        stream.wait(ready)
        host = LegacyPinnedMemoryResource().allocate(4 * words, stream=stream)
        host.copy_from(buffer, stream=stream)
        stream.sync()
        seen = list(struct.unpack(f"<{words}I", bytes(memoryview(host))))
        good = seen == expected_pattern(seed, words)
        buffer.close(stream)
        stream.sync()
        results.put("match" if good else "mismatch")
        return good

    _report(queue, body)
