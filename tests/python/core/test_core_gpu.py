"""cubind.core on a GPU: devices, contexts, streams, events, buffers, memory
resources, kernels and launch, each checked by value."""
import ctypes
import gc
import struct
import threading

import pytest

from cubind.core import (
    LEGACY_DEFAULT_STREAM,
    PER_THREAD_DEFAULT_STREAM,
    ComputeCapability,
    CUDAError,
    Device,
    DeviceMemoryResource,
    DeviceMemoryResourceOptions,
    EventOptions,
    Kernel,
    LaunchConfig,
    LegacyPinnedMemoryResource,
    PinnedMemoryResource,
    Program,
    ProgramOptions,
    StreamOptions,
    launch,
)

pytestmark = pytest.mark.gpu

N = 1000
BLOCK = 128
GRID = (N + BLOCK - 1) // BLOCK

SOURCE = r"""
struct Pair { int a; double b; };

extern "C" {
__global__ void empty() {}

__global__ void fill(int* out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}

__global__ void saxpy(float a, const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void widths(long long* out, char c, short s, int i, long long l, float f, double d, Pair p)
{
    out[0] = c; out[1] = s; out[2] = i; out[3] = l;
    out[4] = (long long)(f * 4); out[5] = (long long)(d * 4); out[6] = p.a; out[7] = (long long)(p.b * 4);
}

// 16 arguments in 31 slots: each 16-byte argument copied out.
__global__ void wide(double2* out, double2 a0, double2 a1, double2 a2, double2 a3, double2 a4, double2 a5,
                     double2 a6, double2 a7, double2 a8, double2 a9, double2 a10, double2 a11, double2 a12,
                     double2 a13, double2 a14)
{
    const double2 a[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    for (int i = 0; i < 15; ++i) out[i] = a[i];
}
}

template <typename T> __global__ void scale(T* data, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
"""


@pytest.fixture(scope="module")
def module(device):
    program = Program(SOURCE, "c++", ProgramOptions(arch="sm_" + device.arch))
    return program.compile("cubin", name_expressions=("scale<float>", "scale<int>"))


def read_ints(buffer, stream, count, fmt="i"):
    host = LegacyPinnedMemoryResource().allocate(buffer.size, stream=stream)
    buffer.copy_to(host, stream=stream)
    stream.sync()
    values = struct.unpack(f"{count}{fmt}", bytes(memoryview(host))[: count * struct.calcsize(fmt)])
    host.close()
    return values


def test_device_identity_and_properties(device):
    assert Device() is device
    assert Device(0) is device and Device(device) is device
    assert int(device) == device.device_id == 0
    assert isinstance(device.compute_capability, ComputeCapability)
    major, minor = device.compute_capability
    assert device.arch == f"{major}{minor}"
    assert device.properties.compute_capability_major == major
    assert device.properties.multiprocessor_count > 0
    assert isinstance(device.properties.unified_addressing, bool)
    assert device.name and len(device.uuid) == 36 and device.pci_bus_id.count(":") == 2
    assert len(Device.get_all_devices()) >= 1
    assert device.can_access_peer(device)
    with pytest.raises(ValueError, match="device_id must be within"):
        Device(len(Device.get_all_devices()))
    with pytest.raises(TypeError):
        Device("0")


def test_one_device_object_per_thread(device):
    seen = []
    t = threading.Thread(target=lambda: seen.append(Device(0)))
    t.start()
    t.join()
    assert seen[0] is not device and seen[0] == device


def test_context_is_the_primary_context(device):
    ctx = device.context
    assert ctx == device.context
    assert int(ctx.handle) != 0
    assert not ctx.is_green
    # As in cuda.core, a primary context makes no streams: the device does.
    with pytest.raises(RuntimeError, match="only supported on green contexts"):
        ctx.create_stream()
    s = device.create_stream()
    assert s.context == ctx
    s.close()


def test_device_as_context_manager_restores_the_previous_context(device):
    with device as entered:
        assert entered is device
        assert Device() is device


