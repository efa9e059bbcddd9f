"""One kernel fault per process, for test_faults_gpu.py.

    python _fault_scenarios.py API FAULT

API is "bindings" or "core"; FAULT is "illegal_address" (a store to address
0x10, which nothing maps), "trap" (asm("trap;")) or "assert" (a failing device
assert). The process makes a stream, an event, device memory and loaded code,
launches the faulting kernel, and checks that the sync reports the fault's
error, that later calls report the same error (the context is lost), and then
ends with its objects released or still alive. It prints "# checked" when
every check passed; the caller also checks the exit code and stderr.
"""
import ctypes
import sys

EXPECTED = {
    "illegal_address": "CUDA_ERROR_ILLEGAL_ADDRESS",
    "trap": "CUDA_ERROR_LAUNCH_FAILED",
    "assert": "CUDA_ERROR_ASSERT",
}

# Each kernel takes one pointer, so every fault launches the same way.
BODIES = {
    "illegal_address": "*target = 1;",
    "trap": 'asm volatile("trap;");',
    "assert": "assert(target == nullptr);",
}


def sources(fault):
    """The fault's source. NVRTC provides assert without a header; the second
    assert variant spells out its expansion, for an NVRTC that does not."""
    kernel = 'extern "C" __global__ void fault(int* target) { %s }\n' % BODIES[fault]
    if fault != "assert":
        return [kernel]
    return [kernel,
            'extern "C" __device__ void __assertfail(const char*, const char*, unsigned int, const char*, '
            'unsigned long);\n#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, '
            '__func__, 1))\n' + kernel]


def compile_cubin(arch, fault):
    from cubind.bindings import nvrtc
    logs = []
    for source in sources(fault):
        status, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"fault.cu", 0, None, None)
        assert status == 0, status
        options = [f"-arch=sm_{arch}".encode()]
        status, = nvrtc.nvrtcCompileProgram(prog, len(options), options)
        if status == 0:
            status, cubin = nvrtc.nvrtcGetCUBIN(prog)
            assert status == 0, status
            nvrtc.nvrtcDestroyProgram(prog)
            return cubin
        logs.append(nvrtc.nvrtcGetProgramLog(prog)[1].decode(errors="replace"))
        nvrtc.nvrtcDestroyProgram(prog)
    raise AssertionError("NVRTC compiled no variant:\n" + "\n".join(logs))


def bindings(fault):
    from cubind.bindings import driver as cu
    SUCCESS = cu.CUresult.CUDA_SUCCESS
    expected = getattr(cu.CUresult, EXPECTED[fault])

    def ok(result):
        assert result[0] == SUCCESS, result
        return result[1] if len(result) == 2 else result[1:]

    ok(cu.cuInit(0))
    dev = ok(cu.cuDeviceGet(0))
    ctx = ok(cu.cuDevicePrimaryCtxRetain(dev))
    ok(cu.cuCtxSetCurrent(ctx))
    attribute = cu.CUdevice_attribute
    major = ok(cu.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    minor = ok(cu.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    module = ok(cu.cuModuleLoadData(compile_cubin(major * 10 + minor, fault)))
    kernel = ok(cu.cuModuleGetFunction(module, b"fault"))
    stream = ok(cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING))
    event = ok(cu.cuEventCreate(0))
    memory = ok(cu.cuMemAlloc(1 << 20))

    ok(cu.cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, stream, ((0x10,), (ctypes.c_void_p,)), None))
    status = cu.cuStreamSynchronize(stream)[0]
    assert status == expected, f"cuStreamSynchronize returned {status!r}, expected {expected!r}"
    # The error is sticky: the context is lost, and every later call says so.
    for again in (cu.cuCtxSynchronize(), cu.cuMemAlloc(256), cu.cuEventRecord(event, stream)):
        assert again[0] == expected, f"after the fault: {again[0]!r}, expected {expected!r}"
    # Releasing what was made before the fault returns (an error or not) without crashing.
    for release in (cu.cuMemFree(memory), cu.cuEventDestroy(event), cu.cuStreamDestroy(stream),
                    cu.cuModuleUnload(module)):
        assert isinstance(release[0], cu.CUresult), release
    cu.cuDevicePrimaryCtxRelease(dev)


def core(fault):
    import cubind.core as cc
    dev = cc.Device(0)
    dev.set_current()
    code = cc.ObjectCode.from_cubin(compile_cubin(dev.arch, fault), name="fault")
    kernel = code.get_kernel("fault")
    stream = dev.create_stream()
    before = dev.allocate(1 << 20, stream=stream)  # left alive until exit
    freed = dev.allocate(1 << 20, stream=stream)
    event = stream.record()
    stream.sync()

    cc.launch(stream, cc.LaunchConfig(grid=1, block=1), kernel, 0x10)
    try:
        stream.sync()
    except cc.CUDAError as e:
        assert EXPECTED[fault] in str(e), f"the sync raised {e!r}; expected {EXPECTED[fault]}"
    else:
        raise AssertionError(f"the sync raised nothing; expected {EXPECTED[fault]}")
    for again in (dev.sync, lambda: dev.allocate(256, stream=stream), event.sync):
        try:
            again()
        except cc.CUDAError as e:
            assert EXPECTED[fault] in str(e), f"after the fault: {e!r}; expected {EXPECTED[fault]}"
        else:
            raise AssertionError(f"{again} worked in a lost context")
    # An explicit close reports the lost context; objects left alive are released at exit.
    try:
        freed.close(stream)
    except cc.CUDAError as e:
        assert EXPECTED[fault] in str(e), repr(e)
    globals()["kept"] = (before, event, stream, kernel, code)


if __name__ == "__main__":
    api, fault = sys.argv[1], sys.argv[2]
    (bindings if api == "bindings" else core)(fault)
    print("# checked", flush=True)
