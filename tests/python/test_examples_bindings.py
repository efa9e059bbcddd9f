"""The cuda.bindings samples of examples/python/bindings, on both implementations.

Each sample is a program written for NVIDIA's cuda.bindings; examples/python/run_example.py
runs it unchanged on cubind.bindings (by making `cuda.bindings.X` name `cubind.bindings.X`)
or on cuda.bindings itself, which proves the idioms are the real ones.

Without a GPU: every sample's kernels compile through its own NVRTC code, every sample
ends with its "no GPU" line and exit status 0, every name a sample takes from
cuda.bindings exists, and the calling idioms the samples rely on are accepted (checked
one by one, on both implementations). On a GPU (marker `gpu`, `multi_gpu` for the peer
sample) each sample must print PASSED on both.

Run as a script, this file checks one idiom in a fresh interpreter:
    python test_examples_bindings.py IMPL IDIOM
"""

import ast
import ctypes
import importlib
import importlib.util
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(REPO, "examples", "python")
SAMPLES_DIR = os.path.join(EXAMPLES, "bindings")
sys.path.insert(0, EXAMPLES)
import run_example  # noqa: E402

SAMPLES = sorted(name for name in os.listdir(SAMPLES_DIR)
                 if name.endswith(".py") and name != "helpers.py")
NEEDS_NUMPY = {"vector_add_drv.py", "conjugate_gradient_multi_block_cg.py", "iso_fd_stencil.py"}
# Samples of modules that cuda-bindings 13.0 lacks: on NVIDIA's package they run with
# the newer cuda-bindings that scripts/setup.sh installs in .cuda-bindings-new.
NEEDS_NEWER = {"nvfatbin_build.py", "nvml_device_query.py"}
# Samples with no kernel to compile.
NO_KERNELS = {"nvml_device_query.py", "cufile_read_to_device.py"}
TWO_GPUS = {"simple_p2p.py"}
IMPLS = ("cubind", "cuda")
ARCH = "90"



def _gpu_count():
    from conftest import GPU_COUNT
    return GPU_COUNT


def _needs(sample, impl):
    if sample in NEEDS_NUMPY and importlib.util.find_spec("numpy") is None:
        pytest.skip(f"{sample} uses NumPy, which is not installed")
    if impl == "cuda" and importlib.util.find_spec("cuda") is None:
        pytest.skip("NVIDIA's cuda.bindings is not installed")
    if impl == "cuda" and sample in NEEDS_NEWER:
        from conftest import newer_cuda_bindings_missing
        if newer_cuda_bindings_missing():
            pytest.skip(f"{sample} needs a newer cuda-bindings than 13.0: {newer_cuda_bindings_missing()}")


def _env(sample, impl):
    """The environment of a sample's run: NEEDS_NEWER samples on NVIDIA's package take the newer cuda-bindings."""
    if impl != "cuda" or sample not in NEEDS_NEWER:
        return None
    from conftest import newer_cuda_bindings_env
    return newer_cuda_bindings_env()


def _sample_path(sample):
    return os.path.join(SAMPLES_DIR, sample)


def _params():
    """(sample, impl) pairs."""
    return [pytest.param(sample, impl, id=f"{sample[:-3]}-{impl}") for sample in SAMPLES for impl in IMPLS]


def _implementation_line(result, impl):
    first = result.stdout.splitlines()[0] if result.stdout else ""
    module = "cubind.bindings.driver" if impl == "cubind" else "cuda.bindings.driver"
    assert first.startswith(f"implementation: {impl} ({module} from "), result.stdout + result.stderr


def test_seventeen_samples_each_in_the_readme():
    with open(os.path.join(SAMPLES_DIR, "README.md")) as f:
        readme = f.read()
    assert len(SAMPLES) == 17, SAMPLES
    missing = [s for s in SAMPLES if f"bindings/{s}" not in readme]
    assert not missing, f"samples the README does not list: {missing}"


