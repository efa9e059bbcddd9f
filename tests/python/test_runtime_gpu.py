"""cubind.bindings.runtime on a GPU, alone and together with the driver bindings:
devices and properties, memory and copies (1D, 2D, 3D, async, pools), events,
callbacks, libraries and launches, stream capture, and runtime and driver
handles used across the two APIs. Values are read back, not only statuses.
"""
import ctypes
import os
import struct
import sys

import pytest
from conftest import outputs_of
from _kernels import BLOCK, GRID, N

pytestmark = pytest.mark.gpu

from cubind.bindings import driver, runtime  # noqa: E402

try:
    from cuda.bindings import runtime as cuda_runtime
except ImportError:  # pragma: no cover
    cuda_runtime = None

Err = runtime.cudaError_t
SUCCESS = Err.cudaSuccess
Kind = runtime.cudaMemcpyKind


def ok(result):
    return outputs_of(result, SUCCESS)


def dok(result):
    return outputs_of(result, driver.CUresult.CUDA_SUCCESS)


class Env:
    pass


@pytest.fixture(scope="module")
def env():
    e = Env()
    ok(runtime.cudaSetDevice(0))
    ok(runtime.cudaFree(0))  # initialises the primary context
    major = ok(runtime.cudaDeviceGetAttribute(runtime.cudaDeviceAttr.cudaDevAttrComputeCapabilityMajor, 0))
    minor = ok(runtime.cudaDeviceGetAttribute(runtime.cudaDeviceAttr.cudaDevAttrComputeCapabilityMinor, 0))
    e.arch = major * 10 + minor
    import _kernels
    e.cubin = _kernels.compile_source(e.arch, "cubin")
    e.library = ok(runtime.cudaLibraryLoadData(e.cubin, None, None, 0, None, None, 0))
    e.kernel = {name: ok(runtime.cudaLibraryGetKernel(e.library, name.encode()))
                for name in ("fill", "add", "touch", "spin")}
    yield e
    runtime.cudaDeviceSynchronize()
    runtime.cudaLibraryUnload(e.library)


@pytest.fixture(autouse=True)
def device(env):
    ok(runtime.cudaSetDevice(0))
    yield


@pytest.fixture
def stream(env):
    s = ok(runtime.cudaStreamCreateWithFlags(runtime.cudaStreamNonBlocking))
    yield s
    runtime.cudaStreamSynchronize(s)
    runtime.cudaStreamDestroy(s)


@pytest.fixture
def malloc(env):
    made = []

    def make(nbytes):
        ptr = ok(runtime.cudaMalloc(nbytes))
        made.append(ptr)
        return ptr

    yield make
    runtime.cudaDeviceSynchronize()
    for ptr in made:
        runtime.cudaFree(ptr)


def read_ints(ptr, count):
    buf = bytearray(4 * count)
    ok(runtime.cudaMemcpy(buf, ptr, len(buf), Kind.cudaMemcpyDeviceToHost))
    return list(struct.unpack(f"<{count}i", buf))


def launch(env, name, grid, block, args, stream=None):
    return runtime.cudaLaunchKernel(env.kernel[name], runtime.dim3(x=grid, y=1, z=1),
                                    runtime.dim3(x=block, y=1, z=1), args, 0, stream)


# ---------------------------------------------------------------------------
# Versions, devices, properties


def test_versions(env):
    rt = ok(runtime.cudaRuntimeGetVersion())
    drv = ok(runtime.cudaDriverGetVersion())
    assert rt >= 12000 and drv >= 12000
    assert drv == dok(driver.cuDriverGetVersion())


def test_device_count_matches(env):
    count = ok(runtime.cudaGetDeviceCount())
    assert count >= 1
    dok(driver.cuInit(0))
    assert count == dok(driver.cuDeviceGetCount())
    if cuda_runtime is not None:
        assert count == cuda_runtime.cudaGetDeviceCount()[1]
    assert ok(runtime.cudaGetDevice()) == 0


