"""IPC in cubind.core without a GPU: the option dataclasses, the descriptor
and handle classes (construction, pickling, file descriptor lifetime,
multiprocessing's passing of descriptors, a sender that has exited), and,
against the stand-in driver (tests/python/fake_driver), the whole path of a
pool, a buffer and an event from export to import, in one process and
across a spawned one, with the errors of non-IPC objects."""
import multiprocessing
import os
import pickle
import sys
import textwrap
import uuid

import pytest
from conftest import run_with_fake_driver

import cubind.core as cc
from cubind.core import (
    DeviceMemoryResourceOptions,
    EventOptions,
    IPCAllocationHandle,
    IPCBufferDescriptor,
    IPCEventDescriptor,
    PinnedMemoryResource,
    PinnedMemoryResourceOptions,
)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _ipc_workers  # noqa: E402

JOIN_TIMEOUT = 60


def spawn():
    return multiprocessing.get_context("spawn")


def finish(process, queue):
    """The child's report; a child that hangs or dies fails the test."""
    try:
        report = queue.get(timeout=JOIN_TIMEOUT)
    finally:
        process.join(JOIN_TIMEOUT)
        if process.is_alive():
            process.kill()
            process.join(5)
            pytest.fail("the child process did not finish in time")
    assert report[0] == "ok", f"the child raised {report[1]}: {report[2]}"
    return report[1]


# Options.

def test_option_dataclasses_have_cuda_core_fields_and_defaults():
    assert PinnedMemoryResourceOptions() == PinnedMemoryResourceOptions(ipc_enabled=False, max_size=0, numa_id=None)
    assert DeviceMemoryResourceOptions() == DeviceMemoryResourceOptions(ipc_enabled=False, max_size=0)
    assert EventOptions().ipc_enabled is False


def test_pinned_options_are_checked_before_any_cuda_call():
    with pytest.raises(ValueError, match="numa_id must be >= 0, got -1"):
        PinnedMemoryResource(PinnedMemoryResourceOptions(numa_id=-1))
    with pytest.raises(TypeError, match="Expected int, got str: PinnedMemoryResourceOptions.numa_id is '0'"):
        PinnedMemoryResourceOptions(numa_id="0")
    with pytest.raises(ValueError, match="max_size is -1"):
        PinnedMemoryResource({"max_size": -1})
    with pytest.raises(TypeError, match="PinnedMemoryResourceOptions, a dict or None"):
        PinnedMemoryResource(3)


def test_an_ipc_event_cannot_be_timed():
    with pytest.raises(TypeError, match="CU_EVENT_DISABLE_TIMING"):
        cc.Event._init(0, EventOptions(ipc_enabled=True, timing_enabled=True))


# The handle and descriptor classes.

def test_ipc_classes_are_made_only_by_the_api():
    for cls in (IPCAllocationHandle, IPCBufferDescriptor, IPCEventDescriptor):
        with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
            cls()


def test_allocation_handle_owns_and_closes_its_descriptor():
    read, write = os.pipe()
    os.close(write)
    key = uuid.uuid4()
    handle = IPCAllocationHandle._init(read, key)
    assert int(handle) == handle.handle == read and handle.uuid == key and not handle.is_closed
    handle.close()
    assert handle.is_closed and handle.handle == -1
    with pytest.raises(OSError):
        os.fstat(read)
    handle.close()  # twice is fine
    with pytest.raises(ValueError, match="has been closed"):
        int(handle)


def test_allocation_handle_closes_its_descriptor_when_collected():
    read, write = os.pipe()
    os.close(write)
    handle = IPCAllocationHandle._init(read, None)
    del handle
    with pytest.raises(OSError):
        os.fstat(read)


def test_allocation_handle_refuses_bad_descriptors():
    with pytest.raises(ValueError, match="negative"):
        IPCAllocationHandle._init(-1, None)
    with pytest.raises(TypeError, match="file descriptor"):
        IPCAllocationHandle._init("3", None)


def test_plain_pickle_cannot_carry_a_file_descriptor():
    read, write = os.pipe()
    os.close(write)
    handle = IPCAllocationHandle._init(read, None)
    with pytest.raises(TypeError, match="SCM_RIGHTS"):
        pickle.dumps(handle)
    handle.close()


