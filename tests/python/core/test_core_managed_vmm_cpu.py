"""Managed memory, virtual memory and the batched operations without a GPU:
the option dataclasses and their checks, Host, and the argument errors that
fire before any driver call."""
import pickle

import pytest

import cubind.core as cb
import cubind.core.utils as utils
from cubind.core._memory._virtual_memory import _options_fields
from cubind.core._memory_options import _managed_location


class FakeStream:
    # A stream through __cuda_stream__: no driver is reached before the checks.
    def __cuda_stream__(self):
        return (0, 0x5000)


def buffers(*sizes):
    return [cb.Buffer.from_handle(0x10000 * (i + 1), size) for i, size in enumerate(sizes)]


def test_host_is_one_object_per_value_and_pickles():
    assert cb.Host() is cb.Host()
    assert cb.Host(numa_id=1) is cb.Host(1)
    assert cb.Host.numa_current() is cb.Host(is_numa_current=True)
    assert cb.Host.numa_current() is not cb.Host()
    for host in (cb.Host(), cb.Host(numa_id=3), cb.Host.numa_current()):
        assert pickle.loads(pickle.dumps(host)) is host
    assert cb.Host(numa_id=2).numa_id == 2 and not cb.Host(numa_id=2).is_numa_current
    assert repr(cb.Host(numa_id=2)) == "Host(numa_id=2)"
    assert cb.Host() != 0 and len({cb.Host(), cb.Host(), cb.Host(1)}) == 2
    with pytest.raises(ValueError, match="mutually exclusive"):
        cb.Host(1, is_numa_current=True)
    with pytest.raises(ValueError, match="non-negative int"):
        cb.Host(numa_id="0")


@pytest.mark.parametrize("location, kind, expected", [
    (None, None, (None, None)), (0, None, ("device", 0)), (-1, None, ("host", None)),
    (2, "device", ("device", 2)), (None, "host", ("host", None)), (1, "host_numa", ("host_numa", 1)),
    (None, "host_numa", ("host_numa", None)),
])
def test_managed_options_name_the_preferred_location(location, kind, expected):
    options = cb.ManagedMemoryResourceOptions(preferred_location=location, preferred_location_type=kind)
    assert _managed_location(options) == expected


@pytest.mark.parametrize("location, kind, error", [
    (-2, None, ValueError), (None, "device", ValueError), (-1, "device", ValueError), (0, "host", ValueError),
    (-3, "host_numa", ValueError), (0, "bogus", ValueError), ("0", None, TypeError), (True, None, TypeError),
])
def test_managed_options_refuse_bad_locations(location, kind, error):
    if isinstance(location, str):
        # A location that is not a number is refused when made, as in cuda.core.
        with pytest.raises(error, match="Expected int, got str: ManagedMemoryResourceOptions.preferred_location"):
            cb.ManagedMemoryResourceOptions(preferred_location=location, preferred_location_type=kind)
        return
    options = cb.ManagedMemoryResourceOptions(preferred_location=location, preferred_location_type=kind)
    with pytest.raises(error, match="preferred_location"):
        _managed_location(options)
    with pytest.raises(error, match="preferred_location"):
        cb.ManagedMemoryResource(options)


def test_managed_resource_refuses_other_options():
    with pytest.raises(TypeError, match="ManagedMemoryResourceOptions"):
        cb.ManagedMemoryResource("device")


def test_virtual_memory_options_convert_to_the_core_struct():
    # The fields of cubind::VirtualMemoryResourceOptions, in the driver's values.
    settings = _options_fields(cb.VirtualMemoryResourceOptions())
    assert settings == {"allocation_type": 1, "location_type": 1, "handle_type": 1, "granularity": 1,
                        "self_access": 3, "peer_access": 3, "gpu_direct_rdma": False, "addr_hint": 0,
                        "addr_align": 0, "peers": [], "location_id": 0}
    settings = _options_fields(cb.VirtualMemoryResourceOptions(
        allocation_type="managed", location_type="host_numa", handle_type=None, granularity="minimum",
        self_access="r", peer_access=None, peers=(1, 2), addr_align=1 << 21, addr_hint=None, gpu_direct_rdma=True))
    assert settings == {"allocation_type": 2, "location_type": 3, "handle_type": 0, "granularity": 0,
                        "self_access": 1, "peer_access": 0, "gpu_direct_rdma": True, "addr_hint": 0,
                        "addr_align": 1 << 21, "peers": [1, 2], "location_id": 0}


@pytest.mark.parametrize("field, value, message", [
    ("allocation_type", "bogus", "Unsupported allocation_type: 'bogus'"),
    ("location_type", "gpu", "Unsupported location_type: 'gpu'"),
    ("handle_type", "posix", "Unsupported handle_type: 'posix'"),
    ("granularity", 3, "Unsupported granularity: 3"),
    ("self_access", "w", "Unsupported access spec: 'w'"),
    ("addr_align", 3, "power of two"),
    ("addr_hint", -1, "addr_hint"),
    ("peers", ["x"], "peers"),
])
def test_virtual_memory_options_refuse_bad_values(field, value, message):
    config = cb.VirtualMemoryResourceOptions(**{field: value})
    with pytest.raises(ValueError, match=message):
        _options_fields(config)
    with pytest.raises(ValueError, match=message):
        cb.VirtualMemoryResource(0, config)