def test_device_properties(env):
    prop = ok(runtime.cudaGetDeviceProperties(0))
    assert isinstance(prop, runtime.cudaDeviceProp)
    name = bytes(prop.name).split(b"\0", 1)[0]
    dok(driver.cuInit(0))
    dev = dok(driver.cuDeviceGet(0))
    assert name == dok(driver.cuDeviceGetName(256, dev))
    assert prop.major * 10 + prop.minor == env.arch
    assert prop.totalGlobalMem == dok(driver.cuDeviceTotalMem(dev))
    assert prop.warpSize == 32
    assert prop.multiProcessorCount == ok(runtime.cudaDeviceGetAttribute(
        runtime.cudaDeviceAttr.cudaDevAttrMultiProcessorCount, 0))
    assert list(prop.maxThreadsDim)[0] >= 1024
    assert bytes(prop.uuid.bytes) == bytes(dok(driver.cuDeviceGetUuid(dev)).bytes)
    if cuda_runtime is not None:
        theirs = cuda_runtime.cudaGetDeviceProperties(0)[1]
        assert name == theirs.name.split(b"\0", 1)[0]
        assert prop.multiProcessorCount == theirs.multiProcessorCount
        assert prop.totalGlobalMem == theirs.totalGlobalMem
        assert bytes(prop.uuid.bytes) == bytes(theirs.uuid.bytes)
    bus = ok(runtime.cudaDeviceGetPCIBusId(64, 0))
    assert ok(runtime.cudaDeviceGetByPCIBusId(bus)) == 0


def test_invalid_device_is_a_status(env):
    count = ok(runtime.cudaGetDeviceCount())
    assert runtime.cudaSetDevice(count)[0] is Err.cudaErrorInvalidDevice
    status, value = runtime.cudaDeviceGetAttribute(runtime.cudaDeviceAttr.cudaDevAttrWarpSize, count)
    assert status is Err.cudaErrorInvalidDevice and value is None
    # The sticky last error is reset by cudaGetLastError.
    runtime.cudaGetLastError()
    assert runtime.cudaGetLastError() == (SUCCESS,)


def test_error_strings(env):
    assert runtime.cudaGetErrorName(Err.cudaErrorInvalidValue) == (SUCCESS, b"cudaErrorInvalidValue")
    assert ok(runtime.cudaGetErrorString(Err.cudaErrorMemoryAllocation)) == b"out of memory"
    if cuda_runtime is not None:
        theirs = cuda_runtime.cudaGetErrorString(cuda_runtime.cudaError_t.cudaErrorNotReady)[1]
        assert ok(runtime.cudaGetErrorString(Err.cudaErrorNotReady)) == theirs


# ---------------------------------------------------------------------------
# Memory


def test_malloc_memcpy_memset(env, malloc):
    n = 4096
    ptr = malloc(n)
    assert isinstance(ptr, int) and ptr != 0
    data = os.urandom(n)
    ok(runtime.cudaMemcpy(ptr, data, n, Kind.cudaMemcpyHostToDevice))
    back = bytearray(n)
    ok(runtime.cudaMemcpy(back, ptr, n, Kind.cudaMemcpyDeviceToHost))
    assert back == data
    ok(runtime.cudaMemset(ptr, 0x5A, n))
    ok(runtime.cudaMemcpy(back, ptr, n, Kind.cudaMemcpyDefault))
    assert back == b"\x5a" * n
    other = malloc(n)
    ok(runtime.cudaMemcpy(other, ptr, n, Kind.cudaMemcpyDeviceToDevice))
    assert read_ints(other, 1) == [0x5A5A5A5A]
    free, total = ok(runtime.cudaMemGetInfo())
    assert 0 < free <= total


def test_copy_errors_are_statuses(env, malloc):
    ptr = malloc(64)
    status, = runtime.cudaMemcpy(ptr, ptr, 64, 12345)
    assert status is Err.cudaErrorInvalidMemcpyDirection
    runtime.cudaGetLastError()
    status, = runtime.cudaFree(0x10)
    assert status is not SUCCESS
    runtime.cudaGetLastError()


