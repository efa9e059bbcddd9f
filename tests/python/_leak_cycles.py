"""Runs one create/destroy cycle many times and reports what it left behind.

    python _leak_cycles.py CASE CYCLES WARMUP

After WARMUP cycles (caches, pools and the libraries' one-time state fill up
there), it runs CYCLES more, in WINDOWS equal windows, and prints one line
`# result {json}` with:
  heap_windows   growth of the bytes malloc holds (mallinfo2: in use in the
                 heap and in chunks it mapped itself) over each window; a leak
                 grows every window by its share, a cache filling once only one
  rss_bytes      growth of the resident set (/proc/self/statm) over the CYCLES,
                 for reference: the allocator's arenas and trims move it by
                 megabytes either way
  objects        growth of the objects the garbage collector tracks
  traced_bytes   growth of the Python allocations tracemalloc counts
  device_bytes   growth of the device memory in use (cuMemGetInfo), GPU cases only
Each is measured after gc.collect(). Run by test_leaks.py in a child process,
so a crash is reported with its case rather than lost, and so that one case's
memory never counts against another.
"""
import ctypes
import gc
import json
import os
import sys
import tracemalloc

ARCH = "sm_90"
KERNEL = 'extern "C" __global__ void scale(float* p, float f, int n) { int i = threadIdx.x; if (i < n) p[i] *= f; }'
CALLER = r"""
extern __device__ float twice(float x);
extern "C" __global__ void apply(float* data) { data[threadIdx.x] = twice(data[threadIdx.x]); }
"""
CALLEE = "__device__ float twice(float x) { return 2.0f * x; }"

PAGE = os.sysconf("SC_PAGE_SIZE")


WINDOWS = 4


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


_mallinfo2 = ctypes.CDLL(None).mallinfo2
_mallinfo2.restype = _Mallinfo2
_mallinfo2.argtypes = []


def heap_bytes():
    info = _mallinfo2()
    return info.uordblks + info.hblkhd


# ---------------------------------------------------------------------------
# Cases without a GPU: each returns the function one cycle runs.

def bindings_nvrtc():
    from cubind.bindings import nvrtc
    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS
    source = KERNEL.encode()
    options = [b"-arch=" + ARCH.encode()]

    def cycle():
        status, prog = nvrtc.nvrtcCreateProgram(source, b"scale.cu", 0, [], [])
        assert status is ok, status
        assert nvrtc.nvrtcAddNameExpression(prog, b"scale")[0] is ok
        status, = nvrtc.nvrtcCompileProgram(prog, len(options), options)
        assert status is ok, status
        status, size = nvrtc.nvrtcGetCUBINSize(prog)
        status, cubin = nvrtc.nvrtcGetCUBIN(prog)
        assert status is ok and cubin[:4] == b"\x7fELF" and len(cubin) == size
        status, log = nvrtc.nvrtcGetProgramLog(prog)
        assert status is ok
        status, lowered = nvrtc.nvrtcGetLoweredName(prog, b"scale")
        assert lowered == b"scale", lowered
        assert nvrtc.nvrtcDestroyProgram(prog)[0] is ok
    return cycle


def _ptx(arch=ARCH):
    from cubind.bindings import nvrtc
    options = [b"-arch=" + arch.encode()]
    status, prog = nvrtc.nvrtcCreateProgram(KERNEL.encode(), b"scale.cu", 0, [], [])
    assert nvrtc.nvrtcCompileProgram(prog, len(options), options)[0] == 0
    ptx = nvrtc.nvrtcGetPTX(prog)[1]
    nvrtc.nvrtcDestroyProgram(prog)
    return ptx


def bindings_nvjitlink():
    from cubind.bindings import nvjitlink
    ptx = _ptx()
    options = ["-arch=" + ARCH]

    def cycle():
        handle = nvjitlink.create(len(options), options)
        nvjitlink.add_data(handle, nvjitlink.InputType.NVJITLINK_INPUT_PTX, ptx, len(ptx), "scale.ptx")
        nvjitlink.complete(handle)
        size = nvjitlink.get_linked_cubin_size(handle)
        cubin = nvjitlink.get_linked_cubin(handle)
        assert cubin[:4] == b"\x7fELF" and len(cubin) == size
        nvjitlink.get_info_log(handle)
        nvjitlink.destroy(handle)
    return cycle


