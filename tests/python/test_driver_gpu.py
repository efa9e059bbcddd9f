"""cubind.bindings.driver on a GPU: devices, contexts, memory, copies, pools,
pointer attributes, modules and libraries, every kernelParams form, streams,
events, callbacks, graphs and peers. Values are read back, not only statuses.
"""
import ctypes
import gc
import os
import struct
import sys
import textwrap

import pytest

from conftest import outputs_of, run_python
from _kernels import BLOCK, GRID, N

pytestmark = pytest.mark.gpu

from cubind.bindings import driver  # noqa: E402

try:
    from cuda.bindings import driver as cuda_driver
except ImportError:  # pragma: no cover
    cuda_driver = None

CUresult = driver.CUresult
SUCCESS = CUresult.CUDA_SUCCESS


def ok(result):
    return outputs_of(result, SUCCESS)


class Env:
    pass


@pytest.fixture(scope="module")
def env():
    ok(driver.cuInit(0))
    e = Env()
    e.dev = ok(driver.cuDeviceGet(0))
    e.ctx = ok(driver.cuDevicePrimaryCtxRetain(e.dev))
    ok(driver.cuCtxSetCurrent(e.ctx))
    major = ok(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, e.dev))
    minor = ok(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, e.dev))
    e.arch = major * 10 + minor
    import _kernels
    e.cubin = _kernels.compile_source(e.arch, "cubin")
    e.ptx = _kernels.compile_source(e.arch, "ptx")
    e.module = ok(driver.cuModuleLoadData(e.cubin))
    e.fn = {name: ok(driver.cuModuleGetFunction(e.module, name.encode()))
            for name in ("touch", "fill", "add", "saxpy", "take_pair", "mixed", "bump_counter", "spin")}
    yield e
    driver.cuCtxSetCurrent(e.ctx)
    driver.cuModuleUnload(e.module)
    driver.cuDevicePrimaryCtxRelease(e.dev)


@pytest.fixture(autouse=True)
def current(env):
    ok(driver.cuCtxSetCurrent(env.ctx))
    yield
    ok(driver.cuCtxSetCurrent(env.ctx))


@pytest.fixture
def stream(env):
    s = ok(driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING))
    yield s
    driver.cuStreamSynchronize(s)
    driver.cuStreamDestroy(s)


@pytest.fixture
def alloc(env):
    made = []

    def make(nbytes):
        dptr = ok(driver.cuMemAlloc(nbytes))
        made.append(dptr)
        return dptr

    yield make
    driver.cuCtxSynchronize()
    for dptr in made:
        driver.cuMemFree(dptr)


def read_ints(dptr, count, stream=None):
    buf = bytearray(4 * count)
    ok(driver.cuMemcpyDtoH(buf, dptr, len(buf)))
    return list(struct.unpack(f"<{count}i", buf))


def theirs_init():
    if cuda_driver is None:
        pytest.skip("cuda-bindings is not installed")
    assert cuda_driver.cuInit(0)[0] == 0


# ---------------------------------------------------------------------------
# Initialisation, devices


def test_init_status_is_the_cached_member(env):
    result = driver.cuInit(0)
    assert result == (SUCCESS,)
    assert result[0] is CUresult.CUDA_SUCCESS


def test_driver_version(env):
    version = ok(driver.cuDriverGetVersion())
    assert isinstance(version, int) and version >= 12000
    if cuda_driver is not None:
        assert version == cuda_driver.cuDriverGetVersion()[1]


def test_devices_match_cuda_bindings(env):
    theirs_init()
    count = ok(driver.cuDeviceGetCount())
    assert count >= 1
    assert count == cuda_driver.cuDeviceGetCount()[1]
    attributes = [
        "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT", "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR",
        "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR", "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
        "CU_DEVICE_ATTRIBUTE_WARP_SIZE", "CU_DEVICE_ATTRIBUTE_PCI_BUS_ID", "CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING",
        "CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED", "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE",
    ]
    for ordinal in range(count):
        dev = ok(driver.cuDeviceGet(ordinal))
        assert isinstance(dev, driver.CUdevice) and int(dev) == ordinal
        tdev = cuda_driver.cuDeviceGet(ordinal)[1]
        name = ok(driver.cuDeviceGetName(256, dev))
        assert type(name) is bytes and name and b"\0" not in name
        assert name == cuda_driver.cuDeviceGetName(256, tdev)[1].split(b"\0", 1)[0]
        uuid = ok(driver.cuDeviceGetUuid(dev))
        assert isinstance(uuid, driver.CUuuid)
        assert bytes(uuid.bytes) == bytes(cuda_driver.cuDeviceGetUuid(tdev)[1].bytes)
        assert bytes(uuid.bytes) != bytes(16)
        for attr in attributes:
            ours = ok(driver.cuDeviceGetAttribute(getattr(driver.CUdevice_attribute, attr), dev))
            theirs = cuda_driver.cuDeviceGetAttribute(getattr(cuda_driver.CUdevice_attribute, attr), tdev)[1]
            assert ours == theirs, attr
        assert ok(driver.cuDeviceTotalMem(dev)) == cuda_driver.cuDeviceTotalMem(tdev)[1]
        bus = ok(driver.cuDeviceGetPCIBusId(64, dev))
        assert bus == cuda_driver.cuDeviceGetPCIBusId(64, tdev)[1].split(b"\0", 1)[0]
        assert ok(driver.cuDeviceGetByPCIBusId(bus)) == dev


def test_device_attribute_values(env):
    attr = driver.CUdevice_attribute
    assert ok(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_WARP_SIZE, env.dev)) == 32
    assert ok(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0)) >= 1024
    assert env.arch >= 70
    status, value = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_WARP_SIZE, 9999)
    assert status is CUresult.CUDA_ERROR_INVALID_DEVICE and value is None


def test_invalid_device(env):
    count = ok(driver.cuDeviceGetCount())
    status, dev = driver.cuDeviceGet(count)
    assert status is CUresult.CUDA_ERROR_INVALID_DEVICE
    assert dev is None


def test_error_names_and_strings(env):
    assert driver.cuGetErrorName(CUresult.CUDA_ERROR_INVALID_VALUE) == (SUCCESS, b"CUDA_ERROR_INVALID_VALUE")
    assert ok(driver.cuGetErrorString(CUresult.CUDA_ERROR_OUT_OF_MEMORY)) == b"out of memory"
    status, text = driver.cuGetErrorName(987654)
    assert status is CUresult.CUDA_ERROR_INVALID_VALUE and text is None
    if cuda_driver is not None:
        for member in (CUresult.CUDA_ERROR_INVALID_HANDLE, CUresult.CUDA_ERROR_NOT_READY, CUresult.CUDA_ERROR_LAUNCH_FAILED):
            theirs = cuda_driver.cuGetErrorString(cuda_driver.CUresult(int(member)))[1]
            assert ok(driver.cuGetErrorString(member)) == theirs


# ---------------------------------------------------------------------------
# Contexts


def test_primary_context(env):
    current = ok(driver.cuCtxGetCurrent())
    assert isinstance(current, driver.CUcontext)
    assert current == env.ctx and int(current) != 0
    assert ok(driver.cuCtxGetDevice()) == env.dev
    flags, active = ok(driver.cuDevicePrimaryCtxGetState(env.dev))
    assert active == 1 and isinstance(flags, int)
    assert ok(driver.cuCtxGetApiVersion(env.ctx)) >= 3020
    assert isinstance(ok(driver.cuCtxGetId(env.ctx)), int)
    if cuda_driver is not None:
        theirs_init()
        tdev = cuda_driver.cuDeviceGet(0)[1]
        tctx = cuda_driver.cuDevicePrimaryCtxRetain(tdev)[1]
        try:
            assert int(tctx) == int(env.ctx), "one primary context per device and process"
        finally:
            cuda_driver.cuDevicePrimaryCtxRelease(tdev)