def test_stream_properties_and_options(device):
    s = device.create_stream(options=StreamOptions(nonblocking=False))
    assert not s.is_nonblocking
    s.close()
    s = device.create_stream(options={"priority": 0})
    assert s.is_nonblocking and s.priority == 0
    assert s.device is device
    protocol = s.__cuda_stream__()
    assert protocol == (0, int(s.handle))
    wrapped = device.create_stream(obj=s)
    assert wrapped == s
    wrapped.close()
    s.sync()
    s.close()
    with pytest.raises(ValueError, match="both"):
        device.create_stream(obj=s, options=StreamOptions())
    with pytest.raises(ValueError, match="priority"):
        device.create_stream(options=StreamOptions(priority=1000))


def test_default_streams(device):
    assert device.default_stream is LEGACY_DEFAULT_STREAM
    LEGACY_DEFAULT_STREAM.sync()
    PER_THREAD_DEFAULT_STREAM.sync()
    assert LEGACY_DEFAULT_STREAM.device is device


def test_events_time_and_order_work(device, module, stream):
    kernel = module.get_kernel("fill")
    out = device.allocate(4 * N, stream=stream)
    start = stream.record(options=EventOptions(timing_enabled=True))
    launch(stream, LaunchConfig(grid=GRID, block=BLOCK), kernel, out, 5, N)
    end = stream.record(options=EventOptions(timing_enabled=True))
    other = device.create_stream()
    other.wait(end)
    result = LegacyPinnedMemoryResource().allocate(4 * N, stream=other)
    out.copy_to(result, stream=other)
    other.sync()
    assert end.is_done and start.is_done
    elapsed = end - start
    assert isinstance(elapsed, float) and elapsed >= 0
    assert struct.unpack_from("3i", memoryview(result)) == (5, 6, 7)
    plain = device.create_event()
    assert not plain.is_timing_enabled
    stream.record(plain)
    plain.sync()
    with pytest.raises(RuntimeError, match="timing"):
        plain - start
    plain.close()
    assert plain.is_closed
    other.close()


def test_stream_waits_for_another_stream(device, module, stream):
    first = device.create_stream()
    out = device.allocate(4 * N, stream=first)
    launch(first, LaunchConfig(grid=GRID, block=BLOCK), module.get_kernel("fill"), out, 100, N)
    stream.wait(first)
    assert read_ints(out, stream, 2) == (100, 101)
    first.close()


def test_buffers_copy_and_fill(device, stream):
    a = device.allocate(64, stream=stream)
    assert a.size == 64 and a.device_id == 0 and a.is_device_accessible and not a.is_host_accessible
    assert a.memory_resource is device.memory_resource
    assert a.__dlpack_device__() == (2, 0)
    a.fill(7, stream=stream)
    assert read_ints(a, stream, 4, "B") == (7, 7, 7, 7)
    a.fill(ctypes.c_uint32(0x01020304), stream=stream)
    assert read_ints(a, stream, 2, "I") == (0x01020304, 0x01020304)
    b = a.copy_to(stream=stream)
    assert b.size == 64 and b != a
    assert read_ints(b, stream, 1, "I") == (0x01020304,)
    c = device.allocate(64, stream=stream)
    c.copy_from(b, stream=stream)
    assert read_ints(c, stream, 1, "I") == (0x01020304,)
    for buf in (a, b, c):
        buf.close(stream)
        assert buf.is_closed


def test_copies_with_copy_options_reach_the_destination(device, stream):
    from cubind.core.utils import CopyOptions

    a = device.allocate(64, stream=stream)
    a.fill(9, stream=stream)
    b = a.copy_to(stream=stream, options=CopyOptions(src_access_order="any"))
    assert read_ints(b, stream, 4, "B") == (9, 9, 9, 9)
    c = device.allocate(64, stream=stream)
    c.fill(0, stream=stream)
    c.copy_from(b, stream=stream, options=CopyOptions(overlap_mode="prefer_overlap_with_compute"))
    assert read_ints(c, stream, 4, "B") == (9, 9, 9, 9)
    for buf in (a, b, c):
        buf.close(stream)


def test_event_subtraction_explains_what_is_missing(device, module, stream):
    timed = EventOptions(timing_enabled=True)
    never = device.create_event(timed)
    start = stream.record(options=timed)
    stream.sync()
    with pytest.raises(RuntimeError, match="^Both Events must be recorded before they can be subtracted"):
        never - start
    with pytest.raises(RuntimeError, match="^Both Events must be created with timing enabled"):
        stream.record() - start
    with pytest.raises(TypeError):
        start - 1
    later = stream.record(options=timed)
    later.sync()
    later -= start
    assert isinstance(later, float) and later >= 0