def core_program():
    from cubind.core import Program, ProgramOptions

    def cycle():
        program = Program(KERNEL, "c++", ProgramOptions(arch=ARCH, name="scale.cu"))
        code = program.compile("cubin", name_expressions=("scale",))
        assert code.code[:4] == b"\x7fELF"
        assert code.symbol_mapping == {"scale": b"scale"}
        program.close()
    return cycle


def core_linker():
    from cubind.core import Linker, LinkerOptions, ObjectCode, Program, ProgramOptions
    options = ProgramOptions(arch=ARCH, relocatable_device_code=True, link_time_optimization=True)
    caller = Program(CALLER, "c++", options).compile("ltoir").code
    callee = Program(CALLEE, "c++", options).compile("ltoir").code

    def cycle():
        linker = Linker(ObjectCode.from_ltoir(caller, name="caller"), ObjectCode.from_ltoir(callee, name="callee"),
                        options=LinkerOptions(arch=ARCH, link_time_optimization=True))
        code = linker.link("cubin")
        assert code.code[:4] == b"\x7fELF"
        linker.close()
    return cycle


def bindings_nvjitlink_rejected():
    from cubind.bindings import nvjitlink
    options = ["-arch=" + ARCH, "-ptx"]  # -ptx needs -lto: nvJitLinkCreate rejects them

    def cycle():
        try:
            nvjitlink.create(len(options), options)
        except nvjitlink.nvJitLinkError:
            pass
        else:
            raise AssertionError("nvJitLinkCreate accepted -ptx without -lto")
    return cycle


def core_linker_rejected():
    from cubind.core import Linker, LinkerOptions, NvJitLinkError, ObjectCode
    ptx = ObjectCode.from_ptx(_ptx().rstrip(b"\0"), name="scale.ptx")

    def cycle():
        try:
            Linker(ptx, options=LinkerOptions(arch=ARCH, ptx=True))
        except NvJitLinkError as e:
            assert "-lto" in str(e), str(e)
        else:
            raise AssertionError("nvJitLinkCreate accepted -ptx without -lto")
    return cycle


def core_object_code():
    from cubind.core import ObjectCode, Program, ProgramOptions
    cubin = Program(KERNEL, "c++", ProgramOptions(arch=ARCH)).compile("cubin").code
    ptx = _ptx().rstrip(b"\0")

    def cycle():
        a = ObjectCode.from_cubin(cubin, name="scale", symbol_mapping={"scale": b"scale"})
        b = ObjectCode.from_ptx(ptx, name="scale.ptx")
        assert a.code is not None and b.code_type == "ptx"
    return cycle


def bindings_handles_structs():
    from cubind.bindings import driver, nvrtc, runtime
    attribute = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    host = bytearray(64)

    def cycle():
        stream = driver.CUstream(0x1000)
        assert int(stream) == 0x1000 and hash(stream) == hash(driver.CUstream(0x1000))
        repr(stream)
        ptr = driver.CUdeviceptr(0x2000)
        assert ptr == driver.CUdeviceptr(0x2000)
        handles = (driver.CUevent(1), driver.CUcontext(2), driver.CUmodule(3), driver.CUfunction(4),
                   driver.CUlibrary(5), driver.CUkernel(6), runtime.cudaStream_t(7), nvrtc.nvrtcProgram(8))
        assert [int(h) for h in handles] == list(range(1, 9))
        copy = driver.CUDA_MEMCPY3D()
        copy.srcHost = host
        copy.dstDevice = ptr
        copy.srcArray = driver.CUarray(7)
        copy.WidthInBytes = 16
        copy.Height = 2
        copy.Depth = 1
        assert copy.dstDevice == ptr
        str(copy)
        launch = driver.CUlaunchAttribute()
        launch.id = attribute
        launch.value.clusterDim.x = 2
        config = driver.CUlaunchConfig()
        config.hStream = stream
        config.attrs = [launch, launch]
        config.numAttrs = 2
        assert config.attrs[1].value.clusterDim.x == 2
        prop = driver.CUmemAllocationProp()
        prop.location.id = 3
        prop.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        signal = driver.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()
        signal.params.fence.value = 5
        signal.flags = 1
        assert signal.flags == 1
        desc = driver.CUDA_RESOURCE_DESC()
        desc.res.linear.devPtr = ptr
        assert desc.res.linear.devPtr == ptr
    return cycle