def test_pointer_attributes(env, malloc):
    ptr = malloc(256)
    attrs = ok(runtime.cudaPointerGetAttributes(ptr))
    assert isinstance(attrs, runtime.cudaPointerAttributes)
    assert attrs.type is runtime.cudaMemoryType.cudaMemoryTypeDevice
    assert attrs.device == 0
    assert attrs.devicePointer == ptr
    host = ok(runtime.cudaMallocHost(256))
    try:
        attrs = ok(runtime.cudaPointerGetAttributes(host))
        assert attrs.type is runtime.cudaMemoryType.cudaMemoryTypeHost
        assert attrs.hostPointer == host
    finally:
        ok(runtime.cudaFreeHost(host))
    # Ordinary host memory is unregistered.
    buf = bytearray(64)
    attrs = ok(runtime.cudaPointerGetAttributes(buf))
    assert attrs.type is runtime.cudaMemoryType.cudaMemoryTypeUnregistered


def test_memcpy_2d(env):
    width, height, src_pitch = 40, 6, 64
    src = bytearray(src_pitch * height)
    for row in range(height):
        src[row * src_pitch:row * src_pitch + width] = bytes([row + 1]) * width
    ptr, pitch = ok(runtime.cudaMallocPitch(width, height))
    try:
        assert pitch >= width
        ok(runtime.cudaMemcpy2D(ptr, pitch, src, src_pitch, width, height, Kind.cudaMemcpyHostToDevice))
        dst = bytearray(b"\xee" * (width * height))
        ok(runtime.cudaMemcpy2D(dst, width, ptr, pitch, width, height, Kind.cudaMemcpyDeviceToHost))
        assert dst == b"".join(bytes([row + 1]) * width for row in range(height))
    finally:
        ok(runtime.cudaFree(ptr))


def test_memcpy_3d(env):
    width, height, depth = 16, 4, 3
    extent = runtime.cudaExtent(width=width, height=height, depth=depth)
    pitched = ok(runtime.cudaMalloc3D(extent))
    assert isinstance(pitched, runtime.cudaPitchedPtr)
    assert pitched.pitch >= width and pitched.ptr != 0
    try:
        src = bytes((i * 5) & 0xFF for i in range(width * height * depth))
        host = ctypes.create_string_buffer(src, len(src))
        up = runtime.cudaMemcpy3DParms()
        up.srcPtr = runtime.cudaPitchedPtr(ptr=ctypes.addressof(host), pitch=width, xsize=width, ysize=height)
        up.dstPtr = pitched
        up.extent = extent
        up.kind = Kind.cudaMemcpyHostToDevice
        assert up.dstPtr.ptr == pitched.ptr and up.extent.depth == depth
        ok(runtime.cudaMemcpy3D(up))
        back = ctypes.create_string_buffer(len(src))
        down = runtime.cudaMemcpy3DParms()
        down.srcPtr = pitched
        down.dstPtr.ptr = ctypes.addressof(back)
        down.dstPtr.pitch, down.dstPtr.xsize, down.dstPtr.ysize = width, width, height
        down.extent.width, down.extent.height, down.extent.depth = width, height, depth
        down.kind = Kind.cudaMemcpyDeviceToHost
        ok(runtime.cudaMemcpy3D(down))
        assert back.raw == src
    finally:
        ok(runtime.cudaFree(pitched.ptr))


def test_async_copy_on_stream(env, malloc, stream):
    n = 1 << 16
    data = os.urandom(n)
    host = ok(runtime.cudaMallocHost(n))
    host2 = ok(runtime.cudaHostAlloc(n, 0))
    try:
        ctypes.memmove(host, data, n)
        ptr = malloc(n)
        ok(runtime.cudaMemcpyAsync(ptr, host, n, Kind.cudaMemcpyHostToDevice, stream))
        ok(runtime.cudaMemsetAsync(ptr, 0, 8, stream))
        ok(runtime.cudaMemcpyAsync(host2, ptr, n, Kind.cudaMemcpyDeviceToHost, stream))
        ok(runtime.cudaStreamSynchronize(stream))
        assert runtime.cudaStreamQuery(stream) == (SUCCESS,)
        assert ctypes.string_at(host2, n) == bytes(8) + data[8:]
    finally:
        ok(runtime.cudaFreeHost(host))
        ok(runtime.cudaFreeHost(host2))