def test_context_create_push_pop_destroy(env, alloc):
    new = ok(driver.cuCtxCreate(None, 0, env.dev))
    try:
        assert new != env.ctx
        assert ok(driver.cuCtxGetCurrent()) == new
        dptr = ok(driver.cuMemAlloc(64))
        owner = ok(driver.cuPointerGetAttribute(driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT, dptr))
        assert owner == new
        ok(driver.cuMemFree(dptr))
        assert ok(driver.cuCtxPopCurrent()) == new
        assert ok(driver.cuCtxGetCurrent()) == env.ctx
        ok(driver.cuCtxPushCurrent(new))
        assert ok(driver.cuCtxGetCurrent()) == new
        ok(driver.cuCtxSynchronize())
        assert ok(driver.cuCtxPopCurrent()) == new
    finally:
        ok(driver.cuCtxDestroy(new))
    assert ok(driver.cuCtxGetCurrent()) == env.ctx


def test_set_current_none_unbinds(env):
    ok(driver.cuCtxSetCurrent(None))
    current = ok(driver.cuCtxGetCurrent())
    assert int(current) == 0 and not current
    status, dptr = driver.cuMemAlloc(16)
    assert status is CUresult.CUDA_ERROR_INVALID_CONTEXT and dptr is None
    ok(driver.cuCtxSetCurrent(env.ctx))


# ---------------------------------------------------------------------------
# Memory


