"""Green contexts on a GPU: device 0's SMs split into two groups, a green
context on each with a stream, a kernel launched on both and checked by value,
and each context reporting the SMs its group had; then the context's life
(current, closed, outlived by its streams) and bad input."""
import gc
import struct
import weakref

import pytest

from cubind.core import (
    LEGACY_DEFAULT_STREAM,
    Context,
    ContextOptions,
    Device,
    DeviceResources,
    EventOptions,
    LaunchConfig,
    LegacyPinnedMemoryResource,
    Program,
    ProgramOptions,
    SMResource,
    SMResourceOptions,
    StreamOptions,
    launch,
)

pytestmark = pytest.mark.gpu

N = 4096
BLOCK = 128

SOURCE = r"""
extern "C" __global__ void fill(int* out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}
"""


@pytest.fixture(scope="module")
def kernel(device):
    return Program(SOURCE, "c++", ProgramOptions(arch="sm_" + device.arch)).compile("cubin").get_kernel("fill")


@pytest.fixture
def sm(device):
    return device.resources.sm


def half(sm):
    """The largest SM count two groups can each have, in whole steps of the
    minimum partition (rounded to the alignment), or skip."""
    alignment = max(sm.coscheduled_alignment, 1)
    step = -(-max(sm.min_partition_size, alignment) // alignment) * alignment
    count = sm.sm_count // 2 // step * step
    if count < sm.min_partition_size or count == 0:
        pytest.skip(f"{sm.sm_count} SMs are too few for two partitions")
    return count


def run_fill(device, kernel, stream, base):
    """Launches fill on stream into a new buffer and returns the values read back."""
    out = device.allocate(4 * N, stream=stream)
    launch(stream, LaunchConfig(grid=(N + BLOCK - 1) // BLOCK, block=BLOCK), kernel, out, base, N)
    host = LegacyPinnedMemoryResource().allocate(4 * N, stream=stream)
    out.copy_to(host, stream=stream)
    stream.sync()
    values = struct.unpack(f"{N}i", bytes(memoryview(host)))
    out.close(stream)
    host.close()
    stream.sync()
    return values


def test_the_devices_resources_are_all_its_sms(device, sm):
    assert isinstance(device.resources, DeviceResources)
    assert isinstance(sm, SMResource)
    assert sm.sm_count == device.properties.multiprocessor_count
    assert sm.min_partition_size > 0 and sm.coscheduled_alignment > 0
    assert sm.flags == 0
    assert isinstance(sm.handle, int) and sm.handle != 0
    assert device.context.resources.sm.sm_count == sm.sm_count
    stream = device.create_stream()
    assert stream.resources.sm.sm_count == sm.sm_count
    stream.close()
    assert LEGACY_DEFAULT_STREAM.resources.sm.sm_count == sm.sm_count
    with pytest.raises(NotImplementedError, match="CUDA 13.1"):
        device.resources.workqueue


def test_two_green_contexts_each_run_a_kernel_on_their_own_stream(device, kernel, sm):
    count = half(sm)
    groups, remainder = sm.split(SMResourceOptions(count=[count, count]))
    assert len(groups) == 2
    assert all(g.sm_count >= count for g in groups)
    assert sum(g.sm_count for g in groups) + remainder.sm_count == sm.sm_count
    contexts = [device.create_context(ContextOptions(resources=[g])) for g in groups]
    assert contexts[0] != contexts[1]
    for index, (group, ctx) in enumerate(zip(groups, contexts)):
        assert isinstance(ctx, Context) and ctx.is_green and not ctx.is_closed
        assert ctx.device is device
        assert ctx != device.context and int(ctx.handle) != 0
        assert ctx.resources.sm.sm_count == group.sm_count
        stream = ctx.create_stream()
        assert stream.context is ctx
        assert stream.device is device
        assert stream.is_nonblocking
        assert stream.resources.sm.sm_count == group.sm_count
        base = 1000 * (index + 1)
        assert run_fill(device, kernel, stream, base) == tuple(base + i for i in range(N))
        stream.close()
    for ctx in contexts:
        ctx.close()
        assert ctx.is_closed and ctx.handle is None and not ctx.is_green


def test_a_split_with_one_count_makes_one_group(device, sm):
    groups, remainder = sm.split(SMResourceOptions(count=sm.min_partition_size))
    assert len(groups) == 1 and groups[0].sm_count >= sm.min_partition_size
    assert groups[0].sm_count + remainder.sm_count == sm.sm_count
    groups, _ = sm.split({"count": None})
    assert len(groups) == 1 and groups[0].sm_count >= sm.min_partition_size
    ctx = device.create_context({"resources": groups})
    assert ctx.resources.sm.sm_count == groups[0].sm_count
    ctx.close()


def test_both_groups_may_make_one_context(device, sm):
    count = half(sm)
    groups, _ = sm.split(SMResourceOptions(count=(count, count)))
    ctx = device.create_context(ContextOptions(resources=groups))
    assert ctx.resources.sm.sm_count == sum(g.sm_count for g in groups)
    ctx.close()


def test_a_dry_run_describes_a_split_it_cannot_make_a_context_of(device, sm):
    groups, remainder = sm.split(SMResourceOptions(count=sm.min_partition_size), dry_run=True)
    assert groups[0].sm_count >= sm.min_partition_size
    with pytest.raises(ValueError, match="dry-run SMResource"):
        device.create_context(ContextOptions(resources=groups))


def test_bad_splits_name_the_count(sm):
    too_many = sm.sm_count + 1
    with pytest.raises(ValueError, match=f"count={too_many}.*sm_count {too_many} is more than"):
        sm.split(SMResourceOptions(count=too_many))
    with pytest.raises(ValueError, match="count=0.*sm_count is 0"):
        sm.split(SMResourceOptions(count=0))
    with pytest.raises(ValueError, match="SMs need"):
        sm.split(SMResourceOptions(count=[sm.min_partition_size] * (sm.sm_count // sm.min_partition_size + 1)))
    if sm.coscheduled_alignment > 1:
        misaligned = sm.min_partition_size + 1
        with pytest.raises(ValueError, match=f"sm_count {misaligned} is not a multiple"):
            sm.split(SMResourceOptions(count=misaligned))
    with pytest.raises(NotImplementedError, match="different sizes"):
        sm.split(SMResourceOptions(count=[8, 16]))
    with pytest.raises(TypeError, match="options is None"):
        sm.split(None)
    with pytest.raises(TypeError, match="SMResourceOptions"):
        sm.split(8)


def test_bad_contexts_name_what_is_wrong(device, sm):
    # As in cuda.core: a context that is not green is not implemented.
    with pytest.raises(NotImplementedError, match="options is None"):
        device.create_context()
    with pytest.raises(NotImplementedError, match="resources is None"):
        device.create_context(ContextOptions(resources=None))
    with pytest.raises(TypeError):
        device.create_context(object())
    with pytest.raises(TypeError, match="ContextOptions"):
        device.create_context(sm)
    with pytest.raises(ValueError, match="ContextOptions.resources is empty"):
        device.create_context(ContextOptions(resources=[]))
    with pytest.raises(TypeError, match="one SMResource; pass a sequence"):
        device.create_context(ContextOptions(resources=sm))
    with pytest.raises(TypeError, match=r"ContextOptions.resources\[0\] is a int"):
        device.create_context(ContextOptions(resources=[8]))


def test_a_green_context_made_current_is_given_back_and_cannot_close_while_current(device, sm):
    groups, _ = sm.split(SMResourceOptions())
    ctx = device.create_context(ContextOptions(resources=groups))
    previous = device.set_current(ctx)
    try:
        assert not previous.is_green and previous.handle is not None
        # As in cuda.core, the device's context is the one set current.
        assert device.context is ctx
        assert Device() is device
        with pytest.raises(RuntimeError, match="while it is current"):
            ctx.close()
        # The default stream is now the green context's.
        assert LEGACY_DEFAULT_STREAM.resources.sm.sm_count == groups[0].sm_count
    finally:
        assert device.set_current(previous) is ctx
    ctx.close()
    with pytest.raises(RuntimeError, match="Context has been closed"):
        ctx.resources
    with pytest.raises(RuntimeError, match="Context has been closed"):
        ctx.create_stream()
    with pytest.raises(RuntimeError, match="Context has been closed"):
        device.set_current(ctx)
    device.set_current()


def test_streams_and_events_made_while_a_green_context_is_current_are_its_own(device, kernel, sm):
    groups, _ = sm.split(SMResourceOptions())
    ctx = device.create_context(ContextOptions(resources=groups))
    previous = device.set_current(ctx)
    try:
        stream = device.create_stream()
        assert stream.context.is_green and stream.context == ctx
        assert stream.resources.sm.sm_count == groups[0].sm_count
        event = stream.record()
        assert event.context.is_green and event.context == ctx
        made = device.create_event(EventOptions(timing_enabled=True))
        assert made.context == ctx
        assert run_fill(device, kernel, stream, 11) == tuple(11 + i for i in range(N))
        stream.record(made)
        made.sync()
        assert event.is_done
    finally:
        device.set_current(previous)
    # Back on the primary context, new streams are the primary context's.
    plain = device.create_stream()
    assert not plain.context.is_green and device.context == previous
    for obj in (plain, made, event, stream, ctx):
        obj.close()


def test_streams_outlive_their_closed_context(device, kernel, sm):
    groups, _ = sm.split(SMResourceOptions())
    ctx = device.create_context(ContextOptions(resources=groups))
    stream = ctx.create_stream(StreamOptions(priority=0))
    assert stream.priority == 0
    ctx.close()
    # The green context lives as long as its stream.
    assert run_fill(device, kernel, stream, 7) == tuple(7 + i for i in range(N))
    assert stream.resources.sm.sm_count == groups[0].sm_count
    stream.close()


def test_events_of_a_green_stream_time_it_and_order_other_streams(device, kernel, sm):
    groups, _ = sm.split(SMResourceOptions())
    ctx = device.create_context(ContextOptions(resources=groups))
    stream = ctx.create_stream()
    out = device.allocate(4 * N, stream=stream)
    start = stream.record(options=EventOptions(timing_enabled=True))
    launch(stream, LaunchConfig(grid=(N + BLOCK - 1) // BLOCK, block=BLOCK), kernel, out, 3, N)
    end = stream.record(options=EventOptions(timing_enabled=True))
    # A stream of the primary context waits for the green one's work, then reads it.
    other = device.create_stream()
    other.wait(end)
    host = LegacyPinnedMemoryResource().allocate(4 * N, stream=other)
    out.copy_to(host, stream=other)
    other.sync()
    assert struct.unpack(f"{N}i", bytes(memoryview(host))) == tuple(3 + i for i in range(N))
    assert end.is_done and end - start >= 0
    other.wait(stream)
    out.close(other)
    host.close()
    other.sync()
    for obj in (start, end, other, stream, ctx):
        obj.close()


def test_green_streams_are_non_blocking(device, sm):
    groups, _ = sm.split(SMResourceOptions())
    ctx = device.create_context(ContextOptions(resources=groups))
    with pytest.raises(ValueError, match="nonblocking is False; green context streams must be non-blocking"):
        ctx.create_stream(StreamOptions(nonblocking=False))
    with pytest.raises(ValueError, match="priority 1000"):
        ctx.create_stream({"priority": 1000})
    ctx.close()


def test_a_green_context_lives_until_its_last_stream_and_object_are_gone(device, sm):
    groups, _ = sm.split(SMResourceOptions())
    ctx = device.create_context(ContextOptions(resources=groups))
    alive = weakref.ref(ctx)
    stream = ctx.create_stream()
    del ctx
    gc.collect()
    assert alive() is stream.context
    stream.sync()
    del stream
    gc.collect()
    assert alive() is None