def test_pinned_memory_is_host_accessible(device, stream):
    for mr in (PinnedMemoryResource(), LegacyPinnedMemoryResource()):
        buf = mr.allocate(16, stream=stream)
        stream.sync()  # a pool's allocation is stream-ordered: the host waits for it
        assert buf.is_host_accessible and buf.is_device_accessible and buf.device_id == -1
        memoryview(buf)[:4] = b"abcd"
        dev = device.allocate(16, stream=stream)
        dev.copy_from(buf, stream=stream)
        back = mr.allocate(16, stream=stream)
        back.copy_from(dev, stream=stream)
        stream.sync()
        assert bytes(memoryview(back)[:4]) == b"abcd"
        for b in (buf, dev, back):
            b.close()


def test_device_memory_resource_of_its_own_pool(device, stream):
    mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(max_size=1 << 24))
    assert mr.is_handle_owned and not mr.is_ipc_enabled and mr.device_id == 0
    buf = mr.allocate(4096, stream=stream)
    assert mr.attributes.used_mem_current >= 4096
    buf.close()
    stream.sync()
    assert set(mr.peer_accessible_by) == set()
    default = DeviceMemoryResource(0)
    assert not default.is_handle_owned
    device.memory_resource = mr
    try:
        assert device.allocate(8, stream=stream).memory_resource is mr
    finally:
        device.memory_resource = default
    with pytest.raises(TypeError):
        device.memory_resource = object()
    empty = mr.allocate(0, stream=stream)
    assert (empty.size, empty.handle, empty.device_id, empty.is_closed) == (0, 0, 0, False)
    assert empty.memory_resource is mr
    empty.close()
    assert empty.is_closed
    empty = device.allocate(0, stream=stream)
    assert empty.size == 0 and empty.device_id == device.device_id
    with pytest.raises(OverflowError, match="size is -1"):
        mr.allocate(-1, stream=stream)
    mr.close()
    with pytest.raises(RuntimeError, match="closed"):
        mr.handle
    with pytest.raises(RuntimeError, match="DeviceMemoryResource has been closed"):
        mr.allocate(8, stream=stream)


def test_kernel_introspection(module, device):
    kernel = module.get_kernel("saxpy")
    assert isinstance(kernel, Kernel)
    assert kernel.num_arguments == 4
    assert [p.size for p in kernel.arguments_info] == [4, 8, 8, 4]
    assert kernel.attributes.max_threads_per_block > 0
    assert kernel.attributes[device].num_regs >= 0
    assert kernel.occupancy.max_active_blocks_per_multiprocessor(128, 0) > 0
    suggestion = kernel.occupancy.max_potential_block_size(0, 0)
    assert suggestion.max_block_size > 0 and suggestion.min_grid_size > 0
    assert Kernel.from_handle(int(kernel.handle), module) == kernel
    with pytest.raises(ValueError, match="no kernel"):
        module.get_kernel("missing")


def test_saxpy_with_float_numpy_and_ctypes_scalars(device, module, stream):
    kernel = module.get_kernel("saxpy")
    x = device.allocate(4 * N, stream=stream)
    y = device.allocate(4 * N, stream=stream)
    host = LegacyPinnedMemoryResource().allocate(4 * N, stream=stream)
    struct.pack_into(f"{N}f", memoryview(host), 0, *[float(i) for i in range(N)])
    x.copy_from(host, stream=stream)
    y.fill(0, stream=stream)
    config = LaunchConfig(grid=GRID, block=BLOCK)
    launch(stream, config, kernel, 2.0, x, y, N)                     # float for a float: converted
    launch(stream, config, kernel, ctypes.c_float(1.0), x, y, ctypes.c_int(N))
    launch(stream, config, kernel, 0.5, x.handle, y, N)              # an int as a pointer
    y.copy_to(host, stream=stream)
    stream.sync()
    values = struct.unpack_from(f"{N}f", memoryview(host))
    assert values[:3] == (0.0, 3.5, 7.0)
    assert values[N - 1] == pytest.approx(3.5 * (N - 1))