def test_alloc_copy_set_free(env, alloc):
    n = 4096
    dptr = alloc(n)
    assert isinstance(dptr, driver.CUdeviceptr) and int(dptr) != 0
    data = bytes(range(256)) * (n // 256)
    ok(driver.cuMemcpyHtoD(dptr, data, n))
    back = bytearray(n)
    ok(driver.cuMemcpyDtoH(back, dptr, n))
    assert back == data

    # Part of a buffer through a memoryview; a ctypes array as the destination.
    view = memoryview(bytearray(n))[:512]
    ok(driver.cuMemcpyDtoH(view, dptr, 512))
    assert view.tobytes() == data[:512]
    carr = (ctypes.c_ubyte * n)()
    ok(driver.cuMemcpyDtoH(carr, dptr, n))
    assert bytes(carr) == data
    # An int address (ctypes) as the source.
    src = ctypes.create_string_buffer(b"\x11" * 64, 64)
    ok(driver.cuMemcpyHtoD(dptr, ctypes.addressof(src), 64))
    assert read_ints(dptr, 1) == [0x11111111]

    ok(driver.cuMemsetD8(dptr, 0xAB, n))
    ok(driver.cuMemcpyDtoH(back, dptr, n))
    assert back == b"\xab" * n
    ok(driver.cuMemsetD32(dptr, 0x01020304, n // 4))
    assert read_ints(dptr, 4) == [0x01020304] * 4

    other = alloc(n)
    ok(driver.cuMemcpyDtoD(other, dptr, n))
    third = alloc(n)
    ok(driver.cuMemcpy(third, other, n))
    assert read_ints(third, n // 4) == [0x01020304] * (n // 4)

    base, size = ok(driver.cuMemGetAddressRange(int(dptr) + 100))
    assert base == dptr and size >= n
    free, total = ok(driver.cuMemGetInfo())
    assert 0 < free <= total


def test_free_and_double_free(env):
    dptr = ok(driver.cuMemAlloc(256))
    assert driver.cuMemFree(dptr) == (SUCCESS,)
    status, = driver.cuMemFree(dptr)
    assert status is not SUCCESS


def test_read_only_destination_is_refused(env, alloc):
    dptr = alloc(16)
    with pytest.raises(TypeError):
        driver.cuMemcpyDtoH(b"immutable bytes!", dptr, 16)


def test_numpy_round_trip(env, alloc):
    np = pytest.importorskip("numpy")
    arr = np.arange(2048, dtype=np.float32) * 0.5
    dptr = alloc(arr.nbytes)
    ok(driver.cuMemcpyHtoD(dptr, arr, arr.nbytes))
    out = np.zeros_like(arr)
    ok(driver.cuMemcpyDtoH(out, dptr, out.nbytes))
    assert np.array_equal(out, arr)
    # A strided view is refused (numpy raises ValueError from its buffer export).
    with pytest.raises((TypeError, ValueError, BufferError)):
        driver.cuMemcpyDtoH(np.zeros(4096, dtype=np.float32)[::2], dptr, 4096)


def test_memcpy_2d(env, stream):
    width, height, src_pitch, dst_pitch = 40, 8, 64, 48
    src = bytearray(src_pitch * height)
    for row in range(height):
        src[row * src_pitch:row * src_pitch + width] = bytes((row * 16 + c) & 0xFF for c in range(width))
    dptr, pitch = ok(driver.cuMemAllocPitch(width, height, 4))
    try:
        assert pitch >= width
        up = driver.CUDA_MEMCPY2D()
        up.srcMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_HOST
        up.srcHost = src
        up.srcPitch = src_pitch
        up.dstMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_DEVICE
        up.dstDevice = dptr
        up.dstPitch = pitch
        up.WidthInBytes = width
        up.Height = height
        ok(driver.cuMemcpy2D(up))

        dst = bytearray(b"\xee" * (dst_pitch * height))
        down = driver.CUDA_MEMCPY2D(srcMemoryType=driver.CUmemorytype.CU_MEMORYTYPE_DEVICE, srcDevice=dptr,
                                    srcPitch=pitch, dstMemoryType=driver.CUmemorytype.CU_MEMORYTYPE_HOST,
                                    dstHost=dst, dstPitch=dst_pitch, WidthInBytes=width, Height=height)
        ok(driver.cuMemcpy2DAsync(down, stream))
        ok(driver.cuStreamSynchronize(stream))
        for row in range(height):
            assert dst[row * dst_pitch:row * dst_pitch + width] == src[row * src_pitch:row * src_pitch + width]
            assert dst[row * dst_pitch + width:(row + 1) * dst_pitch] == b"\xee" * (dst_pitch - width)
    finally:
        ok(driver.cuMemFree(dptr))


def test_memcpy_3d(env, alloc):
    width, height, depth = 16, 4, 3
    dpitch, dheight = 32, 5
    src = bytes((i * 7) & 0xFF for i in range(width * height * depth))
    dptr = alloc(dpitch * dheight * depth)
    ok(driver.cuMemsetD8(dptr, 0, dpitch * dheight * depth))
    copy = driver.CUDA_MEMCPY3D(srcMemoryType=driver.CUmemorytype.CU_MEMORYTYPE_HOST, srcHost=src,
                                srcPitch=width, srcHeight=height,
                                dstMemoryType=driver.CUmemorytype.CU_MEMORYTYPE_DEVICE, dstDevice=dptr,
                                dstPitch=dpitch, dstHeight=dheight,
                                WidthInBytes=width, Height=height, Depth=depth)
    ok(driver.cuMemcpy3D(copy))
    whole = bytearray(dpitch * dheight * depth)
    ok(driver.cuMemcpyDtoH(whole, dptr, len(whole)))
    for z in range(depth):
        for y in range(height):
            at = (z * dheight + y) * dpitch
            assert whole[at:at + width] == src[(z * height + y) * width:(z * height + y + 1) * width]
            assert whole[at + width:at + dpitch] == bytes(dpitch - width)
    back = bytearray(len(src))
    copy_back = driver.CUDA_MEMCPY3D()
    copy_back.srcMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_DEVICE
    copy_back.srcDevice = dptr
    copy_back.srcPitch, copy_back.srcHeight = dpitch, dheight
    copy_back.dstMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_HOST
    copy_back.dstHost = back
    copy_back.dstPitch, copy_back.dstHeight = width, height
    copy_back.WidthInBytes, copy_back.Height, copy_back.Depth = width, height, depth
    ok(driver.cuMemcpy3D(copy_back))
    assert bytes(back) == src


def test_async_copies_with_pinned_memory(env, alloc, stream):
    n = 1 << 16
    data = os.urandom(n)
    host = ok(driver.cuMemAllocHost(n))
    host2 = ok(driver.cuMemHostAlloc(n, 0))
    try:
        assert isinstance(host, int) and host != 0
        ctypes.memmove(host, data, n)
        dptr = alloc(n)
        ok(driver.cuMemcpyHtoDAsync(dptr, host, n, stream))
        ok(driver.cuMemsetD32Async(dptr, 7, 4, stream))
        ok(driver.cuMemcpyDtoHAsync(host2, dptr, n, stream))
        ok(driver.cuStreamSynchronize(stream))
        assert driver.cuStreamQuery(stream) == (SUCCESS,)
        assert ctypes.string_at(host2, n) == struct.pack("<4I", 7, 7, 7, 7) + data[16:]
        # The host side of pinned memory is host memory; unified addressing maps it.
        mem_type = ok(driver.cuPointerGetAttribute(driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, host))
        assert mem_type == driver.CUmemorytype.CU_MEMORYTYPE_HOST
    finally:
        ok(driver.cuMemFreeHost(host))
        ok(driver.cuMemFreeHost(host2))


def test_host_register_bytearray(env, alloc, stream):
    n = 1 << 20
    buf = bytearray(os.urandom(n))
    ok(driver.cuMemHostRegister(buf, n, 0))
    try:
        dptr = alloc(n)
        ok(driver.cuMemcpyHtoDAsync(dptr, buf, n, stream))
        ok(driver.cuStreamSynchronize(stream))
        back = bytearray(n)
        ok(driver.cuMemcpyDtoH(back, dptr, n))
        assert back == buf
        address = ctypes.addressof((ctypes.c_char * n).from_buffer(buf))
        assert ok(driver.cuPointerGetAttribute(driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                               address)) == driver.CUmemorytype.CU_MEMORYTYPE_HOST
    finally:
        ok(driver.cuMemHostUnregister(buf))


def test_stream_properties(env, stream):
    assert ok(driver.cuStreamGetCtx(stream)) == env.ctx
    assert stream.__cuda_stream__() == (0, int(stream))
    assert isinstance(ok(driver.cuStreamGetId(stream)), int)
    assert ok(driver.cuStreamGetFlags(stream)) == int(driver.CUstream_flags.CU_STREAM_NON_BLOCKING)
    least, greatest = ok(driver.cuCtxGetStreamPriorityRange())
    prio = ok(driver.cuStreamCreateWithPriority(0, greatest))
    try:
        assert ok(driver.cuStreamGetPriority(prio)) == greatest
    finally:
        ok(driver.cuStreamDestroy(prio))
    # The legacy and per-thread default streams by their constants.
    ok(driver.cuStreamSynchronize(driver.CU_STREAM_LEGACY))
    ok(driver.cuStreamSynchronize(driver.CUstream(driver.CU_STREAM_PER_THREAD)))
    ok(driver.cuStreamSynchronize(None))


# ---------------------------------------------------------------------------
# Memory pools


def test_default_pool_alloc_async(env, stream):
    pool = ok(driver.cuDeviceGetDefaultMemPool(env.dev))
    assert isinstance(pool, driver.CUmemoryPool) and int(pool) != 0
    n = 1 << 16
    dptr = ok(driver.cuMemAllocFromPoolAsync(n, pool, stream))
    assert isinstance(dptr, driver.CUdeviceptr)
    ok(driver.cuMemsetD32Async(dptr, 0x55AA55AA, n // 4, stream))
    out = bytearray(n)
    ok(driver.cuMemcpyDtoHAsync(out, dptr, n, stream))
    ok(driver.cuStreamSynchronize(stream))
    assert out == struct.pack("<I", 0x55AA55AA) * (n // 4)
    owner = ok(driver.cuPointerGetAttribute(driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, dptr))
    assert owner == pool
    ok(driver.cuMemFreeAsync(dptr, stream))
    other = ok(driver.cuMemAllocAsync(256, stream))
    ok(driver.cuMemFreeAsync(other, stream))
    ok(driver.cuStreamSynchronize(stream))


def test_custom_pool_attributes(env, stream):
    props = driver.CUmemPoolProps()
    props.allocType = driver.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    props.handleTypes = driver.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_NONE
    props.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    props.location.id = int(env.dev)
    pool = ok(driver.cuMemPoolCreate(props))
    try:
        attr = driver.CUmemPool_attribute
        ok(driver.cuMemPoolSetAttribute(pool, attr.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 1 << 20))
        assert int(ok(driver.cuMemPoolGetAttribute(pool, attr.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD))) == 1 << 20
        ok(driver.cuMemPoolSetAttribute(pool, attr.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, driver.cuuint64_t(2 << 20)))
        assert int(ok(driver.cuMemPoolGetAttribute(pool, attr.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD))) == 2 << 20
        ok(driver.cuMemPoolSetAttribute(pool, attr.CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, 0))
        assert ok(driver.cuMemPoolGetAttribute(pool, attr.CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC)) == 0
        n = 1 << 18
        dptr = ok(driver.cuMemAllocFromPoolAsync(n, pool, stream))
        ok(driver.cuStreamSynchronize(stream))
        assert int(ok(driver.cuMemPoolGetAttribute(pool, attr.CU_MEMPOOL_ATTR_USED_MEM_CURRENT))) >= n
        ok(driver.cuMemsetD8Async(dptr, 3, n, stream))
        back = bytearray(n)
        ok(driver.cuMemcpyDtoHAsync(back, dptr, n, stream))
        ok(driver.cuMemFreeAsync(dptr, stream))
        ok(driver.cuStreamSynchronize(stream))
        assert back == b"\x03" * n
        assert int(ok(driver.cuMemPoolGetAttribute(pool, attr.CU_MEMPOOL_ATTR_USED_MEM_CURRENT))) == 0
    finally:
        ok(driver.cuMemPoolDestroy(pool))


# ---------------------------------------------------------------------------
# Pointer attributes


def test_pointer_attributes(env, alloc):
    a = driver.CUpointer_attribute
    n = 4096
    dptr = alloc(n)
    context = ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_CONTEXT, dptr))
    assert isinstance(context, driver.CUcontext) and context == env.ctx
    assert ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr)) == \
        driver.CUmemorytype.CU_MEMORYTYPE_DEVICE
    device_pointer = ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, dptr))
    assert isinstance(device_pointer, driver.CUdeviceptr) and device_pointer == dptr
    assert ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dptr)) == int(env.dev)
    inner = int(dptr) + 64
    assert ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, inner)) == dptr
    assert ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_RANGE_SIZE, inner)) >= n
    assert ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_IS_MANAGED, dptr)) is False  # as cuda.bindings

    values = ok(driver.cuPointerGetAttributes(3, [a.CU_POINTER_ATTRIBUTE_CONTEXT, a.CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                  a.CU_POINTER_ATTRIBUTE_DEVICE_POINTER], dptr))
    assert len(values) == 3
    assert values[0] == env.ctx and values[1] == 2 and values[2] == dptr

    if cuda_driver is not None:
        theirs_init()
        theirs = cuda_driver.cuPointerGetAttribute(
            cuda_driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, cuda_driver.CUdeviceptr(int(dptr)))
        assert theirs[0] == 0 and int(theirs[1]) == 2

    status, value = driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_CONTEXT, 0x10)
    assert status is not SUCCESS and value is None