# ---------------------------------------------------------------------------
# Cases on a GPU (test_leaks.py marks them gpu)

_device_state = {}


def _device():
    if not _device_state:
        from cubind.core import Device
        device = Device(0)
        device.set_current()
        _device_state["device"] = device
        _device_state["stream"] = device.create_stream()
    return _device_state["device"], _device_state["stream"]


def device_bytes_used():
    from cubind.bindings import driver
    status, free, total = driver.cuMemGetInfo()
    assert status == 0, status
    return total - free


def gpu_stream():
    device, _ = _device()

    def cycle():
        device.create_stream().close()
    return cycle


def gpu_event():
    device, stream = _device()

    def cycle():
        device.create_event().close()
        stream.record().close()
    return cycle


def _buffer_cycle(mr, size):
    _, stream = _device()

    def cycle():
        buffer = mr.allocate(size, stream=stream)
        buffer.close(stream)
    return cycle


def gpu_buffer_device():
    device, _ = _device()
    return _buffer_cycle(device.memory_resource, 1 << 16)


def gpu_buffer_device_own_pool():
    from cubind.core import DeviceMemoryResource, DeviceMemoryResourceOptions
    device, _ = _device()
    return _buffer_cycle(DeviceMemoryResource(device, DeviceMemoryResourceOptions(max_size=1 << 24)), 1 << 16)


def gpu_buffer_pinned():
    from cubind.core import PinnedMemoryResource
    _device()
    return _buffer_cycle(PinnedMemoryResource(), 1 << 16)


def gpu_buffer_legacy_pinned():
    from cubind.core import LegacyPinnedMemoryResource
    _device()
    return _buffer_cycle(LegacyPinnedMemoryResource(), 1 << 16)


def gpu_object_code():
    from cubind.core import ObjectCode, Program, ProgramOptions
    device, _ = _device()
    cubin = Program(KERNEL, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").code

    def cycle():
        kernel = ObjectCode.from_cubin(cubin, name="scale").get_kernel("scale")
        assert kernel.num_arguments == 3
    return cycle


CASES = {f.__name__: f for f in (bindings_nvrtc, bindings_nvjitlink, bindings_nvjitlink_rejected, core_program,
                                 core_linker, core_linker_rejected, core_object_code,
                                 bindings_handles_structs, gpu_stream, gpu_event, gpu_buffer_device,
                                 gpu_buffer_device_own_pool, gpu_buffer_pinned, gpu_buffer_legacy_pinned,
                                 gpu_object_code)}


def measure(case, cycles, warmup):
    cycle = CASES[case]()
    gpu = case.startswith("gpu_")
    for _ in range(warmup):
        cycle()
    if gpu:
        _device_state["stream"].sync()
        # Its first call imports cubind.bindings.driver: before the snapshots,
        # or the module's objects would count as the cycles' growth.
        device_bytes_used()
    gc.collect()
    tracemalloc.start()
    traced0 = tracemalloc.get_traced_memory()[0]
    objects0 = len(gc.get_objects())
    rss0 = rss_bytes()
    device0 = device_bytes_used() if gpu else 0
    heap_windows = []
    per_window = cycles // WINDOWS
    for _ in range(WINDOWS):
        heap0 = heap_bytes()
        for _ in range(per_window):
            cycle()
        gc.collect()
        heap_windows.append(heap_bytes() - heap0)
    if gpu:
        _device_state["stream"].sync()
    gc.collect()
    device1 = device_bytes_used() if gpu else 0
    rss1 = rss_bytes()
    objects1 = len(gc.get_objects())
    traced1 = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {"case": case, "cycles": per_window * WINDOWS, "warmup": warmup, "cycles_per_window": per_window,
            "heap_windows": heap_windows, "rss_bytes": rss1 - rss0, "objects": objects1 - objects0,
            "traced_bytes": traced1 - traced0, "device_bytes": device1 - device0,
            "rss_start": rss0}


def main():
    case, cycles, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print("# result " + json.dumps(measure(case, cycles, warmup)), flush=True)


if __name__ == "__main__":
    main()