def test_stream_ordered_allocation(env, stream):
    n = 1 << 16
    ptr = ok(runtime.cudaMallocAsync(n, stream))
    ok(runtime.cudaMemsetAsync(ptr, 0x11, n, stream))
    back = bytearray(n)
    ok(runtime.cudaMemcpyAsync(back, ptr, n, Kind.cudaMemcpyDeviceToHost, stream))
    ok(runtime.cudaFreeAsync(ptr, stream))
    ok(runtime.cudaStreamSynchronize(stream))
    assert back == b"\x11" * n

    pool = ok(runtime.cudaDeviceGetDefaultMemPool(0))
    assert isinstance(pool, runtime.cudaMemPool_t) and int(pool) != 0
    ptr = ok(runtime.cudaMallocFromPoolAsync(n, pool, stream))
    ok(runtime.cudaStreamSynchronize(stream))
    used = ok(runtime.cudaMemPoolGetAttribute(pool, runtime.cudaMemPoolAttr.cudaMemPoolAttrUsedMemCurrent))
    assert int(used) >= n
    ok(runtime.cudaFreeAsync(ptr, stream))
    ok(runtime.cudaStreamSynchronize(stream))


# ---------------------------------------------------------------------------
# Launches, events, callbacks, capture


def test_library_kernel_launch(env, malloc, stream):
    ptr = malloc(4 * N)
    kernel = env.kernel["fill"]
    assert isinstance(kernel, runtime.cudaKernel_t)
    ok(launch(env, "fill", GRID, BLOCK, ((ptr, 3, N), (ctypes.c_void_p, ctypes.c_int, ctypes.c_int)), stream))
    ok(runtime.cudaStreamSynchronize(stream))
    assert read_ints(ptr, N) == [3 + i for i in range(N)]
    out = ctypes.c_void_p(ptr)
    delta, count = ctypes.c_int(4), ctypes.c_int(N)
    argv = (ctypes.c_void_p * 3)(ctypes.addressof(out), ctypes.addressof(delta), ctypes.addressof(count))
    ok(launch(env, "add", GRID, BLOCK, ctypes.addressof(argv), stream))
    ok(runtime.cudaStreamSynchronize(stream))
    assert read_ints(ptr, 2) == [7, 8]
    attrs = ok(runtime.cudaFuncGetAttributes(kernel))
    assert attrs.maxThreadsPerBlock >= BLOCK and attrs.numRegs > 0


def test_events_elapsed_time(env, stream):
    start = ok(runtime.cudaEventCreate())
    end = ok(runtime.cudaEventCreateWithFlags(0))
    try:
        ok(runtime.cudaEventRecord(start, stream))
        ok(launch(env, "spin", 1, 1, ((2_000_000,), (ctypes.c_longlong,)), stream))
        ok(runtime.cudaEventRecord(end, stream))
        ok(runtime.cudaEventSynchronize(end))
        assert runtime.cudaEventQuery(end) == (SUCCESS,)
        ms = ok(runtime.cudaEventElapsedTime(start, end))
        assert isinstance(ms, float) and ms > 0.0
    finally:
        ok(runtime.cudaEventDestroy(start))
        ok(runtime.cudaEventDestroy(end))


def test_launch_host_func_and_stream_callback(env, stream):
    got = []
    token = object()
    ok(launch(env, "spin", 1, 1, ((1_000_000,), (ctypes.c_longlong,)), stream))
    ok(runtime.cudaLaunchHostFunc(stream, lambda data: got.append(("host", data)), token))
    ok(runtime.cudaStreamAddCallback(stream, lambda s, status, data: got.append(("cb", s, status, data)), 5, 0))
    ok(runtime.cudaStreamSynchronize(stream))
    assert got[0] == ("host", token) and got[0][1] is token
    kind, s, status, data = got[1]
    assert isinstance(s, runtime.cudaStream_t) and s == stream
    assert status is SUCCESS and data == 5