# ---------------------------------------------------------------------------
# Modules and libraries


def test_module_from_ptx(env, alloc):
    mod = ok(driver.cuModuleLoadData(env.ptx))
    try:
        assert isinstance(mod, driver.CUmodule)
        fill = ok(driver.cuModuleGetFunction(mod, "fill"))
        assert isinstance(fill, driver.CUfunction)
        dptr = alloc(4 * N)
        ok(driver.cuLaunchKernel(fill, GRID, 1, 1, BLOCK, 1, 1, 0, None,
                                 ((dptr, 5, N), (None, ctypes.c_int, ctypes.c_int)), None))
        ok(driver.cuCtxSynchronize())
        assert read_ints(dptr, N) == [5 + i for i in range(N)]
        gptr, size = ok(driver.cuModuleGetGlobal(mod, b"counter"))
        assert isinstance(gptr, driver.CUdeviceptr) and size == 4
        status, missing = driver.cuModuleGetFunction(mod, b"no_such_kernel")
        assert status is CUresult.CUDA_ERROR_NOT_FOUND and missing is None
    finally:
        ok(driver.cuModuleUnload(mod))


def test_module_load_data_ex_with_jit_log(env):
    o = driver.CUjit_option
    info = ctypes.create_string_buffer(8192)
    error = ctypes.create_string_buffer(8192)
    options = [o.CU_JIT_INFO_LOG_BUFFER, o.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, o.CU_JIT_ERROR_LOG_BUFFER,
               o.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, o.CU_JIT_LOG_VERBOSE, o.CU_JIT_OPTIMIZATION_LEVEL]
    values = [ctypes.addressof(info), 8192, ctypes.addressof(error), 8192, 1, 3]
    mod = ok(driver.cuModuleLoadDataEx(env.ptx, len(options), options, values))
    try:
        assert error.value == b""
        ok(driver.cuModuleGetFunction(mod, b"saxpy"))
    finally:
        ok(driver.cuModuleUnload(mod))
    # A broken image fails with a status, and the error log explains it.
    broken = env.ptx.replace(b"ret;", b"this_is_not_ptx;", 1)
    status, mod = driver.cuModuleLoadDataEx(broken, 2,
                                            [o.CU_JIT_ERROR_LOG_BUFFER, o.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES],
                                            [ctypes.addressof(error), 8192])
    assert status is not SUCCESS and mod is None
    assert b"this_is_not_ptx" in error.value or b"error" in error.value.lower()


def test_module_from_cubin_enumerates_functions(env):
    count = ok(driver.cuModuleGetFunctionCount(env.module))
    assert count >= 8
    functions = ok(driver.cuModuleEnumerateFunctions(count, env.module))
    assert len(functions) == count
    names = {ok(driver.cuFuncGetName(f)) for f in functions}
    assert {b"fill", b"add", b"touch", b"spin"} <= names


def test_module_from_fatbin(env, tmp_path, alloc):
    import _kernels
    fatbin = _kernels.nvcc_fatbin(env.arch, tmp_path)
    if fatbin is None:
        pytest.skip("nvcc is not on PATH")
    for loader in (driver.cuModuleLoadData, driver.cuModuleLoadFatBinary):
        mod = ok(loader(fatbin))
        try:
            fill = ok(driver.cuModuleGetFunction(mod, b"fill"))
            dptr = alloc(4 * N)
            ok(driver.cuLaunchKernel(fill, GRID, 1, 1, BLOCK, 1, 1, 0, None,
                                     ((dptr, -3, N), (None, ctypes.c_int, ctypes.c_int)), None))
            ok(driver.cuCtxSynchronize())
            assert read_ints(dptr, N)[:3] == [-3, -2, -1]
        finally:
            ok(driver.cuModuleUnload(mod))


def test_library_load_data_and_kernel(env, alloc, stream):
    lib = ok(driver.cuLibraryLoadData(env.cubin, None, None, 0, None, None, 0))
    try:
        assert isinstance(lib, driver.CUlibrary)
        kernel = ok(driver.cuLibraryGetKernel(lib, b"fill"))
        assert isinstance(kernel, driver.CUkernel)
        assert ok(driver.cuKernelGetName(kernel)) == b"fill"
        assert ok(driver.cuLibraryGetKernelCount(lib)) >= 8
        func = ok(driver.cuKernelGetFunction(kernel))
        dptr = alloc(4 * N)
        ok(driver.cuLaunchKernel(func, GRID, 1, 1, BLOCK, 1, 1, 0, stream,
                                 ((dptr, 1000, N), (None, ctypes.c_int, ctypes.c_int)), None))
        ok(driver.cuStreamSynchronize(stream))
        assert read_ints(dptr, N) == [1000 + i for i in range(N)]
        # The C API launches a CUkernel where a CUfunction is expected: by its address.
        ok(driver.cuLaunchKernel(int(kernel), GRID, 1, 1, BLOCK, 1, 1, 0, stream,
                                 ((dptr, 2000, N), (None, ctypes.c_int, ctypes.c_int)), None))
        ok(driver.cuStreamSynchronize(stream))
        assert read_ints(dptr, 2) == [2000, 2001]
        gptr, size = ok(driver.cuLibraryGetGlobal(lib, b"touched"))
        assert size == 4 and int(gptr) != 0
        threads = ok(driver.cuKernelGetAttribute(
            driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kernel, env.dev))
        assert threads >= BLOCK
    finally:
        ok(driver.cuLibraryUnload(lib))


def test_library_options(env):
    o = driver.CUlibraryOption
    lib = ok(driver.cuLibraryLoadData(env.ptx, [driver.CUjit_option.CU_JIT_OPTIMIZATION_LEVEL], [2], 1,
                                      [o.CU_LIBRARY_BINARY_IS_PRESERVED], [1], 1))
    ok(driver.cuLibraryUnload(lib))


# ---------------------------------------------------------------------------
# Launches: every kernelParams form


def test_launch_none_params_zero_arg_kernel(env):
    gptr, size = ok(driver.cuModuleGetGlobal(env.module, b"touched"))
    ok(driver.cuMemsetD32(gptr, 0, 1))
    ok(driver.cuLaunchKernel(env.fn["touch"], 1, 1, 1, 1, 1, 1, 0, None, None, None))
    ok(driver.cuCtxSynchronize())
    assert read_ints(gptr, 1) == [42]


def test_launch_params_as_address_of_packed_array(env, alloc, stream):
    dptr = alloc(4 * N)
    out = ctypes.c_void_p(int(dptr))
    base = ctypes.c_int(100)
    count = ctypes.c_int(N)
    argv = (ctypes.c_void_p * 3)(ctypes.addressof(out), ctypes.addressof(base), ctypes.addressof(count))
    ok(driver.cuLaunchKernel(env.fn["fill"], GRID, 1, 1, BLOCK, 1, 1, 0, stream, ctypes.addressof(argv), None))
    ok(driver.cuStreamSynchronize(stream))
    assert read_ints(dptr, N) == [100 + i for i in range(N)]