def test_virtual_memory_refuses_win32_and_other_configs():
    with pytest.raises(NotImplementedError):
        _options_fields(cb.VirtualMemoryResourceOptions(handle_type="win32"))
    with pytest.raises(TypeError, match="VirtualMemoryResourceOptions"):
        cb.VirtualMemoryResource(0, "device")


def test_copy_options_are_frozen_and_checked():
    options = utils.CopyOptions(src_access_order="during_api_call", overlap_mode="prefer_overlap_with_compute")
    assert options.src_access_order is utils.MemcpySrcAccessOrder.DURING_API_CALL
    assert options.overlap_mode is utils.MemcpyOverlapMode.PREFER_OVERLAP_WITH_COMPUTE
    assert options == utils.CopyOptions("during_api_call", None, None, "prefer_overlap_with_compute")
    with pytest.raises(Exception):
        options.overlap_mode = "default"
    with pytest.raises(ValueError, match="invalid src_access_order"):
        utils.CopyOptions(src_access_order="later")


def test_copy_batch_refuses_bad_arguments_before_the_driver():
    stream = FakeStream()
    with pytest.raises(TypeError, match="LEGACY_DEFAULT_STREAM"):
        utils.copy_batch(cb.LEGACY_DEFAULT_STREAM, buffers(8), buffers(8))
    with pytest.raises(TypeError, match="srcs must be a sequence"):
        utils.copy_batch(stream, buffers(8)[0], buffers(8))
    with pytest.raises(ValueError, match="2 sources for 1 destinations"):
        utils.copy_batch(stream, buffers(8, 8), buffers(8))
    with pytest.raises(ValueError, match="empty"):
        utils.copy_batch(stream, [], [])
    with pytest.raises(ValueError, match="copy 1: the source has 16 bytes, the destination 8"):
        utils.copy_batch(stream, buffers(8, 16), buffers(8, 8))
    with pytest.raises(ValueError, match="3 options for 2 copies"):
        utils.copy_batch(stream, buffers(8, 8), buffers(8, 8), options=[utils.CopyOptions()] * 3)
    with pytest.raises(TypeError, match=r"options\[0\] must be a CopyOptions"):
        utils.copy_batch(stream, buffers(8), buffers(8), options=["stream"])
    with pytest.raises(TypeError, match=r"srcs\[0\] must be a Buffer"):
        utils.copy_batch(stream, [1], buffers(8))
    with pytest.raises(TypeError, match="stream must be a Stream"):
        utils.copy_batch(object(), buffers(8), buffers(8))


@pytest.mark.parametrize("call", [
    lambda s, b: utils.prefetch_batch(s, b, cb.Host()),
    lambda s, b: utils.discard_batch(s, b),
    lambda s, b: utils.discard_prefetch_batch(s, b, cb.Host()),
])
def test_managed_batches_refuse_bad_buffers(call):
    stream = FakeStream()
    with pytest.raises(TypeError, match="buffers must be a sequence"):
        call(stream, buffers(8)[0])
    with pytest.raises(ValueError, match="buffers is empty"):
        call(stream, [])
    with pytest.raises(TypeError, match=r"buffers\[1\] must be a Buffer"):
        call(stream, buffers(8) + ["x"])
    closed = buffers(8)
    closed[0].close()
    with pytest.raises(RuntimeError, match="closed"):
        call(stream, closed)


def test_managed_batches_refuse_bad_locations():
    stream = FakeStream()
    with pytest.raises(ValueError, match="3 locations for 2 buffers"):
        utils.prefetch_batch(stream, buffers(8, 8), [cb.Host()] * 3)
    with pytest.raises(TypeError, match="locations must be a Device, a Host"):
        utils.discard_prefetch_batch(stream, buffers(8, 8), None)
    with pytest.raises(TypeError, match="location must be a Device, Host, or None; got int"):
        utils.prefetch_batch(stream, buffers(8, 8), [cb.Host(), 0])


def test_managed_buffer_from_handle_and_closed_checks():
    buffer = cb.ManagedBuffer.from_handle(0x20000, 64)
    assert isinstance(buffer, cb.ManagedBuffer) and isinstance(buffer, cb.Buffer)
    assert buffer.handle == 0x20000 and buffer.size == 64 and buffer.is_managed
    with pytest.raises(TypeError, match="location must be a Device, Host, or None; got str"):
        buffer.prefetch("host", stream=FakeStream())
    with pytest.raises(ValueError, match="location is required"):
        buffer.discard_prefetch(None, stream=FakeStream())
    with pytest.raises(TypeError, match="accessed_by entries must be Device or Host"):
        buffer.accessed_by = [0]
    buffer.close()
    for attempt in (lambda: buffer.read_mostly, lambda: buffer.preferred_location, lambda: buffer.accessed_by,
                    lambda: buffer.prefetch(cb.Host(), stream=FakeStream()),
                    lambda: buffer.discard(stream=FakeStream())):
        with pytest.raises(RuntimeError, match="closed"):
            attempt()