@pytest.mark.parametrize("sample,impl", _params())
def test_kernels_compile_with_nvrtc(sample, impl):
    """The sample's own compile_kernels() (NVRTC to PTX for compute_90) on each implementation."""
    if sample in NO_KERNELS:
        pytest.skip(f"{sample} has no kernels")
    _needs(sample, impl)
    result = run_example.run_sample(_sample_path(sample), impl, compile_arch=ARCH, timeout=300,
                                    env=_env(sample, impl))
    assert result.returncode == 0, result.stdout + result.stderr
    _implementation_line(result, impl)
    assert f"compiled the kernels of {sample} for compute_{ARCH}" in result.stdout


@pytest.mark.parametrize("sample,impl", _params())
def test_without_gpu_the_sample_says_so_and_exits_0(sample, impl):
    if _gpu_count() > 0:
        pytest.skip("this machine has a GPU: the gpu tests run the samples")
    _needs(sample, impl)
    result = run_example.run_sample(_sample_path(sample), impl, timeout=120, env=_env(sample, impl))
    assert result.returncode == 0, result.stdout + result.stderr
    _implementation_line(result, impl)
    last = result.stdout.splitlines()[-1]
    assert last.startswith("no GPU: ") and last.endswith("; skipped"), result.stdout


def test_runner_refuses_an_unknown_implementation():
    with pytest.raises(ValueError, match="impl must be one of"):
        run_example.run_sample(_sample_path(SAMPLES[0]), "cupy")


def test_runner_on_cubind_never_reaches_cuda_bindings():
    """A `cuda.*` module cubind has no counterpart of fails to import instead of
    quietly coming from NVIDIA's package."""
    code = ("import sys; sys.path.insert(0, %r); import run_example; run_example.use_cubind()\n"
            "from cuda.bindings import driver, nvrtc\n"
            "assert driver.__name__ == 'cubind.bindings.driver' and nvrtc.__name__ == 'cubind.bindings.nvrtc'\n"
            "try:\n    import cuda.core\nexcept ImportError as e:\n    print('refused:', e)\n") % EXAMPLES
    from conftest import run_python
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert "refused: cuda.core has no cubind.bindings counterpart" in result.stdout


def _names_used(sample):
    """Every attribute chain a sample (or its helpers) takes from driver, runtime or nvrtc."""
    names = set()
    for path in (_sample_path(sample), os.path.join(SAMPLES_DIR, "helpers.py")):
        with open(path) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            chain = []
            while isinstance(node, ast.Attribute):
                chain.append(node.attr)
                node = node.value
            if isinstance(node, ast.Name) and node.id in ("driver", "runtime", "nvrtc", "nvvm", "nvfatbin", "cufile") and chain:
                names.add((node.id, tuple(reversed(chain))))
    return names


def _resolve(package, module, chain):
    obj = importlib.import_module(f"{package}.{module}")
    for part in chain:
        # A struct's fields and members hang off instances, not the class.
        if isinstance(obj, type) and not hasattr(obj, part):
            obj = obj()
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("sample", SAMPLES)
def test_every_name_the_sample_uses_exists(sample, impl):
    if impl == "cuda" and importlib.util.find_spec("cuda") is None:
        pytest.skip("NVIDIA's cuda.bindings is not installed")
    package = "cubind.bindings" if impl == "cubind" else "cuda.bindings"
    missing = []
    for module, chain in sorted(_names_used(sample)):
        if impl == "cuda" and importlib.util.find_spec(f"cuda.bindings.{module}") is None:
            continue  # a module of a newer cuda-bindings (the differential suite compares its names)
        try:
            _resolve(package, module, chain)
        except AttributeError:
            missing.append(f"{module}.{'.'.join(chain)}")
    assert not missing, f"{package} lacks {missing}"


# The calling idioms the samples use, each checked in a fresh interpreter on both
# implementations. A call that reaches the missing driver has had its arguments
# accepted (both implementations convert arguments before they load libcuda);
# runtime calls answer with a status here, since cudart loads without a driver.
def _driver_missing(exc):
    text = str(exc)
    # cuda-bindings 13.5 reports it through cuda.pathfinder's DynamicLibNotFoundError.
    if type(exc).__name__ == "DynamicLibNotFoundError" and '"cuda" is an NVIDIA driver library' in text:
        return True
    return "libcuda" in text and ("dlopen" in text or "could not load the CUDA driver" in text)