def test_launch_params_as_numpy_array_of_addresses(env, alloc, stream):
    # As cuda.bindings takes it: the array's memory is the void* array.
    np = pytest.importorskip("numpy")
    dptr = alloc(4 * N)
    out = ctypes.c_void_p(int(dptr))
    base = ctypes.c_int(300)
    count = ctypes.c_int(N)
    argv = np.array([ctypes.addressof(out), ctypes.addressof(base), ctypes.addressof(count)], dtype=np.uint64)
    ok(driver.cuLaunchKernel(env.fn["fill"], GRID, 1, 1, BLOCK, 1, 1, 0, stream, argv, None))
    ok(driver.cuStreamSynchronize(stream))
    assert read_ints(dptr, N) == [300 + i for i in range(N)]


def test_launch_params_values_and_types(env, alloc, stream):
    dptr = alloc(4 * N)
    # A cubind object with a None type is passed by the address of its storage.
    ok(driver.cuLaunchKernel(env.fn["fill"], GRID, 1, 1, BLOCK, 1, 1, 0, stream,
                             ((dptr, 200, N), (None, ctypes.c_int, ctypes.c_int)), None))
    ok(driver.cuStreamSynchronize(stream))
    assert read_ints(dptr, N) == [200 + i for i in range(N)]
    # A plain int pointer as c_void_p; lists work as well as tuples.
    ok(driver.cuLaunchKernel(env.fn["add"], GRID, 1, 1, BLOCK, 1, 1, 0, stream,
                             ([int(dptr), 5, N], [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]), None))
    ok(driver.cuStreamSynchronize(stream))
    assert read_ints(dptr, N) == [205 + i for i in range(N)]
    # The pointer as a pointer-sized integer.
    ok(driver.cuLaunchKernel(env.fn["add"], GRID, 1, 1, BLOCK, 1, 1, 0, stream,
                             ((int(dptr), -205, N), (ctypes.c_size_t, ctypes.c_int, ctypes.c_int)), None))
    ok(driver.cuStreamSynchronize(stream))
    assert read_ints(dptr, N) == list(range(N))


def test_launch_params_float_kernel(env, alloc, stream):
    n = 256
    x = struct.pack(f"<{n}f", *[float(i) for i in range(n)])
    y = struct.pack(f"<{n}f", *[1.0] * n)
    dx, dy = alloc(4 * n), alloc(4 * n)
    ok(driver.cuMemcpyHtoD(dx, x, len(x)))
    ok(driver.cuMemcpyHtoD(dy, y, len(y)))
    ok(driver.cuLaunchKernel(env.fn["saxpy"], 1, 1, 1, n, 1, 1, 0, stream,
                             ((2.5, dx, dy, n), (ctypes.c_float, None, None, ctypes.c_int)), None))
    ok(driver.cuStreamSynchronize(stream))
    out = bytearray(4 * n)
    ok(driver.cuMemcpyDtoH(out, dy, len(out)))
    assert list(struct.unpack(f"<{n}f", out)) == [2.5 * i + 1.0 for i in range(n)]


def test_launch_params_mixed_scalars_alignment(env, alloc, stream):
    out = alloc(8 * 5)
    values = (-5, 300, 2**40 + 3, 1.5, 2.25, out)
    types = (ctypes.c_byte, ctypes.c_short, ctypes.c_longlong, ctypes.c_float, ctypes.c_double, None)
    ok(driver.cuLaunchKernel(env.fn["mixed"], 1, 1, 1, 1, 1, 1, 0, stream, (values, types), None))
    ok(driver.cuStreamSynchronize(stream))
    buf = bytearray(40)
    ok(driver.cuMemcpyDtoH(buf, out, 40))
    assert list(struct.unpack("<5q", buf)) == [-5, 300, 2**40 + 3, 1500, 2250]


def test_launch_params_struct_by_value(env, alloc, stream):
    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

    out = alloc(8)
    ok(driver.cuLaunchKernel(env.fn["take_pair"], 1, 1, 1, 1, 1, 1, 0, stream,
                             ((Pair(3, 0.25), out), (Pair, None)), None))
    ok(driver.cuStreamSynchronize(stream))
    buf = bytearray(8)
    ok(driver.cuMemcpyDtoH(buf, out, 8))
    assert struct.unpack("<d", buf)[0] == 3.25


def test_launch_with_extra_buffer(env, alloc, stream):
    dptr = alloc(4 * N)
    args = ctypes.create_string_buffer(struct.pack("<Qii", int(dptr), 400, N), 16)
    size = ctypes.c_size_t(16)
    extra = (ctypes.c_void_p * 5)(driver.CU_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(args),
                                  driver.CU_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size),
                                  driver.CU_LAUNCH_PARAM_END)
    ok(driver.cuLaunchKernel(env.fn["fill"], GRID, 1, 1, BLOCK, 1, 1, 0, stream, None, ctypes.addressof(extra)))
    ok(driver.cuStreamSynchronize(stream))
    assert read_ints(dptr, N) == [400 + i for i in range(N)]
    # The ctypes array itself, as a buffer.
    ok(driver.cuLaunchKernel(env.fn["fill"], GRID, 1, 1, BLOCK, 1, 1, 0, stream, None, extra))
    ok(driver.cuStreamSynchronize(stream))


def test_launch_kernel_ex(env, alloc, stream):
    dptr = alloc(4 * N)
    config = driver.CUlaunchConfig(gridDimX=GRID, gridDimY=1, gridDimZ=1, blockDimX=BLOCK, blockDimY=1,
                                   blockDimZ=1, sharedMemBytes=0, hStream=stream)
    ok(driver.cuLaunchKernelEx(config, env.fn["fill"], ((dptr, 500, N), (None, ctypes.c_int, ctypes.c_int)), None))
    ok(driver.cuStreamSynchronize(stream))
    assert read_ints(dptr, N) == [500 + i for i in range(N)]
    attr = driver.CUlaunchAttribute()
    attr.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PRIORITY
    attr.value.priority = 0
    config.attrs = attr
    config.numAttrs = 1
    ok(driver.cuLaunchKernelEx(config, env.fn["add"], ((dptr, 1, N), (None, ctypes.c_int, ctypes.c_int)), None))
    ok(driver.cuStreamSynchronize(stream))
    assert read_ints(dptr, 2) == [501, 502]


def test_launch_errors_are_statuses(env, alloc):
    dptr = alloc(4 * N)
    status, = driver.cuLaunchKernel(env.fn["fill"], 1, 1, 1, 4096, 1, 1, 0, None,
                                    ((dptr, 0, N), (None, ctypes.c_int, ctypes.c_int)), None)
    assert status is CUresult.CUDA_ERROR_INVALID_VALUE
    status, = driver.cuLaunchKernel(None, 1, 1, 1, 1, 1, 1, 0, None, None, None)
    assert status is not SUCCESS


def test_function_queries(env):
    fill = env.fn["fill"]
    assert ok(driver.cuFuncGetParamInfo(fill, 0)) == (0, 8)
    assert ok(driver.cuFuncGetParamInfo(fill, 1)) == (8, 4)
    assert ok(driver.cuFuncGetParamInfo(fill, 2)) == (12, 4)
    status, offset, size = driver.cuFuncGetParamInfo(fill, 3)
    assert status is not SUCCESS and offset is None and size is None
    fa = driver.CUfunction_attribute
    assert ok(driver.cuFuncGetAttribute(fa.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fill)) >= BLOCK
    assert ok(driver.cuFuncGetAttribute(fa.CU_FUNC_ATTRIBUTE_NUM_REGS, fill)) > 0
    assert ok(driver.cuFuncGetName(fill)) == b"fill"
    assert ok(driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(fill, BLOCK, 0)) >= 1
    assert ok(driver.cuFuncGetModule(fill)) == env.module