def test_descriptors_are_plain_bytes_that_pickle_round_trip():
    payload = bytes(range(64))
    descriptor = IPCBufferDescriptor._init(payload, 4096)
    back = pickle.loads(pickle.dumps(descriptor))
    assert back == descriptor and back.size == 4096 and hash(back) == hash(descriptor)
    assert IPCBufferDescriptor._init(payload, 8) != descriptor
    event = IPCEventDescriptor._init(payload, True)
    assert pickle.loads(pickle.dumps(event)) == event
    assert IPCEventDescriptor._init(payload, False) == event  # blocking is not part of the identity
    with pytest.raises(ValueError, match="size must be an int >= 1"):
        IPCBufferDescriptor._init(payload, 0)
    with pytest.raises(TypeError, match="bytes"):
        IPCEventDescriptor._init("text", False)


# Descriptors through multiprocessing (spawn), no CUDA involved: an
# IPCAllocationHandle over an ordinary file.

@pytest.fixture
def shared_file(tmp_path):
    path = tmp_path / "pool"
    path.write_bytes(b"the pool's bytes".ljust(64, b"."))
    return str(path)


def test_a_handle_passed_at_spawn_reaches_the_child(shared_file):
    ctx = spawn()
    queue = ctx.Queue()
    handle = IPCAllocationHandle._init(os.open(shared_file, os.O_RDONLY), uuid.uuid4())
    process = ctx.Process(target=_ipc_workers.read_descriptor, args=(queue, handle))
    process.start()
    assert finish(process, queue) == open(shared_file, "rb").read()
    assert not handle.is_closed, "sending duplicates the descriptor; the sender keeps its own"
    os.fstat(handle.handle)
    handle.close()


def test_a_handle_sent_through_a_queue_reaches_a_running_child(shared_file):
    ctx = spawn()
    queue, inbox = ctx.Queue(), ctx.Queue()
    process = ctx.Process(target=_ipc_workers.read_descriptor_from_queue, args=(queue, inbox))
    process.start()
    key = uuid.uuid4()
    handle = IPCAllocationHandle._init(os.open(shared_file, os.O_RDONLY), key)
    inbox.put(handle)
    data, seen_key = finish(process, queue)
    assert data == open(shared_file, "rb").read() and seen_key == key
    handle.close()


def test_a_handle_whose_sender_has_exited_raises_a_clear_error(shared_file):
    ctx = spawn()
    queue = ctx.Queue()
    process = ctx.Process(target=_ipc_workers.send_handle_and_exit, args=(queue, shared_file))
    process.start()
    process.join(JOIN_TIMEOUT)
    assert process.exitcode == 0
    with pytest.raises(RuntimeError, match="has probably exited"):
        queue.get(timeout=JOIN_TIMEOUT)


# Against the stand-in driver.

PRELUDE = textwrap.dedent("""
    import ctypes, os, pickle, uuid
    import cubind.core as cc
    from cubind.core import (Buffer, DeviceMemoryResource, DeviceMemoryResourceOptions, EventOptions, Event,
                             IPCAllocationHandle, IPCBufferDescriptor, PinnedMemoryResource,
                             PinnedMemoryResourceOptions)
    fake = ctypes.CDLL("libcuda.so.1")
    dev = cc.Device(0)
    dev.set_current()
    stream = dev.create_stream()

    def expect(error, words, call):
        try:
            call()
        except error as e:
            assert words in str(e), f"{words!r} not in {e}"
        else:
            raise AssertionError(f"no {error.__name__} from {call}")
""")


def run(fake_driver_dir, body):
    run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


def test_a_resource_without_ipc_says_so_wherever_ipc_is_asked(fake_driver_dir):
    run(fake_driver_dir, """
        for mr in (DeviceMemoryResource(dev, DeviceMemoryResourceOptions()), DeviceMemoryResource(0),
                   PinnedMemoryResource(), PinnedMemoryResource(PinnedMemoryResourceOptions())):
            assert not mr.is_ipc_enabled and not mr.is_mapped and mr.uuid is None
            expect(RuntimeError, "not IPC-enabled", lambda: mr.allocation_handle)
            expect(RuntimeError, "not IPC-enabled", lambda: pickle.dumps(mr))
            expect(RuntimeError, "not IPC-enabled", lambda: mr.register(uuid.uuid4()))
            buffer = mr.allocate(64, stream=stream)
            expect(RuntimeError, "not IPC-enabled", lambda: buffer.ipc_descriptor)
            expect(RuntimeError, "not IPC-enabled", lambda: pickle.dumps(buffer))
            assert not buffer.is_mapped
            buffer.close()
        other = dev.allocate(64, stream=stream)  # the device's default pool
        expect(RuntimeError, "not IPC-enabled", lambda: other.ipc_descriptor)
        foreign = Buffer.from_handle(0x1000, 64)
        expect(RuntimeError, "not IPC-enabled", lambda: foreign.ipc_descriptor)
        expect(RuntimeError, "was not found", lambda: DeviceMemoryResource.from_registry(uuid.uuid4()))
        event = dev.create_event()
        assert not event.is_ipc_enabled
        expect(RuntimeError, "not IPC-enabled", lambda: event.ipc_descriptor)
        expect(RuntimeError, "not IPC-enabled", lambda: pickle.dumps(event))
        expect(TypeError, "IPCEventDescriptor", lambda: Event.from_ipc_descriptor(b"x" * 64))
    """)