def _call(fn, *args):
    try:
        return fn(*args)
    except (RuntimeError, OSError) as exc:
        if _driver_missing(exc):
            return None
        raise


def _status(result, runtime):
    assert isinstance(result, tuple) and isinstance(result[0], runtime.cudaError_t), result


def idiom_nvrtc_ptx_into_bytes(driver, runtime, nvrtc):
    err, prog = nvrtc.nvrtcCreateProgram(b'extern "C" __global__ void k(int *p) { *p = 1; }', b"k.cu", 0, [], [])
    opts = [b"--gpu-architecture=compute_90"]
    assert nvrtc.nvrtcCompileProgram(prog, len(opts), opts)[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS
    size = nvrtc.nvrtcGetPTXSize(prog)[1]
    ptx = b" " * size
    assert nvrtc.nvrtcGetPTX(prog, ptx)[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS
    assert b".entry k" in ptx


def idiom_nvrtc_log_into_bytes(driver, runtime, nvrtc):
    err, prog = nvrtc.nvrtcCreateProgram(b"__global__ void k() { undefined_name; }", b"bad.cu", 0, [], [])
    assert nvrtc.nvrtcCompileProgram(prog, 0, [])[0] == nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION
    logSize = nvrtc.nvrtcGetProgramLogSize(prog)[1]
    log = b" " * logSize
    nvrtc.nvrtcGetProgramLog(prog, log)
    assert b"undefined_name" in log


def idiom_nvrtc_lowered_name(driver, runtime, nvrtc):
    err, prog = nvrtc.nvrtcCreateProgram(b"template <typename T> __global__ void k(T *p) {}", b"t.cu", 0, [], [])
    nvrtc.nvrtcAddNameExpression(prog, b"k<float>")
    assert nvrtc.nvrtcCompileProgram(prog, 0, [])[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS
    name = nvrtc.nvrtcGetLoweredName(prog, b"k<float>")[1]
    assert isinstance(name, bytes) and name.startswith(b"_Z"), name


def idiom_status_names(driver, runtime, nvrtc):
    assert isinstance(runtime.cudaGetErrorName(runtime.cudaError_t.cudaErrorInvalidValue)[1], bytes)
    assert isinstance(nvrtc.nvrtcGetErrorString(nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION)[1], bytes)
    assert driver.CUresult.CUDA_ERROR_INVALID_VALUE.value == 1


def idiom_dim3_float(driver, runtime, nvrtc):
    grid = runtime.dim3()
    grid.x = 192 / 16
    assert grid.x == 12


def idiom_launch_float_grid_and_numpy_style_address(driver, runtime, nvrtc):
    value = ctypes.c_uint64(0)
    params = (ctypes.c_void_p * 1)(ctypes.addressof(value))
    _call(driver.cuLaunchKernel, driver.CUfunction(), 50255 / 256, 1, 1, 256, 1, 1, 0, 0,
          ctypes.addressof(params), 0)
    _call(driver.cuLaunchCooperativeKernel, driver.CUfunction(), 4, 1, 1, 256, 1, 1, 0,
          runtime.cudaStream_t(), ctypes.addressof(params))


def idiom_launch_tuple_arguments(driver, runtime, nvrtc):
    args = ((driver.CUdeviceptr(256), 4096, 2.5, runtime.cudaTextureObject_t(3)),
            (None, ctypes.c_size_t, ctypes.c_float, None))
    _call(driver.cuLaunchKernel, driver.CUfunction(), 1, 1, 1, 32, 1, 1, 0, runtime.cudaStream_t(), args, 0)


def idiom_context_module_and_copies(driver, runtime, nvrtc):
    _call(driver.cuCtxCreate, None, 0, driver.CUdevice(0))
    _call(driver.cuModuleLoadData, b"PTX bytes")
    _call(driver.cuModuleGetFunction, driver.CUmodule(), b"kernel")
    host = (ctypes.c_float * 4)()
    _call(driver.cuMemcpyHtoD, driver.CUdeviceptr(0), host, ctypes.sizeof(host))
    _call(driver.cuMemcpyDtoHAsync, host, driver.CUdeviceptr(0), ctypes.sizeof(host), driver.CUstream(0))
    _call(driver.cuDeviceGetName, 128, driver.CUdevice(0))


def idiom_virtual_memory(driver, runtime, nvrtc):
    prop = driver.CUmemAllocationProp()
    prop.type = driver.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = 0
    access = driver.CUmemAccessDesc()
    access.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    access.location.id = 0
    access.flags = driver.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    _call(driver.cuMemGetAllocationGranularity, prop,
          driver.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM)
    _call(driver.cuMemAddressReserve, 1 << 21, 0, 0, 0)
    _call(driver.cuMemCreate, 1 << 21, prop, 0)
    _call(driver.cuMemMap, driver.CUdeviceptr(0), 1 << 21, 0, driver.CUmemGenericAllocationHandle(0), 0)
    _call(driver.cuMemSetAccess, driver.CUdeviceptr(0), 1 << 21, [access], 1)


def idiom_graph_nodes_built_by_hand(driver, runtime, nvrtc):
    copy = driver.CUDA_MEMCPY3D()
    copy.srcMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_HOST
    copy.srcHost = 4096
    copy.dstMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_DEVICE
    copy.dstDevice = 8192
    copy.WidthInBytes, copy.Height, copy.Depth = 64, 1, 1
    memset = driver.CUDA_MEMSET_NODE_PARAMS()
    memset.dst = 8192
    memset.value, memset.elementSize, memset.width, memset.height = 0, 4, 16, 1
    kernel = driver.CUDA_KERNEL_NODE_PARAMS()
    kernel.func = driver.CUfunction()
    kernel.gridDimX = kernel.gridDimY = kernel.gridDimZ = 1
    kernel.kernelParams = ((8192, 4096, 16, 1), (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t))
    graph = driver.CUgraph()
    _call(driver.cuGraphAddMemcpyNode, graph, None, 0, copy, driver.CUcontext())
    _call(driver.cuGraphAddMemsetNode, graph, None, 0, memset, driver.CUcontext())
    _call(driver.cuGraphAddKernelNode, graph, [driver.CUgraphNode(), driver.CUgraphNode()], 2, kernel)
    _call(driver.cuGraphGetNodes, graph)


def idiom_runtime_streams_graphs_and_pools(driver, runtime, nvrtc):
    stream = runtime.cudaStream_t()
    _status(runtime.cudaStreamCreateWithFlags(runtime.cudaStreamNonBlocking), runtime)
    _status(runtime.cudaStreamBeginCapture(stream, runtime.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal), runtime)
    _status(runtime.cudaGraphGetNodes(runtime.cudaGraph_t()), runtime)
    _status(runtime.cudaGraphInstantiate(runtime.cudaGraph_t(), 0), runtime)
    _status(runtime.cudaMallocAsync(64, stream), runtime)
    host = (ctypes.c_char * 64)()
    _status(runtime.cudaMemcpyAsync(0, ctypes.addressof(host), 64, runtime.cudaMemcpyKind.cudaMemcpyHostToDevice, stream),
            runtime)
    _status(runtime.cudaMemPoolSetAttribute(runtime.cudaMemPool_t(), runtime.cudaMemPoolAttr.cudaMemPoolAttrReleaseThreshold,
                                            driver.cuuint64_t(0xFFFFFFFFFFFFFFFF)), runtime)
    _status(runtime.cudaMemPoolGetAttribute(runtime.cudaMemPool_t(),
                                            runtime.cudaMemPoolAttr.cudaMemPoolAttrReservedMemCurrent), runtime)
    _status(runtime.cudaEventCreateWithFlags(runtime.cudaEventBlockingSync), runtime)


def idiom_runtime_host_and_peer_memory(driver, runtime, nvrtc):
    _status(runtime.cudaMemcpy(0, (ctypes.c_float * 2)(), 8, runtime.cudaMemcpyKind.cudaMemcpyHostToDevice), runtime)
    _status(runtime.cudaHostAlloc(64, runtime.cudaHostAllocMapped), runtime)
    _status(runtime.cudaHostGetDevicePointer(4096, 0), runtime)
    _status(runtime.cudaMallocManaged(40, runtime.cudaMemAttachGlobal), runtime)
    _status(runtime.cudaDeviceCanAccessPeer(0, 1), runtime)
    _status(runtime.cudaMemcpyPeer(0, 1, 0, 0, 8), runtime)
    assert runtime.cudaDeviceMapHost and runtime.cudaArrayCubemap


def idiom_cubemap_array_and_copy(driver, runtime, nvrtc):
    err, channelDesc = runtime.cudaCreateChannelDesc(32, 0, 0, 0, runtime.cudaChannelFormatKind.cudaChannelFormatKindFloat)
    _status(runtime.cudaMalloc3DArray(channelDesc, runtime.make_cudaExtent(4, 4, 6), runtime.cudaArrayCubemap), runtime)
    params = runtime.cudaMemcpy3DParms()
    params.srcPos = runtime.make_cudaPos(0, 0, 0)
    params.srcPtr = runtime.make_cudaPitchedPtr((ctypes.c_float * 96)(), 16, 4, 4)
    params.dstArray = runtime.cudaArray_t()
    params.extent = runtime.make_cudaExtent(4, 4, 6)
    params.kind = runtime.cudaMemcpyKind.cudaMemcpyHostToDevice
    _status(runtime.cudaMemcpy3D(params), runtime)


def idiom_texture_object_without_view(driver, runtime, nvrtc):
    resource = runtime.cudaResourceDesc()
    resource.resType = runtime.cudaResourceType.cudaResourceTypeArray
    resource.res.array.array = runtime.cudaArray_t()
    texture = runtime.cudaTextureDesc()
    texture.normalizedCoords = True
    texture.filterMode = runtime.cudaTextureFilterMode.cudaFilterModeLinear
    texture.addressMode = [runtime.cudaTextureAddressMode.cudaAddressModeWrap] * 3
    texture.readMode = runtime.cudaTextureReadMode.cudaReadModeElementType
    _status(runtime.cudaCreateTextureObject(resource, texture, None), runtime)


IDIOMS = {name[len("idiom_"):]: fn for name, fn in globals().items() if name.startswith("idiom_")}


@pytest.mark.parametrize("idiom,impl", [pytest.param(name, impl, id=f"{name}-{impl}")
                                        for name in IDIOMS for impl in IMPLS])
def test_idiom_accepted(idiom, impl):
    if _gpu_count() > 0:
        # The calls pass placeholder handles and addresses, safe only where no driver
        # acts on them; with a GPU the samples run the same idioms for real.
        pytest.skip("this machine has a GPU: the gpu tests run these idioms in the samples")
    if impl == "cuda" and importlib.util.find_spec("cuda") is None:
        pytest.skip("NVIDIA's cuda.bindings is not installed")
    from conftest import run_python
    result = run_python(f"import runpy, sys; sys.argv = ['', {impl!r}, {idiom!r}]; "
                        f"runpy.run_path({os.path.abspath(__file__)!r}, run_name='__main__')")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"idiom {idiom} accepted on {impl}" in result.stdout


def _gpu_params():
    params = []
    for sample in SAMPLES:
        for impl in IMPLS:
            marks = [pytest.mark.gpu]
            if sample in TWO_GPUS:
                marks.append(pytest.mark.multi_gpu)
            params.append(pytest.param(sample, impl, marks=marks, id=f"{sample[:-3]}-{impl}"))
    return params


@pytest.mark.parametrize("sample,impl", _gpu_params())
def test_sample_passes_on_gpu(sample, impl):
    _needs(sample, impl)
    result = run_example.run_sample(_sample_path(sample), impl, timeout=600, env=_env(sample, impl))
    output = result.stdout + result.stderr
    _implementation_line(result, impl)
    lines = result.stdout.splitlines()
    if result.returncode == 0 and lines and lines[-1].endswith("; skipped"):
        pytest.skip(lines[-1])
    assert result.returncode == 0, output
    assert lines[-1].endswith("PASSED"), output


def _check_idiom(impl, name):
    if impl == "cubind":
        run_example.use_cubind()
    from cuda.bindings import driver, nvrtc, runtime
    IDIOMS[name](driver, runtime, nvrtc)
    print(f"idiom {name} accepted on {impl}")


if __name__ == "__main__":
    _check_idiom(sys.argv[1], sys.argv[2])
