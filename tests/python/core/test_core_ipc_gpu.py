"""IPC on a GPU between processes started with multiprocessing's spawn: a
producer allocates from an IPC-enabled pool (device or pinned host), writes
a pattern with a kernel held back by one that waits for a flag, and
records an IPC event; a consumer receives the pool, the buffer and the event
through a Queue, waits on the event on its own stream, and checks every word.
A consumer that outlives its producer gets a clear error. Every join has a
timeout, so a hang fails the test instead of the suite."""
import multiprocessing
import os
import sys

import pytest

from cubind.core import Device, DeviceMemoryResource, DeviceMemoryResourceOptions

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _ipc_workers  # noqa: E402

pytestmark = pytest.mark.gpu

TIMEOUT = _ipc_workers.WAIT + 30
POSIX_FD = 1  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR


def skip_unless_shareable(pinned):
    props = Device(0).properties
    if not props.memory_pools_supported or not props.mempool_supported_handle_types & POSIX_FD:
        pytest.skip("the device's pools cannot be exported as POSIX file descriptors")
    if pinned and (not props.host_numa_memory_pools_supported or props.host_numa_id < 0):
        pytest.skip("the device has no host NUMA node with memory pools, which a shared pinned pool needs")


def report_of(process, queue, name):
    try:
        report = queue.get(timeout=TIMEOUT)
    except Exception:
        report = ("error", "Timeout", f"no report from the {name} in {TIMEOUT} s (exit code {process.exitcode})")
    process.join(TIMEOUT)
    if process.is_alive():
        process.kill()
        process.join(10)
        pytest.fail(f"the {name} process did not exit in time")
    return report


@pytest.mark.parametrize("pinned", [False, True], ids=["device_pool", "pinned_pool"])
def test_a_consumer_reads_what_the_producer_wrote_after_its_event(pinned):
    skip_unless_shareable(pinned)
    ctx = multiprocessing.get_context("spawn")
    producer_report, consumer_report = ctx.Queue(), ctx.Queue()
    inbox, results = ctx.Queue(), ctx.Queue()
    words, seed = 1 << 16, 7
    producer = ctx.Process(target=_ipc_workers.gpu_producer,
                           args=(producer_report, inbox, results, pinned, words, seed))
    consumer = ctx.Process(target=_ipc_workers.gpu_consumer,
                           args=(consumer_report, inbox, results, words, seed))
    producer.start()
    consumer.start()
    consumed = report_of(consumer, consumer_report, "consumer")
    produced = report_of(producer, producer_report, "producer")
    assert consumed[0] == "ok", f"the consumer raised {consumed[1]}: {consumed[2]}"
    assert consumed[1] is True, "the consumer saw other values than the producer's kernel wrote"
    assert produced[0] == "ok", f"the producer raised {produced[1]}: {produced[2]}"
    assert produced[1] == ("received", "match", "held until received")


@pytest.mark.parametrize("pinned", [False, True], ids=["device_pool", "pinned_pool"])
def test_a_consumer_whose_producer_has_exited_gets_a_clear_error(pinned):
    skip_unless_shareable(pinned)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    producer = ctx.Process(target=_ipc_workers.produce_and_exit, args=(queue, pinned))
    producer.start()
    producer.join(TIMEOUT)
    if producer.is_alive():
        producer.kill()
        pytest.fail("the producer did not exit in time")
    assert producer.exitcode == 0
    with pytest.raises(RuntimeError, match="has probably exited"):
        queue.get(timeout=TIMEOUT)


@pytest.mark.parametrize("blocking", [False, True])
def test_an_ipc_event_sent_after_the_start_reports_its_properties_back(blocking):
    from cubind.core import EventOptions

    device = Device(0)
    device.set_current()
    stream = device.create_stream()
    ctx = multiprocessing.get_context("spawn")
    inbox, outbox = ctx.Queue(), ctx.Queue()
    process = ctx.Process(target=_ipc_workers.event_properties, args=(inbox, outbox))
    process.start()
    event = stream.record(options=EventOptions(ipc_enabled=True, blocking_sync=blocking))
    inbox.put(event)
    report = report_of(process, outbox, "consumer")
    assert report[0] == "ok", f"the consumer raised {report[1]}: {report[2]}"
    assert report[1] == (event.ipc_descriptor, True, False, blocking, None, None)
    stream.sync()
    stream.close()


def test_a_pool_cannot_map_its_own_buffers_and_a_mapped_pool_cannot_allocate():
    skip_unless_shareable(False)
    device = Device(0)
    device.set_current()
    stream = device.create_stream()
    mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(ipc_enabled=True))
    buffer = mr.allocate(4096, stream=stream)
    descriptor = buffer.ipc_descriptor
    assert descriptor.size == 4096 and mr.allocation_handle.handle >= 0
    with pytest.raises(RuntimeError, match="was not imported"):
        type(buffer).from_ipc_descriptor(mr, descriptor, stream=stream)
    buffer.close()
    stream.sync()
    mr.close()


@pytest.mark.multi_gpu
def test_a_peer_devices_pool_buffer_and_event_arrive_in_the_receivers_context():
    skip_unless_shareable(False)
    ctx = multiprocessing.get_context("spawn")
    producer_report, consumer_report = ctx.Queue(), ctx.Queue()
    inbox, results = ctx.Queue(), ctx.Queue()
    producer = ctx.Process(target=_ipc_workers.peer_producer, args=(producer_report, inbox, results))
    consumer = ctx.Process(target=_ipc_workers.peer_consumer, args=(consumer_report, inbox, results))
    producer.start()
    consumer.start()
    consumed = report_of(consumer, consumer_report, "consumer")
    produced = report_of(producer, producer_report, "producer")
    assert consumed[0] == "ok", consumed
    assert produced[0] == "ok", produced
    current_after, refused = consumed[1]
    assert current_after == 0  # unpickling device 1's buffer left device 0 current
    assert "device 1 was current" in refused and "belongs to device 0" in refused, refused
