"""Managed memory, virtual memory and batched copies on a GPU, checked by
value: host writes, prefetches and a kernel over managed memory; advice set
and read back; discards; a virtual memory buffer grown in place; copy_batch
and prefetch_batch."""
import ctypes

import pytest

from cubind.core import (
    Buffer,
    Host,
    LaunchConfig,
    LegacyPinnedMemoryResource,
    ManagedBuffer,
    ManagedMemoryResource,
    ManagedMemoryResourceOptions,
    Program,
    ProgramOptions,
    VirtualMemoryResource,
    VirtualMemoryResourceOptions,
    launch,
)
from cubind.core.utils import CopyOptions, copy_batch, discard_batch, discard_prefetch_batch, prefetch_batch

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void add_one(int* data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}
extern "C" __global__ void fill(int* out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}
"""


@pytest.fixture(scope="module")
def kernels(device):
    module = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin")
    return module.get_kernel("add_one"), module.get_kernel("fill")


def config(n):
    return LaunchConfig(grid=(n + 255) // 256, block=256)


def ints(buffer, n):
    return (ctypes.c_int * n).from_address(buffer.handle)


def numbered_buffers(mr, stream, count, n):
    """count managed buffers of n ints from mr, the j-th holding 1000 * j + i
    at i, written by the host once the allocations are done."""
    bufs = [mr.allocate(n * 4, stream=stream) for _ in range(count)]
    stream.sync()
    for j, b in enumerate(bufs):
        values = ints(b, n)
        for i in range(n):
            values[i] = 1000 * j + i
    return bufs


def needs_concurrent_managed_access(device):
    if not device.properties.concurrent_managed_access:
        pytest.skip("the device has no concurrent managed access")


def test_managed_memory_round_trip(device, kernels, stream):
    needs_concurrent_managed_access(device)
    add_one, _ = kernels
    n = 1 << 16
    mr = ManagedMemoryResource()
    assert mr.is_managed and mr.is_device_accessible and mr.is_host_accessible
    assert mr.preferred_location is None and mr.device_id == -1 and not mr.is_handle_owned
    buf = mr.allocate(n * 4, stream=stream)
    assert isinstance(buf, ManagedBuffer) and buf.is_managed
    stream.sync()
    values = ints(buf, n)
    for i in range(n):
        values[i] = 3 * i
    buf.prefetch(device, stream=stream)
    launch(stream, config(n), add_one, buf, n)
    buf.prefetch(Host(), stream=stream)
    stream.sync()
    assert all(values[i] == 3 * i + 1 for i in range(0, n, 7))
    buf.close(stream)


def test_managed_pool_of_its_own(device, kernels, stream):
    needs_concurrent_managed_access(device)
    _, fill = kernels
    mr = ManagedMemoryResource(ManagedMemoryResourceOptions(preferred_location=device.device_id))
    assert mr.is_handle_owned and mr.device_id == device.device_id
    assert mr.preferred_location == ("device", device.device_id)
    n = 4096
    buf = mr.allocate(n * 4, stream=stream)
    launch(stream, config(n), fill, buf, 10, n)
    stream.sync()
    assert list(ints(buf, n)[:5]) == [10, 11, 12, 13, 14]
    assert mr.attributes.used_mem_current >= n * 4
    buf.close(stream)
    stream.sync()
    mr.close()
    host_mr = ManagedMemoryResource(ManagedMemoryResourceOptions(preferred_location_type="host"))
    assert host_mr.preferred_location == ("host", None) and host_mr.device_id == -1
    host_mr.close()


def test_advice_is_set_and_read_back(device, stream):
    # On driver 580 cuMemAdvise refuses memory of a managed pool with
    # CUDA_ERROR_NOT_SUPPORTED (cuda.core alike); the advice is checked on
    # cuMemAllocManaged memory, wrapped as a ManagedBuffer.
    from cubind.bindings import driver

    err, ptr = driver.cuMemAllocManaged(1 << 21, driver.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL)
    assert err == driver.CUresult.CUDA_SUCCESS
    buf = ManagedBuffer.from_handle(int(ptr), 1 << 21)
    assert buf.read_mostly is False
    buf.read_mostly = True
    assert buf.read_mostly is True
    buf.read_mostly = False
    assert buf.read_mostly is False
    assert buf.preferred_location is None
    buf.preferred_location = device
    assert buf.preferred_location == device
    buf.preferred_location = Host()
    assert buf.preferred_location == Host()
    buf.preferred_location = None
    assert buf.preferred_location is None
    assert set(buf.accessed_by) == set()
    buf.accessed_by.add(device)
    assert device in buf.accessed_by and len(buf.accessed_by) == 1
    buf.accessed_by = {device, Host()}
    assert set(buf.accessed_by) == {device, Host()}
    buf.accessed_by.discard(Host())
    assert set(buf.accessed_by) == {device}
    buf.accessed_by = []
    assert len(buf.accessed_by) == 0
    buf.close(stream)
    assert driver.cuMemFree(ptr) == (driver.CUresult.CUDA_SUCCESS,)


@pytest.fixture
def own_pool(device, stream):
    """A managed pool of the test's own, destroyed after it. On driver
    580.159 (an H200) memory of a managed pool freed and allocated again kept
    its old contents on the device: the host's writes made after the
    allocation never reached a kernel (test_host_writes_to_reused_managed_memory_reach_the_device).
    The tests that write from the host take fresh memory."""
    mr = ManagedMemoryResource(ManagedMemoryResourceOptions(preferred_location=device.device_id))
    yield mr
    stream.sync()
    mr.close()


def test_discard_and_discard_prefetch(device, kernels, stream, own_pool):
    needs_concurrent_managed_access(device)
    _, fill = kernels
    n = 1 << 16
    mr = own_pool
    buf = mr.allocate(n * 4, stream=stream)
    launch(stream, config(n), fill, buf, 0, n)
    buf.discard(stream=stream)
    # Discarded contents are undefined; the memory is usable again once the
    # discard is done (see the next test for why the stream is synchronized).
    stream.sync()
    launch(stream, config(n), fill, buf, 5, n)
    buf.discard_prefetch(device, stream=stream)
    stream.sync()
    launch(stream, config(n), fill, buf, 7, n)
    buf.prefetch(Host(), stream=stream)
    stream.sync()
    assert ints(buf, n)[n - 1] == 7 + n - 1
    others = [mr.allocate(n * 4, stream=stream) for _ in range(2)]
    discard_batch(stream, [buf] + others)
    discard_prefetch_batch(stream, [buf] + others, [device, Host(), device])
    stream.sync()
    for b in [buf] + others:
        b.close(stream)


@pytest.mark.xfail(strict=False, reason="driver 580.159 on an H100: a kernel's writes queued right after "
                   "discard_prefetch on the same stream, with no synchronization between, read back wrong "
                   "(in memory the default pool handed out again)")
def test_writes_queued_right_after_a_discard_are_kept(device, kernels, stream, own_pool):
    needs_concurrent_managed_access(device)
    _, fill = kernels
    n = 1 << 16
    buf = own_pool.allocate(n * 4, stream=stream)
    launch(stream, config(n), fill, buf, 5, n)
    buf.discard_prefetch(device, stream=stream)
    launch(stream, config(n), fill, buf, 7, n)
    buf.prefetch(Host(), stream=stream)
    stream.sync()
    assert ints(buf, n)[n - 1] == 7 + n - 1
    buf.close(stream)


@pytest.mark.xfail(strict=False, reason="driver 580.159 on an H200: managed pool memory freed and allocated "
                   "again keeps the device's old copy; host writes after the allocation are lost (cuda.core alike)")
def test_host_writes_to_reused_managed_memory_reach_the_device(device, kernels, stream):
    # The default pool, as the other tests of this file leave it (they take
    # pools of their own from here on): memory a kernel filled, freed, and
    # handed out again, written by the host, then read by a kernel.
    needs_concurrent_managed_access(device)
    add_one, fill = kernels
    mr = ManagedMemoryResource()
    n = 1 << 16
    old = mr.allocate(n * 4, stream=stream)
    launch(stream, config(n), fill, old, 7, n)
    old.prefetch(Host(), stream=stream)
    old.close(stream)
    stream.sync()
    k = 4096
    bufs = numbered_buffers(mr, stream, 3, k)
    for b in bufs:
        b.prefetch(device, stream=stream)
        launch(stream, config(k), add_one, b, k)
        b.prefetch(Host(), stream=stream)
    stream.sync()
    wrong = sum(ints(b, k)[i] != 1000 * j + i + 1 for j, b in enumerate(bufs) for i in range(k))
    for b in bufs:
        b.close(stream)
    assert wrong == 0, f"{wrong} of {3 * k} values read back without the host's writes"


def test_prefetch_batch(device, kernels, stream, own_pool):
    needs_concurrent_managed_access(device)
    add_one, _ = kernels
    n = 4096
    bufs = numbered_buffers(own_pool, stream, 3, n)
    prefetch_batch(stream, bufs, device)
    for b in bufs:
        launch(stream, config(n), add_one, b, n)
    prefetch_batch(stream, bufs, [Host(), Host(), Host()])
    stream.sync()
    for k, b in enumerate(bufs):
        assert ints(b, n)[n - 1] == 1000 * k + n
        b.close(stream)


def test_virtual_memory_grows_keeping_its_contents(device, kernels, stream):
    if not device.properties.virtual_memory_management_supported:
        pytest.skip("the device has no virtual memory management")
    _, fill = kernels
    vmr = VirtualMemoryResource(device, VirtualMemoryResourceOptions(handle_type=None))
    assert vmr.device_id == device.device_id and vmr.is_device_accessible and not vmr.is_host_accessible
    buf = vmr.allocate(1000, stream=stream)
    granularity = buf.size
    assert granularity >= 1000 and granularity % 4096 == 0
    n = granularity // 4
    launch(stream, config(n), fill, buf, 100, n)
    stream.sync()
    grown = vmr.modify_allocation(buf, 3 * granularity)
    assert grown.size == 3 * granularity
    if grown is buf:
        assert grown.handle == buf.handle
    else:
        assert buf.is_closed
    # The new part is writable, the old part kept.
    second = LegacyPinnedMemoryResource().allocate(3 * granularity)
    tail = Buffer.from_handle(grown.handle + granularity, 2 * granularity)
    launch(stream, config(2 * n), fill, tail, 900000, 2 * n)
    grown.copy_to(second, stream=stream)
    stream.sync()
    values = ints(second, 3 * n)
    assert [values[i] for i in (0, 1, n - 1)] == [100, 101, 100 + n - 1]
    assert [values[i] for i in (n, n + 1, 3 * n - 1)] == [900000, 900001, 900000 + 2 * n - 1]
    # A smaller size changes nothing.
    assert vmr.modify_allocation(grown, granularity) is grown and grown.size == 3 * granularity
    second.close()
    grown.close(stream)
    assert grown.is_closed


def test_copy_batch_copies_every_pair(device, kernels, stream):
    _, fill = kernels
    sizes = [1024, 4096, 65536]
    srcs = [device.allocate(s * 4, stream=stream) for s in sizes]
    dsts = [device.allocate(s * 4, stream=stream) for s in sizes]
    for k, (b, s) in enumerate(zip(srcs, sizes)):
        launch(stream, config(s), fill, b, 10000 * k, s)
    copy_batch(stream, srcs, dsts)
    copy_batch(stream, dsts[:2], srcs[:2], options=[CopyOptions(), CopyOptions(overlap_mode="prefer_overlap_with_compute")])
    pinned = LegacyPinnedMemoryResource()
    hosts = [pinned.allocate(s * 4) for s in sizes]
    copy_batch(stream, dsts, hosts, options=CopyOptions(src_access_order="stream", dst_location_hint=Host()))
    stream.sync()
    for k, (h, s) in enumerate(zip(hosts, sizes)):
        values = ints(h, s)
        assert [values[0], values[s // 2], values[s - 1]] == [10000 * k, 10000 * k + s // 2, 10000 * k + s - 1]
    for b in srcs + dsts:
        b.close(stream)
    for h in hosts:
        h.close()