def test_numpy_scalars(device, module, stream):
    np = pytest.importorskip("numpy")
    out = device.allocate(4 * N, stream=stream)
    launch(stream, LaunchConfig(grid=GRID, block=BLOCK), module.get_kernel("fill"), out, np.int32(9), np.int32(N))
    assert read_ints(out, stream, 2) == (9, 10)
    with pytest.raises(ValueError, match="argument 1 of kernel 'fill'.*differs in size"):
        launch(stream, LaunchConfig(grid=1, block=1), module.get_kernel("fill"), out, np.int64(9), N)


def test_every_width_and_a_struct_by_value(device, module, stream):
    out = device.allocate(8 * 8, stream=stream)
    pair = struct.pack("i4xd", 11, 2.5)
    launch(stream, LaunchConfig(grid=1, block=1), module.get_kernel("widths"),
           out, -3, -300, -70000, -(2**40), 1.25, 2.75, pair)
    assert read_ints(out, stream, 8, "q") == (-3, -300, -70000, -(2**40), 5, 11, 11, 10)


def test_every_width_from_numpy_and_ctypes_scalars_and_structs(device, module, stream):
    # The kinds launch packs in C (NumPy and ctypes scalars, a NumPy
    # structured scalar, a ctypes Structure), read back from the kernel.
    np = pytest.importorskip("numpy")

    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

    out = device.allocate(8 * 8, stream=stream)
    kernel = module.get_kernel("widths")
    pair_dtype = np.dtype([("a", "<i4"), ("b", "<f8")], align=True)
    forms = [
        (np.int8(-3), np.int16(-300), np.int32(-70000), np.int64(-(2**40)), np.float32(1.25), np.float64(2.75),
         np.array([(11, 2.5)], dtype=pair_dtype)[0]),
        (ctypes.c_int8(-3), ctypes.c_int16(-300), ctypes.c_int32(-70000), ctypes.c_int64(-(2**40)),
         ctypes.c_float(1.25), ctypes.c_double(2.75), Pair(11, 2.5)),
        (np.int8(-3), ctypes.c_int16(-300), -70000, np.int64(-(2**40)), ctypes.c_float(1.25), 2.75, Pair(11, 2.5)),
    ]
    for args in forms:
        out.fill(0, stream=stream)
        launch(stream, LaunchConfig(grid=1, block=1), kernel, out, *args)
        assert read_ints(out, stream, 8, "q") == (-3, -300, -70000, -(2**40), 5, 11, 11, 10), args


def test_sixteen_arguments_of_sixteen_bytes(device, module, stream):
    # NumPy complex128 scalars and structs of two doubles, launched twice
    # (the first launch of a kernel and the ones after it pack differently).
    np = pytest.importorskip("numpy")
    out = device.allocate(15 * 16, stream=stream)
    kernel = module.get_kernel("wide")
    two = np.dtype([("x", "<f8"), ("y", "<f8")])
    forms = [
        [np.complex128(i + 0.5 - 1j * i) for i in range(15)],
        [np.array([(i * 0.25, -i - 1.0)], dtype=two)[0] for i in range(15)],
    ]
    for args in forms:
        expected = tuple(v for a in args for v in (np.frombuffer(a.tobytes(), "<f8")))
        for _ in range(2):
            out.fill(0, stream=stream)
            launch(stream, LaunchConfig(grid=1, block=1), kernel, out, *args)
            assert read_ints(out, stream, 30, "d") == expected


def test_template_kernels_through_name_expressions(device, module, stream):
    data = device.allocate(4 * N, stream=stream)
    launch(stream, LaunchConfig(grid=GRID, block=BLOCK), module.get_kernel("fill"), data, 1, N)
    launch(stream, LaunchConfig(grid=GRID, block=BLOCK), module.get_kernel("scale<int>"), data, 3, N)
    assert read_ints(data, stream, 3) == (3, 6, 9)