def test_a_device_pool_and_its_buffer_go_out_and_come_back(fake_driver_dir):
    run(fake_driver_dir, """
        mr = DeviceMemoryResource(dev, DeviceMemoryResourceOptions(ipc_enabled=True))
        assert mr.is_ipc_enabled and not mr.is_mapped and mr.is_handle_owned
        handle = mr.allocation_handle
        assert isinstance(handle, IPCAllocationHandle) and handle is mr.allocation_handle
        assert isinstance(mr.uuid, uuid.UUID) and handle.uuid == mr.uuid and int(handle) >= 0
        buffer = mr.allocate(1024, stream=stream)
        descriptor = buffer.ipc_descriptor
        assert isinstance(descriptor, IPCBufferDescriptor) and descriptor.size == 1024
        assert buffer.ipc_descriptor is descriptor
        expect(RuntimeError, "was not imported", lambda: Buffer.from_ipc_descriptor(mr, descriptor, stream=stream))

        # The importing side (here the same process, against the stand-in).
        mapped = DeviceMemoryResource.from_allocation_handle(dev, handle)
        assert mapped is not mr and mapped.is_mapped and mapped.uuid == mr.uuid and mapped.device_id == 0
        assert DeviceMemoryResource.from_registry(mr.uuid) is mapped
        assert DeviceMemoryResource.from_allocation_handle(0, handle) is mapped, "the registry answers again"
        assert mapped.register(mr.uuid) is mapped
        expect(TypeError, "Cannot allocate from a mapped", lambda: mapped.allocate(64, stream=stream))
        live = ctypes.c_int.in_dll(fake, "fake_live_allocations").value
        imported = Buffer.from_ipc_descriptor(mapped, descriptor, stream=stream)
        assert imported.handle == buffer.handle and imported.size == 1024 and imported.is_mapped
        assert imported.memory_resource is mapped and imported.ipc_descriptor is descriptor
        imported.close()
        assert ctypes.c_int.in_dll(fake, "fake_live_allocations").value == live

        # Pickled buffers find their pool in the registry.
        again = pickle.loads(pickle.dumps(buffer))
        assert again.handle == buffer.handle and again.memory_resource is mapped and again.is_mapped
        again.close()
        assert pickle.loads(pickle.dumps(mapped)) is mapped

        # The descriptor's size is the sender's claim: never beyond the mapping.
        too_big = IPCBufferDescriptor._init(pickle.loads(pickle.dumps(descriptor)).__reduce__()[1][0], 8192)
        expect(ValueError, "exceeds", lambda: Buffer.from_ipc_descriptor(mapped, too_big, stream=stream))
        short = IPCBufferDescriptor._init(b"x" * 8, 64)
        expect(ValueError, "8 bytes", lambda: Buffer.from_ipc_descriptor(mapped, short, stream=stream))
        expect(TypeError, "IPCBufferDescriptor", lambda: Buffer.from_ipc_descriptor(mapped, b"x", stream=stream))
        expect(TypeError, "DeviceMemoryResource or PinnedMemoryResource",
               lambda: Buffer.from_ipc_descriptor(object(), descriptor, stream=stream))
        expect(TypeError, "IPCAllocationHandle or a file descriptor",
               lambda: DeviceMemoryResource.from_allocation_handle(0, "fd"))
        expect(TypeError, "not a PinnedMemoryResource", lambda: PinnedMemoryResource.from_registry(mr.uuid))

        # An int descriptor is duplicated: the caller's stays open, and no uuid comes with it.
        fd = os.dup(int(handle))
        by_int = DeviceMemoryResource.from_allocation_handle(0, fd)
        assert by_int.is_mapped and by_int.uuid is None and by_int.allocation_handle.handle != fd
        os.fstat(fd)
        os.close(fd)

        # Closing the exporter closes its handle.
        buffer.close()
        mr.close()
        assert mr.is_closed and handle.is_closed
        expect(RuntimeError, "closed", lambda: mr.allocation_handle)
    """)