def test_callback_exception_goes_to_unraisablehook(env, stream, monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)

    def boom(data):
        raise RuntimeError(f"boom {data}")

    ok(runtime.cudaLaunchHostFunc(stream, boom, "rt"))
    ok(runtime.cudaStreamSynchronize(stream))
    assert len(seen) == 1 and seen[0].exc_type is RuntimeError and str(seen[0].exc_value) == "boom rt"


def test_stream_capture(env, malloc, stream):
    ptr = malloc(4 * N)
    ok(runtime.cudaMemset(ptr, 0, 4 * N))
    ok(runtime.cudaStreamBeginCapture(stream, runtime.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal))
    assert ok(runtime.cudaStreamIsCapturing(stream)) is runtime.cudaStreamCaptureStatus.cudaStreamCaptureStatusActive
    ok(runtime.cudaMemsetAsync(ptr, 0, 4 * N, stream))
    for _ in range(2):
        ok(launch(env, "add", GRID, BLOCK, ((ptr, 2, N), (ctypes.c_void_p, ctypes.c_int, ctypes.c_int)), stream))
    graph = ok(runtime.cudaStreamEndCapture(stream))
    try:
        nodes, count = ok(runtime.cudaGraphGetNodes(graph, 8))
        assert count == 3 and len(nodes) == 3
        exe = ok(runtime.cudaGraphInstantiate(graph, 0))
        try:
            for _ in range(3):
                ok(runtime.cudaGraphLaunch(exe, stream))
            ok(runtime.cudaStreamSynchronize(stream))
            assert read_ints(ptr, N) == [4] * N
        finally:
            ok(runtime.cudaGraphExecDestroy(exe))
    finally:
        ok(runtime.cudaGraphDestroy(graph))


# ---------------------------------------------------------------------------
# Runtime and driver together


def test_runtime_uses_the_driver_primary_context(env):
    dok(driver.cuInit(0))
    dev = dok(driver.cuDeviceGet(0))
    primary = dok(driver.cuDevicePrimaryCtxRetain(dev))
    try:
        dok(driver.cuCtxSetCurrent(primary))
        ptr = ok(runtime.cudaMalloc(64))
        owner = dok(driver.cuPointerGetAttribute(driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT, ptr))
        assert owner == primary
        ok(runtime.cudaFree(ptr))
    finally:
        dok(driver.cuDevicePrimaryCtxRelease(dev))


def test_pointers_across_apis(env, malloc):
    dok(driver.cuInit(0))
    n = 256
    rt_ptr = malloc(n)
    data = os.urandom(n)
    # A runtime pointer in driver copies, and a driver CUdeviceptr in runtime copies.
    dok(driver.cuMemcpyHtoD(rt_ptr, data, n))
    dptr = dok(driver.cuMemAlloc(n))
    try:
        ok(runtime.cudaMemcpy(dptr, rt_ptr, n, Kind.cudaMemcpyDeviceToDevice))
        back = bytearray(n)
        dok(driver.cuMemcpyDtoH(back, dptr, n))
        assert back == data
        ok(runtime.cudaMemcpy(back, driver.CUdeviceptr(int(dptr)), n, Kind.cudaMemcpyDeviceToHost))
        assert back == data
    finally:
        dok(driver.cuMemFree(dptr))


def test_streams_and_events_across_apis_by_address(env, malloc):
    dok(driver.cuInit(0))
    n = 4 * N
    ptr = malloc(n)
    rt_stream = ok(runtime.cudaStreamCreate())
    cu_stream = dok(driver.cuStreamCreate(0))
    rt_event = ok(runtime.cudaEventCreate())
    try:
        # A runtime stream in a driver call, and a driver stream in a runtime call.
        dok(driver.cuMemsetD32Async(ptr, 9, N, int(rt_stream)))
        ok(runtime.cudaEventRecord(rt_event, rt_stream))
        dok(driver.cuStreamWaitEvent(cu_stream, int(rt_event), 0))
        back = bytearray(n)
        ok(runtime.cudaMemcpyAsync(back, ptr, n, Kind.cudaMemcpyDeviceToHost, int(cu_stream)))
        dok(driver.cuStreamSynchronize(cu_stream))
        assert back == struct.pack("<i", 9) * N
        dok(driver.cuEventSynchronize(int(rt_event)))
        # The same CUDA object under both names.
        assert dok(driver.cuStreamGetId(int(rt_stream))) == ok(runtime.cudaStreamGetId(rt_stream))
        assert ok(runtime.cudaStreamGetId(int(cu_stream))) == dok(driver.cuStreamGetId(cu_stream))
    finally:
        ok(runtime.cudaEventDestroy(rt_event))
        ok(runtime.cudaStreamDestroy(rt_stream))
        dok(driver.cuStreamDestroy(cu_stream))