def test_launch_errors_name_the_parameter(device, module, stream):
    fill = module.get_kernel("fill")
    out = device.allocate(16, stream=stream)
    config = LaunchConfig(grid=1, block=1)
    with pytest.raises(TypeError, match="takes 3 arguments, 2 given"):
        launch(stream, config, fill, out, 1)
    with pytest.raises(ValueError, match="argument 1 of kernel 'fill' \\(4-byte parameter\\) is out of range"):
        launch(stream, config, fill, out, 2**40, 1)
    with pytest.raises(ValueError, match="argument 4 of kernel 'widths' \\(8-byte parameter\\) is out of range"):
        launch(stream, config, module.get_kernel("widths"), out, 1, 1, 1, 2**64, 1.0, 1.0, b"x" * 16)
    with pytest.raises(TypeError, match="argument 1 of kernel 'widths' \\(1-byte parameter\\) cannot take a float"):
        launch(stream, config, module.get_kernel("widths"), out, 1.5, 1, 1, 1, 1.0, 1.0, b"x" * 16)
    with pytest.raises(TypeError, match="argument 0 of kernel 'fill' .*cannot take this type: str"):
        launch(stream, config, fill, "pointer", 1, 1)
    with pytest.raises(ValueError, match="argument 7 .*differs in size \\(3 bytes\\)"):
        launch(stream, config, module.get_kernel("widths"), out, 1, 1, 1, 1, 1.0, 1.0, b"abc")


CLUSTER_SOURCE = r"""
// out: the blocks that ran, then gridDim and the cluster's shape in blocks,
// as block (0, 0, 0) sees them.
extern "C" __global__ void shape(unsigned* out)
{
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        atomicAdd(&out[0], 1u);
        if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) {
            unsigned cx, cy, cz;
            asm("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(cx));
            asm("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(cy));
            asm("mov.u32 %0, %%cluster_nctaid.z;" : "=r"(cz));
            out[1] = gridDim.x; out[2] = gridDim.y; out[3] = gridDim.z;
            out[4] = cx; out[5] = cy; out[6] = cz;
        }
    }
}
"""


@pytest.mark.parametrize("grid, cluster", [(4, 2), ((3, 2), (2, 1)), ((2, 2, 2), (1, 2, 2)), ((2, 3, 1), 2)])
def test_cluster_launch_counts_the_grid_in_clusters(device, stream, grid, cluster):
    # As cuda.core's LaunchConfig: with a cluster, grid is the number of
    # clusters in each dimension, and each cluster has cluster blocks.
    if int(device.arch) < 90:
        pytest.skip(f"thread block clusters need sm_90; this device is sm_{device.arch}")
    kernel = Program(CLUSTER_SOURCE, "c++", ProgramOptions(arch="sm_" + device.arch)).compile("cubin").get_kernel("shape")
    config = LaunchConfig(grid=grid, cluster=cluster, block=32)
    clusters, blocks_per_cluster = config.grid, config.cluster
    out = device.allocate(7 * 4, stream=stream)
    out.fill(0, stream=stream)
    launch(stream, config, kernel, out)
    seen = read_ints(out, stream, 7)
    expected_grid = tuple(g * c for g, c in zip(clusters, blocks_per_cluster))
    assert seen[0] == expected_grid[0] * expected_grid[1] * expected_grid[2], seen
    assert tuple(seen[1:4]) == expected_grid, seen
    assert tuple(seen[4:7]) == blocks_per_cluster, seen


def test_launch_takes_a_foreign_stream(device, module, stream):
    class Foreign:
        def __cuda_stream__(self):
            return (0, int(stream.handle))

    out = device.allocate(4 * N, stream=stream)
    launch(Foreign(), LaunchConfig(grid=GRID, block=BLOCK), module.get_kernel("fill"), out, 2, N)
    assert read_ints(out, stream, 1) == (2,)


def test_ptx_and_cubin_from_files(device, tmp_path, stream):
    source = 'extern "C" __global__ void put(int* p) { *p = 77; }'
    for target in ("ptx", "cubin"):
        code = Program(source, "c++", ProgramOptions(arch="sm_" + device.arch)).compile(target)
        path = tmp_path / f"put.{target}"
        path.write_bytes(code.code)
        loaded = getattr(type(code), f"from_{target}")(str(path))
        out = device.allocate(4, stream=stream)
        launch(stream, LaunchConfig(grid=1, block=1), loaded.get_kernel("put"), out)
        assert read_ints(out, stream, 1) == (77,)


