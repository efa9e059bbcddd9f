"""Process bodies for the IPC tests: multiprocessing's spawn start method
imports them by name in the child, so they live in a module, not a test.
Each reports through a Queue as ("ok", value) or ("error", type name, text),
so a failure in the child is a test failure with its reason, not a hang.
"""
import traceback

# Every wait in these workers gives up after WAIT seconds; the test waits a
# little longer for their reports.
WAIT = 60
STACKS_AFTER = 45


def _report(queue, body):
    import faulthandler
    import sys

    # A child still running after STACKS_AFTER seconds prints every thread's
    # stack to stderr (the test shows it): a hang reports where it is.
    faulthandler.dump_traceback_later(STACKS_AFTER, file=sys.stderr)
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


def event_properties(inbox, outbox):
    """What a consumer sees of an IPC event received through a queue after it
    started (as cuda.core's tests send one), sent back through another: the
    tuple must pickle, so an opened event's device and context are None."""
    from cubind.core import Device

    Device().set_current()

    def body():
        event = inbox.get(timeout=WAIT)
        return (event.ipc_descriptor, event.is_ipc_enabled, event.is_timing_enabled, event.is_blocking_sync,
                event.device, event.context)

    _report(outbox, body)


def _shared_allocation(pinned, size):
    """Device 0 made current, a stream, an IPC-enabled pool (pinned host
    memory or device memory) and a buffer of size bytes from it, allocated."""
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
    buffer = mr.allocate(size, stream=stream)
    stream.sync()
    return device, stream, mr, buffer


def produce_and_exit(queue, pinned):
    """Allocates from an IPC pool, sends the pool and a buffer through queue,
    and exits before anyone receives them."""
    _, _, mr, buffer = _shared_allocation(pinned, 4096)
    queue.put((mr, buffer))
    queue.close()
    queue.join_thread()


# The kernels of the GPU producer: fill writes its pattern; wait_flag holds
# the stream until the host sets a word of pinned memory (or a minute passes).
FILL_SOURCE = r"""
extern "C" __global__ void fill(unsigned int* out, unsigned int seed, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = seed * 2654435761u + i;
}

extern "C" __global__ void wait_flag(volatile unsigned int* flag, unsigned long long timeout_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        if (flag[0] != 0) { flag[1] = 1; return; }  // flag[1]: the flag was seen, not timed out
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < timeout_ns);
}
"""


def expected_pattern(seed, n):
    return [(seed * 2654435761 + i) & 0xFFFFFFFF for i in range(n)]


def gpu_producer(queue, outbox, results, pinned, words, seed):
    """Allocates from an IPC pool, holds its stream behind a kernel that
    waits for a flag in pinned memory until the consumer has the objects,
    writes the pattern with a kernel, records an IPC event, and waits for the
    consumer's verdict before it frees anything."""

    def body():
        from cubind.core import EventOptions, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch

        device, stream, mr, buffer = _shared_allocation(pinned, 4 * words)
        code = Program(FILL_SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin")
        ready = device.create_event(EventOptions(ipc_enabled=True))
        flag = LegacyPinnedMemoryResource().allocate(8, stream=stream)
        word = memoryview(flag).cast("B").cast("I")
        word[0] = word[1] = 0
        # The fill waits behind wait_flag until the consumer has the objects,
        # so the consumer's wait on the event is what orders its read.
        launch(stream, LaunchConfig(grid=1, block=1), code.get_kernel("wait_flag"), flag, WAIT * 10**9)
        try:
            launch(stream, LaunchConfig(grid=(words + 255) // 256, block=256), code.get_kernel("fill"),
                   buffer, seed, words)
            stream.record(ready)
            outbox.put((mr, buffer, ready))
            reply = results.get(timeout=WAIT)
        finally:
            word[0] = 1
        # The consumer unmaps the buffer before the verdict; only then is it freed here.
        verdict = results.get(timeout=WAIT)
        stream.sync()
        buffer.close(stream)
        stream.sync()
        held = word[1] == 1
        word.release()
        flag.close()
        return reply, verdict, "held until received" if held else "wait_flag timed out"

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
        mr, buffer, ready = inbox.get(timeout=WAIT)
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


def peer_producer(queue, outbox, results):
    """On device 1: an IPC pool, a buffer from it and an IPC event recorded
    after the allocation, sent to the consumer; frees once it is done."""

    def body():
        from cubind.core import Device, DeviceMemoryResource, DeviceMemoryResourceOptions, EventOptions

        device = Device(1)
        device.set_current()
        stream = device.create_stream()
        mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(ipc_enabled=True))
        buffer = mr.allocate(1 << 20, stream=stream)
        ready = stream.record(options=EventOptions(ipc_enabled=True))
        outbox.put((mr, buffer, ready))
        verdict = results.get(timeout=WAIT)
        stream.sync()
        buffer.close(stream)
        stream.sync()
        mr.close()
        return verdict

    _report(queue, body)


def peer_consumer(queue, inbox, results):
    """On device 0: receives device 1's pool, buffer and event. Unpickling
    leaves device 0 current, so the event opens in device 0's context and a
    stream of device 0 waits on it; an event opened while device 1 is
    current is refused by that stream with ValueError (the driver would
    crash)."""

    def body():
        from cubind.core import Device, Event

        device = Device(0)
        device.set_current()
        stream = device.create_stream()
        try:
            mr, buffer, ready = inbox.get(timeout=WAIT)
            current_after = Device().device_id
            stream.wait(ready)
            local = device.allocate(buffer.size, stream=stream)
            buffer.copy_to(local, stream=stream)
            stream.sync()
            Device(1).set_current()
            elsewhere = Event.from_ipc_descriptor(ready.ipc_descriptor)
            device.set_current()
            try:
                stream.wait(elsewhere)
                refused = "accepted"
            except ValueError as error:
                refused = str(error)
            local.close(stream)
            buffer.close(stream)
            stream.sync()
            return current_after, refused
        finally:
            results.put("done")

    _report(queue, body)