def test_stream_objects_across_apis(env, malloc):
    dok(driver.cuInit(0))
    ptr = malloc(4 * N)
    rt_stream = ok(runtime.cudaStreamCreate())
    cu_stream = dok(driver.cuStreamCreate(0))
    try:
        # Each API's work on the other API's stream, read back in turn.
        dok(driver.cuMemsetD32Async(ptr, 1, N, rt_stream))
        ok(runtime.cudaStreamSynchronize(rt_stream))
        assert read_ints(ptr, N) == [1] * N
        ok(runtime.cudaMemsetAsync(ptr, 0, 4 * N, cu_stream))
        dok(driver.cuStreamSynchronize(cu_stream))
        assert read_ints(ptr, N) == [0] * N
    finally:
        runtime.cudaStreamDestroy(rt_stream)
        driver.cuStreamDestroy(cu_stream)


def test_runtime_kernel_in_driver_launch(env, malloc, stream):
    dok(driver.cuInit(0))
    ptr = malloc(4 * N)
    # cudaKernel_t and CUkernel are the same object; cuKernelGetFunction gives its CUfunction.
    func = dok(driver.cuKernelGetFunction(int(env.kernel["fill"])))
    dok(driver.cuLaunchKernel(func, GRID, 1, 1, BLOCK, 1, 1, 0, int(stream),
                              ((ptr, 50, N), (ctypes.c_void_p, ctypes.c_int, ctypes.c_int)), None))
    ok(runtime.cudaStreamSynchronize(stream))
    assert read_ints(ptr, 3) == [50, 51, 52]


@pytest.mark.multi_gpu
def test_peer_copy_runtime(env):
    can = ok(runtime.cudaDeviceCanAccessPeer(0, 1))
    assert can in (0, 1)
    if cuda_runtime is not None:
        assert can == cuda_runtime.cudaDeviceCanAccessPeer(0, 1)[1]
    n = 1 << 16
    data = os.urandom(n)
    src = ok(runtime.cudaMalloc(n))
    ok(runtime.cudaMemcpy(src, data, n, Kind.cudaMemcpyHostToDevice))
    ok(runtime.cudaSetDevice(1))
    dst = ok(runtime.cudaMalloc(n))
    try:
        ok(runtime.cudaMemcpyPeer(dst, 1, src, 0, n))
        back = bytearray(n)
        ok(runtime.cudaMemcpy(back, dst, n, Kind.cudaMemcpyDeviceToHost))
        assert back == data
    finally:
        ok(runtime.cudaFree(dst))
        ok(runtime.cudaSetDevice(0))
        ok(runtime.cudaFree(src))


def test_conditional_node_gives_its_graphs(env):
    # cuda.bindings' test_cudart_conditional: one null graph before the call,
    # the runtime's graph after it.
    graph = ok(runtime.cudaGraphCreate(0))
    try:
        handle = ok(runtime.cudaGraphConditionalHandleCreate(graph, 0, 0))
        params = runtime.cudaGraphNodeParams()
        params.type = runtime.cudaGraphNodeType.cudaGraphNodeTypeConditional
        params.conditional.handle = handle
        params.conditional.type = runtime.cudaGraphConditionalNodeType.cudaGraphCondTypeIf
        params.conditional.size = 1
        assert len(params.conditional.phGraph_out) == 1 and int(params.conditional.phGraph_out[0]) == 0
        ok(runtime.cudaGraphAddNode(graph, None, None, 0, params))
        assert len(params.conditional.phGraph_out) == 1 and int(params.conditional.phGraph_out[0]) != 0
    finally:
        runtime.cudaGraphDestroy(graph)