def test_dlpack_export_to_cupy_or_torch(device, stream):
    buffer = device.allocate(64, stream=stream)
    buffer.fill(5, stream=stream)
    stream.sync()
    assert buffer.__dlpack_device__() == (2, 0)
    try:
        import cupy

        array = cupy.from_dlpack(buffer)
        values = cupy.asnumpy(array)
    except ImportError:
        torch = pytest.importorskip("torch", reason="neither CuPy nor PyTorch is installed")
        values = torch.from_dlpack(buffer).cpu().numpy()
    assert values.shape == (64,) and str(values.dtype) == "int8" and (values == 5).all()


def test_host_callbacks_run_in_order_and_report_exceptions(device, stream, monkeypatch):
    ran = []
    reported = []
    monkeypatch.setattr("sys.unraisablehook", lambda info: reported.append(info.exc_value))
    for i in range(3):
        stream.launch_host_func(lambda i=i: ran.append(i))

    def fails():
        raise KeyError("from the callback")

    stream.launch_host_func(fails)
    stream.sync()
    assert ran == [0, 1, 2]
    assert len(reported) == 1 and isinstance(reported[0], KeyError)


def test_a_cuda_error_carries_the_status(device, stream):
    with pytest.raises(CUDAError) as caught:
        device.allocate(1 << 62, stream=stream)
    assert caught.value.error_name.startswith("CUDA_ERROR_")
    assert caught.value.api_function


def test_objects_closed_in_any_order(device, module):
    s = device.create_stream()
    buf = device.allocate(64, stream=s)
    ev = s.record()
    s.close()
    buf.close(LEGACY_DEFAULT_STREAM)
    ev.sync()
    ev.close()
    kernel = module.get_kernel("empty")
    del module
    launch(LEGACY_DEFAULT_STREAM, LaunchConfig(grid=1, block=1), kernel)
    LEGACY_DEFAULT_STREAM.sync()


@pytest.mark.multi_gpu
def test_peer_access_and_pool_access():
    a, b = Device(0), Device(1)
    if not a.can_access_peer(b):
        pytest.skip("devices 0 and 1 cannot access each other")
    a.enable_peer_access(b)
    a.enable_peer_access(b)
    mr = DeviceMemoryResource(a, DeviceMemoryResourceOptions())
    mr.peer_accessible_by.add(b)
    assert 1 in mr.peer_accessible_by and b in mr.peer_accessible_by
    # As in cuda.core: Device objects, whether Devices or ints were given.
    assert set(mr.peer_accessible_by) == {b} and list(mr.peer_accessible_by)[0] is b
    mr.peer_accessible_by = []
    assert 1 not in mr.peer_accessible_by
    mr.peer_accessible_by = [1]
    assert set(mr.peer_accessible_by) == {b}
    mr.peer_accessible_by.discard(b)
    assert set(mr.peer_accessible_by) == set()
    s = a.create_stream()
    src = mr.allocate(64, stream=s)
    src.fill(3, stream=s)
    # Device 1's pool allocates in stream order on device 0's stream, and a
    # copy between the two devices' buffers takes a stream of either.
    dst = b.allocate(64, stream=s)
    dst.copy_from(src, stream=s)
    s.sync()
    # Device 1's memory comes to the host on a stream of device 1.
    assert read_ints(dst, b.create_stream(), 1, "B") == (3,)
    a.disable_peer_access(b)


def test_a_buffer_outlives_the_stream_it_is_freed_on(device):
    # Closing a stream before the buffers that free on it: the buffers wait for
    # its queued work and free on the legacy stream instead of the destroyed one.
    stream = device.create_stream()
    pooled = device.allocate(1 << 20, stream=stream)
    pooled.fill(7, stream=stream)
    pinned = LegacyPinnedMemoryResource().allocate(4096, stream=stream)
    moved = device.allocate(4096, stream=device.default_stream)
    other = device.create_stream()
    moved.set_deallocation_stream(other)
    stream.close()
    other.close()
    del pooled, pinned
    gc.collect()
    moved.close()
    assert moved.is_closed
    # An explicit stream that was closed is still refused.
    again = device.allocate(16, stream=device.default_stream)
    with pytest.raises(RuntimeError, match="closed"):
        again.close(stream=stream)
    again.close()
    device.sync()