def test_a_pinned_pool_is_a_pool_with_numa_placement_and_ipc(fake_driver_dir):
    run(fake_driver_dir, """
        current = PinnedMemoryResource()
        assert not current.is_handle_owned and current.numa_id == -1 and current.device_id == -1
        assert current.is_host_accessible and current.is_device_accessible
        assert current.attributes.used_mem_current == 0 and current.handle is not None
        own = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=1 << 20))
        assert own.is_handle_owned and own.numa_id == -1 and not own.is_ipc_enabled
        assert PinnedMemoryResource(PinnedMemoryResourceOptions(numa_id=3)).numa_id == 3
        ipc = PinnedMemoryResource({"ipc_enabled": True})
        assert ipc.numa_id == 1, "the stand-in device's host NUMA node"
        buffer = ipc.allocate(256, stream=stream)
        mapped = PinnedMemoryResource.from_allocation_handle(ipc.allocation_handle)
        assert mapped.is_mapped and PinnedMemoryResource.from_registry(ipc.uuid) is mapped
        imported = pickle.loads(pickle.dumps(buffer))
        assert imported.handle == buffer.handle and imported.memory_resource is mapped
        assert imported.is_host_accessible and imported.device_id == -1
        imported.close()
        buffer.close()
        own.close()
        assert own.is_closed
        expect(RuntimeError, "closed", lambda: own.allocate(8, stream=stream))
    """)


def test_an_ipc_event_goes_out_and_comes_back(fake_driver_dir):
    run(fake_driver_dir, """
        event = dev.create_event(EventOptions(ipc_enabled=True, blocking_sync=True))
        assert event.is_ipc_enabled and not event.is_timing_enabled
        descriptor = event.ipc_descriptor
        assert descriptor is event.ipc_descriptor
        opened = Event.from_ipc_descriptor(pickle.loads(pickle.dumps(descriptor)))
        assert opened.handle == event.handle and opened.is_ipc_enabled and opened.is_blocking_sync
        assert opened.ipc_descriptor == descriptor
        again = pickle.loads(pickle.dumps(event))
        assert again.handle == event.handle
        stream.wait(opened)
        recorded = stream.record(options=EventOptions(ipc_enabled=True))
        assert recorded.is_ipc_enabled and recorded.ipc_descriptor != descriptor
    """)


def test_objects_sent_to_a_spawned_process_arrive_mapped(fake_driver_dir):
    run(fake_driver_dir, f"""
        import multiprocessing, sys
        sys.path.insert(0, {HERE!r})
        import _ipc_workers
        ctx = multiprocessing.get_context("spawn")
        mr = DeviceMemoryResource(dev, DeviceMemoryResourceOptions(ipc_enabled=True))
        buffer = mr.allocate(2048, stream=stream)
        event = dev.create_event(EventOptions(ipc_enabled=True))
        queue = ctx.Queue()
        process = ctx.Process(target=_ipc_workers.map_shared_objects, args=(queue, mr, buffer, event))
        process.start()
        report = queue.get(timeout=60)
        process.join(60)
        assert not process.is_alive()
        assert report[0] == "ok", report
        seen = report[1]
        assert seen == {{"mapped": True, "registered": True, "same_pool": True, "handle": buffer.handle,
                         "size": 2048, "buffer_mapped": True, "event_ipc": True}}, seen
    """)


@pytest.mark.parametrize("blocking", [False, True])
def test_an_ipc_event_sent_after_the_start_reports_its_properties_back(fake_driver_dir, blocking):
    run(fake_driver_dir, f"""
        import multiprocessing, sys
        sys.path.insert(0, {HERE!r})
        import _ipc_workers
        ctx = multiprocessing.get_context("spawn")
        inbox, outbox = ctx.Queue(), ctx.Queue()
        process = ctx.Process(target=_ipc_workers.event_properties, args=(inbox, outbox))
        process.start()
        event = stream.record(options=EventOptions(ipc_enabled=True, blocking_sync={blocking}))
        inbox.put(event)
        report = outbox.get(timeout=60)
        process.join(60)
        assert not process.is_alive() and process.exitcode == 0
        assert report[0] == "ok", report
        assert report[1] == (event.ipc_descriptor, True, False, {blocking}, None, None), report[1]
    """)


@pytest.mark.parametrize("pinned", [False, True], ids=["device", "pinned"])
def test_a_consumer_whose_producer_has_exited_gets_a_clear_error(fake_driver_dir, pinned):
    run(fake_driver_dir, f"""
        import multiprocessing, sys
        sys.path.insert(0, {HERE!r})
        import _ipc_workers
        ctx = multiprocessing.get_context("spawn")
        queue = ctx.Queue()
        process = ctx.Process(target=_ipc_workers.produce_and_exit, args=(queue, {pinned!r}))
        process.start()
        process.join(60)
        assert process.exitcode == 0, process.exitcode
        expect(RuntimeError, "has probably exited", lambda: queue.get(timeout=60))
    """)