# ---------------------------------------------------------------------------
# Streams and events


def test_events_and_elapsed_time(env, stream):
    start = ok(driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DEFAULT))
    end = ok(driver.cuEventCreate(0))
    try:
        assert isinstance(start, driver.CUevent)
        ok(driver.cuEventRecord(start, stream))
        ok(driver.cuLaunchKernel(env.fn["spin"], 1, 1, 1, 1, 1, 1, 0, stream,
                                 ((2_000_000,), (ctypes.c_longlong,)), None))
        ok(driver.cuEventRecord(end, stream))
        ok(driver.cuEventSynchronize(end))
        assert driver.cuEventQuery(end) == (SUCCESS,)
        ms = ok(driver.cuEventElapsedTime(start, end))
        assert isinstance(ms, float) and 0.0 < ms < 10_000.0
    finally:
        ok(driver.cuEventDestroy(start))
        ok(driver.cuEventDestroy(end))
    untimed = ok(driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DISABLE_TIMING))
    try:
        ok(driver.cuEventRecord(untimed, stream))
        ok(driver.cuEventSynchronize(untimed))
        status, value = driver.cuEventElapsedTime(untimed, untimed)
        assert status is CUresult.CUDA_ERROR_INVALID_HANDLE and value is None
    finally:
        ok(driver.cuEventDestroy(untimed))


def test_stream_waits_on_event(env, alloc):
    s1 = ok(driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING))
    s2 = ok(driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING))
    event = ok(driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DISABLE_TIMING))
    try:
        dptr = alloc(4 * N)
        ok(driver.cuMemsetD32(dptr, 0, N))
        ok(driver.cuLaunchKernel(env.fn["spin"], 1, 1, 1, 1, 1, 1, 0, s1, ((5_000_000,), (ctypes.c_longlong,)), None))
        ok(driver.cuLaunchKernel(env.fn["fill"], GRID, 1, 1, BLOCK, 1, 1, 0, s1,
                                 ((dptr, 77, N), (None, ctypes.c_int, ctypes.c_int)), None))
        ok(driver.cuEventRecord(event, s1))
        ok(driver.cuStreamWaitEvent(s2, event, 0))
        out = bytearray(4 * N)
        ok(driver.cuMemcpyDtoHAsync(out, dptr, len(out), s2))
        ok(driver.cuStreamSynchronize(s2))
        assert list(struct.unpack(f"<{N}i", out)) == [77 + i for i in range(N)]
    finally:
        ok(driver.cuStreamSynchronize(s1))
        ok(driver.cuEventDestroy(event))
        ok(driver.cuStreamDestroy(s1))
        ok(driver.cuStreamDestroy(s2))


# ---------------------------------------------------------------------------
# Host callbacks


def test_launch_host_func_runs_in_order_with_user_data(env, alloc, stream):
    dptr = alloc(4 * N)
    host = ok(driver.cuMemAllocHost(4 * N))
    try:
        calls = []
        token = object()
        ok(driver.cuLaunchKernel(env.fn["spin"], 1, 1, 1, 1, 1, 1, 0, stream, ((3_000_000,), (ctypes.c_longlong,)), None))
        ok(driver.cuLaunchKernel(env.fn["fill"], GRID, 1, 1, BLOCK, 1, 1, 0, stream,
                                 ((dptr, 9, N), (None, ctypes.c_int, ctypes.c_int)), None))
        ok(driver.cuMemcpyDtoHAsync(host, dptr, 4 * N, stream))

        def seen(user_data):
            calls.append((user_data, ctypes.string_at(host, 8)))

        ok(driver.cuLaunchHostFunc(stream, seen, token))
        # The binding keeps the callable alive until it has run.
        del seen
        gc.collect()
        ok(driver.cuStreamSynchronize(stream))
        assert len(calls) == 1
        assert calls[0][0] is token
        assert calls[0][1] == struct.pack("<2i", 9, 10), "the host function ran after the copy before it"
    finally:
        ok(driver.cuMemFreeHost(host))


def test_stream_add_callback(env, stream):
    got = []
    ok(driver.cuStreamAddCallback(stream, lambda s, status, data: got.append((s, status, data)), "payload", 0))
    ok(driver.cuStreamSynchronize(stream))
    assert len(got) == 1
    s, status, data = got[0]
    assert isinstance(s, driver.CUstream) and s == stream
    assert status is SUCCESS
    assert data == "payload"


def test_many_callbacks_each_run_once(env, stream):
    got = []
    for i in range(200):
        ok(driver.cuLaunchHostFunc(stream, got.append, i))
    ok(driver.cuStreamSynchronize(stream))
    assert got == list(range(200))


@pytest.mark.parametrize("how", ["host_func", "stream_callback"])
def test_callback_exception_goes_to_unraisablehook(env, stream, monkeypatch, how):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)

    def boom(*args):
        raise ValueError(f"boom {args[-1]}")

    if how == "host_func":
        ok(driver.cuLaunchHostFunc(stream, boom, 7))
    else:
        ok(driver.cuStreamAddCallback(stream, boom, 7, 0))
    ok(driver.cuStreamSynchronize(stream))
    assert len(seen) == 1
    report = seen[0]
    assert report.exc_type is ValueError
    assert str(report.exc_value) == "boom 7"
    assert report.exc_traceback is not None
    # The stream keeps working.
    after = []
    ok(driver.cuLaunchHostFunc(stream, after.append, 8))
    ok(driver.cuStreamSynchronize(stream))
    assert after == [8]


def test_host_func_callable_check(env, stream):
    with pytest.raises(TypeError):
        driver.cuLaunchHostFunc(stream, "not callable", None)
    # A stray int is not called as a function: addresses come in CUstreamCallback(address).
    with pytest.raises(TypeError, match="CUstreamCallback"):
        driver.cuStreamAddCallback(stream, 42, None, 0)


def test_host_func_captured_in_graph_runs_at_every_launch():
    # In a child process: a use-after-free here would take the test runner down.
    code = textwrap.dedent("""
        import gc
        from cubind.bindings import driver
        def ok(r):
            assert r[0] == 0, r
            return r[1] if len(r) == 2 else r[1:]
        ok(driver.cuInit(0))
        dev = ok(driver.cuDeviceGet(0))
        ctx = ok(driver.cuDevicePrimaryCtxRetain(dev))
        ok(driver.cuCtxSetCurrent(ctx))
        stream = ok(driver.cuStreamCreate(1))
        calls = []
        ok(driver.cuStreamBeginCapture(stream, driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL))
        ok(driver.cuLaunchHostFunc(stream, lambda data: calls.append(data), "captured"))
        graph = ok(driver.cuStreamEndCapture(stream))
        exe = ok(driver.cuGraphInstantiate(graph, 0))
        for i in range(3):
            ok(driver.cuGraphLaunch(exe, stream))
            ok(driver.cuStreamSynchronize(stream))
            gc.collect()
            junk = [(j, str(j)) for j in range(20000)]
        print(calls)
    """)
    result = run_python(code)
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stderr[-3000:]}"
    assert result.stdout.strip() == str(["captured"] * 3)


# ---------------------------------------------------------------------------
# Graphs


def test_stream_capture_to_graph(env, alloc, stream):
    dptr = alloc(4 * N)
    ok(driver.cuMemsetD32(dptr, 0, N))
    ok(driver.cuStreamBeginCapture(stream, driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL))
    assert ok(driver.cuStreamIsCapturing(stream)) is driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE
    for _ in range(3):
        ok(driver.cuLaunchKernel(env.fn["add"], GRID, 1, 1, BLOCK, 1, 1, 0, stream,
                                 ((dptr, 1, N), (None, ctypes.c_int, ctypes.c_int)), None))
    graph = ok(driver.cuStreamEndCapture(stream))
    assert isinstance(graph, driver.CUgraph)
    try:
        assert ok(driver.cuStreamIsCapturing(stream)) is driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE
        empty, count = ok(driver.cuGraphGetNodes(graph))
        assert count == 3 and empty == []
        nodes, count = ok(driver.cuGraphGetNodes(graph, count))
        assert len(nodes) == 3 and all(isinstance(n, driver.CUgraphNode) for n in nodes)
        for node in nodes:
            assert ok(driver.cuGraphNodeGetType(node)) is driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL
        exe = ok(driver.cuGraphInstantiate(graph, 0))
        try:
            ok(driver.cuGraphLaunch(exe, stream))
            ok(driver.cuGraphLaunch(exe, stream))
            ok(driver.cuStreamSynchronize(stream))
            assert read_ints(dptr, N) == [6] * N
        finally:
            ok(driver.cuGraphExecDestroy(exe))
    finally:
        ok(driver.cuGraphDestroy(graph))


def test_explicit_graph_with_kernel_memset_and_host_nodes(env, alloc, stream):
    dptr = alloc(4 * N)
    graph = ok(driver.cuGraphCreate(0))
    try:
        memset = driver.CUDA_MEMSET_NODE_PARAMS(dst=dptr, pitch=0, value=0xFFFFFFFF, elementSize=4, width=N, height=1)
        n_memset = ok(driver.cuGraphAddMemsetNode(graph, None, 0, memset, env.ctx))

        out = ctypes.c_void_p(int(dptr))
        base, count = ctypes.c_int(10), ctypes.c_int(N)
        fill_args = (ctypes.c_void_p * 3)(ctypes.addressof(out), ctypes.addressof(base), ctypes.addressof(count))
        fill = driver.CUDA_KERNEL_NODE_PARAMS()
        fill.func = env.fn["fill"]
        fill.gridDimX, fill.gridDimY, fill.gridDimZ = GRID, 1, 1
        fill.blockDimX, fill.blockDimY, fill.blockDimZ = BLOCK, 1, 1
        fill.sharedMemBytes = 0
        fill.kernelParams = ctypes.addressof(fill_args)
        fill.extra = None
        n_fill = ok(driver.cuGraphAddKernelNode(graph, [n_memset], 1, fill))

        delta = ctypes.c_int(5)
        add_args = (ctypes.c_void_p * 3)(ctypes.addressof(out), ctypes.addressof(delta), ctypes.addressof(count))
        add = driver.CUDA_KERNEL_NODE_PARAMS(func=env.fn["add"], gridDimX=GRID, gridDimY=1, gridDimZ=1,
                                             blockDimX=BLOCK, blockDimY=1, blockDimZ=1,
                                             kernelParams=ctypes.addressof(add_args))
        n_add = ok(driver.cuGraphAddKernelNode(graph, [n_fill], 1, add))

        hits = ctypes.c_int(0)
        proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

        @proto
        def on_host(user_data):
            ctypes.c_int.from_address(user_data).value += 1

        host = driver.CUDA_HOST_NODE_PARAMS(fn=ctypes.cast(on_host, ctypes.c_void_p).value,
                                            userData=ctypes.addressof(hits))
        ok(driver.cuGraphAddHostNode(graph, [n_add], 1, host))

        got = ok(driver.cuGraphKernelNodeGetParams(n_add))
        assert isinstance(got, driver.CUDA_KERNEL_NODE_PARAMS)
        assert got.func == env.fn["add"]
        assert (got.gridDimX, got.blockDimX) == (GRID, BLOCK)
        nodes, num_nodes = ok(driver.cuGraphGetNodes(graph, 8))
        assert num_nodes == 4 and len(nodes) == 4

        exe = ok(driver.cuGraphInstantiate(graph, 0))
        try:
            ok(driver.cuGraphLaunch(exe, stream))
            ok(driver.cuStreamSynchronize(stream))
            assert read_ints(dptr, N) == [15 + i for i in range(N)]
            assert hits.value == 1
            # Update the add node in the executable graph.
            delta7 = ctypes.c_int(7)
            add_args7 = (ctypes.c_void_p * 3)(ctypes.addressof(out), ctypes.addressof(delta7), ctypes.addressof(count))
            add.kernelParams = ctypes.addressof(add_args7)
            ok(driver.cuGraphExecKernelNodeSetParams(exe, n_add, add))
            ok(driver.cuGraphLaunch(exe, stream))
            ok(driver.cuStreamSynchronize(stream))
            assert read_ints(dptr, N) == [17 + i for i in range(N)]
            assert hits.value == 2
        finally:
            ok(driver.cuGraphExecDestroy(exe))
    finally:
        ok(driver.cuGraphDestroy(graph))


# ---------------------------------------------------------------------------
# Peers


def test_can_access_peer_same_device(env):
    ours = driver.cuDeviceCanAccessPeer(env.dev, env.dev)
    if cuda_driver is not None:
        theirs_init()
        tdev = cuda_driver.cuDeviceGet(0)[1]
        theirs = cuda_driver.cuDeviceCanAccessPeer(tdev, tdev)
        assert int(ours[0]) == int(theirs[0])
        if ours[0] is SUCCESS:
            assert ours[1] == theirs[1]


@pytest.mark.multi_gpu
def test_peer_access_and_copy(env):
    dev1 = ok(driver.cuDeviceGet(1))
    can = ok(driver.cuDeviceCanAccessPeer(env.dev, dev1))
    assert can in (0, 1)
    if cuda_driver is not None:
        theirs_init()
        assert can == cuda_driver.cuDeviceCanAccessPeer(cuda_driver.cuDeviceGet(0)[1], cuda_driver.cuDeviceGet(1)[1])[1]
    rank = ok(driver.cuDeviceGetP2PAttribute(driver.CUdevice_P2PAttribute.CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK,
                                             env.dev, dev1))
    assert isinstance(rank, int)
    ctx1 = ok(driver.cuDevicePrimaryCtxRetain(dev1))
    n = 1 << 16
    data = os.urandom(n)
    try:
        src = ok(driver.cuMemAlloc(n))
        ok(driver.cuMemcpyHtoD(src, data, n))
        ok(driver.cuCtxSetCurrent(ctx1))
        dst = ok(driver.cuMemAlloc(n))
        ok(driver.cuCtxSetCurrent(env.ctx))
        if can:
            status, = driver.cuCtxEnablePeerAccess(ctx1, 0)
            assert status in (SUCCESS, CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        ok(driver.cuMemcpyPeer(dst, ctx1, src, env.ctx, n))
        ok(driver.cuCtxSynchronize())
        ok(driver.cuCtxSetCurrent(ctx1))
        back = bytearray(n)
        ok(driver.cuMemcpyDtoH(back, dst, n))
        assert back == data
        ok(driver.cuMemFree(dst))
        ok(driver.cuCtxSetCurrent(env.ctx))
        ok(driver.cuMemFree(src))
        if can:
            ok(driver.cuCtxDisablePeerAccess(ctx1))
    finally:
        ok(driver.cuCtxSetCurrent(env.ctx))
        driver.cuDevicePrimaryCtxRelease(dev1)


def test_graphics_interop_without_a_graphics_api_fails_cleanly(env):
    # No OpenGL context or EGL display here. Each call comes back with an error
    # status, or, where this driver installation leaves the interop entry points
    # out, raises RuntimeError naming the function; never a crash.
    calls = {
        "cuGLGetDevices": lambda: driver.cuGLGetDevices(4, driver.CUGLDeviceList.CU_GL_DEVICE_LIST_ALL),
        "cuGraphicsEGLRegisterImage": lambda: driver.cuGraphicsEGLRegisterImage(driver.EGLImageKHR(0), 0),
        "cuEventCreateFromEGLSync": lambda: driver.cuEventCreateFromEGLSync(driver.EGLSyncKHR(0), 0),
    }
    for name, call in calls.items():
        try:
            result = call()
        except RuntimeError as e:
            assert name in str(e) and "does not provide it" in str(e), str(e)
            continue
        assert isinstance(result[0], driver.CUresult) and result[0] != driver.CUresult.CUDA_SUCCESS, (name, result)
        assert all(r is None for r in result[1:]), (name, result)
    with pytest.raises(ValueError, match="vdpGetProcAddress"):
        driver.cuVDPAUGetDevice(driver.VdpDevice(1), None)


def test_coredump_boolean_settings_take_and_give_bools(env):
    # cuda.bindings' test_cuda_coredump_attr: booleans in, booleans out.
    s = driver.CUcoredumpSettings
    saved = {a: ok(driver.cuCoredumpGetAttributeGlobal(a)) for a in (s.CU_COREDUMP_TRIGGER_HOST,
                                                                    s.CU_COREDUMP_LIGHTWEIGHT)}
    try:
        assert driver.cuCoredumpSetAttributeGlobal(s.CU_COREDUMP_TRIGGER_HOST, False) == (SUCCESS,)
        assert driver.cuCoredumpSetAttributeGlobal(s.CU_COREDUMP_LIGHTWEIGHT, True) == (SUCCESS,)
        assert ok(driver.cuCoredumpGetAttributeGlobal(s.CU_COREDUMP_TRIGGER_HOST)) is False
        assert ok(driver.cuCoredumpGetAttributeGlobal(s.CU_COREDUMP_LIGHTWEIGHT)) is True
    finally:
        for attribute, value in saved.items():
            driver.cuCoredumpSetAttributeGlobal(attribute, value)


def test_coredump_family_round_trips(env):
    # Every boolean setting of the family takes any truth value and reads
    # True/False; the file and pipe names take bytes and str (cuda.bindings'
    # test_cuda_coredump_attr sets b"corefile" and b"corepipe").
    s = driver.CUcoredumpSettings
    bools = (s.CU_COREDUMP_ENABLE_ON_EXCEPTION, s.CU_COREDUMP_TRIGGER_HOST, s.CU_COREDUMP_LIGHTWEIGHT,
             s.CU_COREDUMP_ENABLE_USER_TRIGGER)
    names = (s.CU_COREDUMP_FILE, s.CU_COREDUMP_PIPE)
    saved = {a: ok(driver.cuCoredumpGetAttributeGlobal(a)) for a in bools + names}
    assert all(type(saved[a]) is bool for a in bools), saved
    try:
        for attribute in bools:
            for value, expected in ((True, True), (0, False), (1, True), (False, False)):
                assert driver.cuCoredumpSetAttributeGlobal(attribute, value) == (SUCCESS,), (attribute, value)
                assert ok(driver.cuCoredumpGetAttributeGlobal(attribute)) is expected, (attribute, value)
        assert driver.cuCoredumpSetAttributeGlobal(s.CU_COREDUMP_FILE, b"corefile") == (SUCCESS,)
        assert driver.cuCoredumpSetAttributeGlobal(s.CU_COREDUMP_PIPE, "corepipe") == (SUCCESS,)
        assert ok(driver.cuCoredumpGetAttributeGlobal(s.CU_COREDUMP_FILE)) == b"corefile"
        assert ok(driver.cuCoredumpGetAttributeGlobal(s.CU_COREDUMP_PIPE)) == b"corepipe"
    finally:
        for attribute, value in saved.items():
            if attribute in names and not value:
                continue  # an empty name is not a setting the driver takes back
            driver.cuCoredumpSetAttributeGlobal(attribute, value)


def test_conditional_node_gives_its_graphs(env):
    # cuda.bindings' test_conditional: the driver's `size` graphs after the call.
    graph = ok(driver.cuGraphCreate(0))
    try:
        handle = ok(driver.cuGraphConditionalHandleCreate(graph, env.ctx, 0, 0))
        params = driver.CUgraphNodeParams()
        params.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        params.conditional.handle = handle
        params.conditional.type = driver.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_IF
        params.conditional.size = 2
        params.conditional.ctx = env.ctx
        assert [int(g) for g in params.conditional.phGraph_out] == [0, 0]
        ok(driver.cuGraphAddNode(graph, None, None, 0, params))
        bodies = params.conditional.phGraph_out
        assert len(bodies) == 2 and all(int(g) != 0 for g in bodies)
        assert all(isinstance(g, driver.CUgraph) for g in bodies)
        ok(driver.cuGraphAddEmptyNode(bodies[0], None, 0))  # a graph the driver made, usable
    finally:
        driver.cuGraphDestroy(graph)


def test_batch_memcpy_node_copies_the_lists_set_together(env, stream):
    # A batch memcpy node from CUgraphNodeParams.memcpyBatch: dsts and srcs set
    # together through the union member's view, whose arrays the outer struct keeps.
    nbytes = 64
    host_in = [bytes([i + 1]) * nbytes for i in range(2)]
    devs = [ok(driver.cuMemAlloc(nbytes)) for _ in range(4)]
    graph = ok(driver.cuGraphCreate(0))
    try:
        for d, data in zip(devs[:2], host_in):
            ok(driver.cuMemcpyHtoD(d, data, nbytes))
        sizes = (ctypes.c_size_t * 2)(nbytes, nbytes)
        params = driver.CUgraphNodeParams()
        params.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMCPY_BATCH
        params.memcpyBatch.set_dsts_srcs(devs[2:], devs[:2])
        params.memcpyBatch.sizes = ctypes.addressof(sizes)
        attrs = driver.CUmemcpyAttributes()
        attrs.srcAccessOrder = driver.CUmemcpySrcAccessOrder.CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
        attrs.srcLocHint.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        attrs.dstLocHint.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        idxs = (ctypes.c_size_t * 1)(0)
        params.memcpyBatch.attrs = [attrs]
        params.memcpyBatch.attrsIdxs = ctypes.addressof(idxs)
        params.memcpyBatch.numAttrs = 1
        params.memcpyBatch.ctx = env.ctx
        gc.collect()  # the views above are gone: the arrays live on in `params`
        assert params.memcpyBatch.count == 2
        assert [int(p) for p in params.memcpyBatch.srcs] == [int(d) for d in devs[:2]]
        err, node = driver.cuGraphAddNode(graph, None, None, 0, params)
        if err != SUCCESS:
            pytest.skip(f"this driver does not add batch memcpy nodes: {err!r}")
        exe = ok(driver.cuGraphInstantiate(graph, 0))
        try:
            ok(driver.cuGraphLaunch(exe, stream))
            ok(driver.cuStreamSynchronize(stream))
        finally:
            driver.cuGraphExecDestroy(exe)
        for d, data in zip(devs[2:], host_in):
            out = bytearray(nbytes)
            ok(driver.cuMemcpyDtoH(out, d, nbytes))
            assert bytes(out) == data
    finally:
        driver.cuGraphDestroy(graph)
        for d in devs:
            driver.cuMemFree(d)
