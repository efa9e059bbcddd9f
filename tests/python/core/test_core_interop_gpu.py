"""cubind.core with CuPy, PyTorch, numba-cuda and JAX on a GPU: their arrays
in our kernels on their streams (read through the CUDA Array Interface, v3),
our Buffers in their hands (DLPack, or an interface description for Numba),
each library's streams used by the other through __cuda_stream__ or a
handle, all without copies and each checked by value. A library that is not
installed skips its tests."""
import ctypes
import os

import pytest

from cubind.core import Buffer, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, Stream, launch

pytestmark = pytest.mark.gpu

# JAX otherwise takes most of the GPU's memory when it starts, leaving little
# to the libraries tested beside it in this process.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

N = 1 << 14
CONFIG = LaunchConfig(grid=(N + 255) // 256, block=256)

SOURCE = r"""
extern "C" __global__ void scale(float* data, float factor, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}

extern "C" __global__ void scaled_copy(const float* src, float* dst, float factor, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) dst[i] = factor * src[i];
}
"""


@pytest.fixture(scope="module")
def kernels(device):
    code = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin")
    return code.get_kernel("scale"), code.get_kernel("scaled_copy")


@pytest.fixture
def own(stream):
    return stream


@pytest.fixture
def buffer(device, own):
    buf = device.allocate(N * 4, stream=own)
    yield buf
    own.sync()
    buf.close(own)


def scale(kernels, stream, target, factor):
    launch(stream, CONFIG, kernels[0], target, ctypes.c_float(factor), ctypes.c_size_t(N))


def buffer_from_cai(array, stream):
    """Reads a contiguous float32 vector's CUDA Array Interface (version 3):
    a Buffer over its memory, holding the array; where the producer names a
    stream other than ours, ours waits for it, as the interface asks."""
    cai = array.__cuda_array_interface__
    assert cai["version"] >= 2, cai
    assert cai["typestr"] == "<f4", cai
    assert cai["shape"] == (N,), cai
    assert cai.get("strides") in (None, (4,)), cai
    producer = cai.get("stream")
    if producer is not None and producer != int(stream.handle):
        stream.wait(Stream.from_handle(producer))
    return Buffer.from_handle(cai["data"][0], N * 4, owner=array)


def host_floats(device, buffer, stream):
    """The buffer's values, copied through pinned memory: a check that goes
    through none of the libraries under test."""
    import numpy as np

    pinned = LegacyPinnedMemoryResource().allocate(buffer.size)
    buffer.copy_to(pinned, stream=stream)
    stream.sync()
    values = np.frombuffer(memoryview(pinned), dtype=np.float32).copy()
    pinned.close()
    return values


def numba_stream_address(numba_stream):
    protocol = getattr(numba_stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    handle = numba_stream.handle
    return int(handle.value) if hasattr(handle, "value") else int(handle)


# --- CuPy ------------------------------------------------------------------


@pytest.fixture(scope="module")
def cupy():
    return pytest.importorskip("cupy", reason="CuPy is not installed")


def test_cupy_array_in_our_kernel_on_cupy_stream(cupy, kernels):
    theirs = cupy.cuda.Stream(non_blocking=True)
    with theirs:
        x = cupy.arange(N, dtype=cupy.float32)
    stream = Stream.from_handle(theirs.ptr)
    view = buffer_from_cai(x, stream)
    assert view.handle == x.data.ptr
    scale(kernels, stream, view, 3.0)
    with theirs:
        x += 1  # queued behind our kernel on the same stream
    theirs.synchronize()
    assert bool((x == 3 * cupy.arange(N, dtype=cupy.float32) + 1).all())


def test_cupy_reads_buffer_through_dlpack(cupy, device, buffer, own):
    import numpy as np

    buffer.fill(np.float32(1.5), stream=own)
    own.sync()
    view = cupy.from_dlpack(buffer).view(cupy.float32)
    assert view.data.ptr == buffer.handle
    assert view.shape == (N,)
    view *= 2
    cupy.cuda.Device().synchronize()
    assert (host_floats(device, buffer, own) == 3.0).all()
    del view


def test_cupy_runs_on_our_stream(cupy, kernels, device, buffer, own):
    import numpy as np

    buffer.fill(np.float32(1.0), stream=own)
    view = cupy.from_dlpack(buffer).view(cupy.float32)
    version, address = own.__cuda_stream__()
    assert version == 0 and address == int(own.handle)
    external = cupy.cuda.ExternalStream(address)
    # No synchronisation between the three: the stream orders them.
    with external:
        view += 1
    scale(kernels, own, buffer, 5.0)
    with external:
        view -= 3
    own.sync()
    assert (host_floats(device, buffer, own) == 7.0).all()
    del view


def test_our_launch_on_a_cupy_stream_object(cupy, kernels, device):
    theirs = cupy.cuda.Stream(non_blocking=True)
    if not hasattr(theirs, "__cuda_stream__"):
        pytest.skip("this CuPy's streams have no __cuda_stream__")
    with theirs:
        x = cupy.ones(N, dtype=cupy.float32)
    stream = device.create_stream(theirs)
    assert int(stream.handle) == theirs.ptr
    scale(kernels, theirs, buffer_from_cai(x, stream), 4.0)
    theirs.synchronize()
    assert bool((x == 4).all())


# --- PyTorch ---------------------------------------------------------------


@pytest.fixture(scope="module")
def torch():
    module = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not module.cuda.is_available():
        pytest.skip("PyTorch has no CUDA")
    return module


def test_torch_tensor_in_our_kernel_on_torch_stream(torch, kernels):
    theirs = torch.cuda.Stream()
    with torch.cuda.stream(theirs):
        t = torch.arange(N, dtype=torch.float32, device="cuda")
    stream = Stream.from_handle(theirs.cuda_stream)
    view = buffer_from_cai(t, stream)
    assert view.handle == t.data_ptr()
    scale(kernels, stream, view, 3.0)
    with torch.cuda.stream(theirs):
        t += 1
    theirs.synchronize()
    expected = 3 * torch.arange(N, dtype=torch.float32, device="cuda") + 1
    assert torch.equal(t, expected)


def test_torch_reads_buffer_through_dlpack(torch, device, buffer, own):
    import numpy as np

    buffer.fill(np.float32(1.5), stream=own)
    own.sync()
    view = torch.from_dlpack(buffer).view(torch.float32)
    assert view.data_ptr() == buffer.handle
    assert view.device.type == "cuda" and tuple(view.shape) == (N,)
    view *= 2
    torch.cuda.synchronize()
    assert (host_floats(device, buffer, own) == 3.0).all()
    del view


def test_torch_runs_on_our_stream(torch, kernels, device, buffer, own):
    import numpy as np

    buffer.fill(np.float32(1.0), stream=own)
    view = torch.from_dlpack(buffer).view(torch.float32)
    version, address = own.__cuda_stream__()
    assert version == 0 and address == int(own.handle)
    external = torch.cuda.ExternalStream(address)
    with torch.cuda.stream(external):
        view += 1
    scale(kernels, own, buffer, 5.0)
    with torch.cuda.stream(external):
        view -= 3
    own.sync()
    assert (host_floats(device, buffer, own) == 7.0).all()
    del view


def test_our_launch_on_a_torch_stream_object(torch, kernels, device):
    theirs = torch.cuda.Stream()
    if not hasattr(theirs, "__cuda_stream__"):
        pytest.skip("this PyTorch's streams have no __cuda_stream__")
    with torch.cuda.stream(theirs):
        t = torch.ones(N, dtype=torch.float32, device="cuda")
    stream = device.create_stream(theirs)
    assert int(stream.handle) == theirs.cuda_stream
    scale(kernels, theirs, buffer_from_cai(t, stream), 4.0)
    theirs.synchronize()
    assert bool((t == 4).all())


# --- numba-cuda ------------------------------------------------------------


@pytest.fixture(scope="module")
def numba_cuda():
    pytest.importorskip("numba", reason="numba-cuda is not installed")
    from numba import cuda

    if not cuda.is_available():
        pytest.skip("numba.cuda.is_available() is False")
    return cuda


@pytest.fixture(scope="module")
def add_one(numba_cuda):
    @numba_cuda.jit
    def kernel(a):
        i = numba_cuda.grid(1)
        if i < a.size:
            a[i] += 1.0

    try:
        kernel.compile("void(float32[:])")
    except AttributeError as error:  # inside numba-cuda's own typing registry, against a newer NumPy
        import numpy as np
        pytest.skip(f"this numba-cuda compiles no kernel with NumPy {np.__version__}: {error}")
    return kernel


def test_numba_array_in_our_kernel_on_numba_stream(numba_cuda, add_one, kernels):
    import numpy as np

    theirs = numba_cuda.stream()
    x = numba_cuda.to_device(np.arange(N, dtype=np.float32), stream=theirs)
    stream = Stream.from_handle(numba_stream_address(theirs))
    view = buffer_from_cai(x, stream)
    assert view.handle == x.__cuda_array_interface__["data"][0]
    scale(kernels, stream, view, 3.0)
    add_one[(N + 255) // 256, 256, theirs](x)  # queued behind our kernel
    result = x.copy_to_host(stream=theirs)
    theirs.synchronize()
    assert (result == 3 * np.arange(N, dtype=np.float32) + 1).all()


def test_numba_kernel_on_buffer_on_our_stream(numba_cuda, add_one, kernels, device, buffer, own):
    import numpy as np

    buffer.fill(np.float32(1.0), stream=own)
    description = {
        "shape": (N,),
        "typestr": "<f4",
        "data": (int(buffer.handle), False),
        "strides": None,
        "stream": None,
        "version": 3,
    }
    array = numba_cuda.from_cuda_array_interface(description, owner=buffer, sync=False)
    assert array.__cuda_array_interface__["data"][0] == buffer.handle
    external = numba_cuda.external_stream(int(own.handle))
    add_one[(N + 255) // 256, 256, external](array)
    scale(kernels, own, buffer, 5.0)
    add_one[(N + 255) // 256, 256, external](array)
    own.sync()
    assert (host_floats(device, buffer, own) == 11.0).all()
    del array


def test_our_launch_on_a_numba_stream_object(numba_cuda, kernels, device):
    import numpy as np

    theirs = numba_cuda.stream()
    if not hasattr(theirs, "__cuda_stream__"):
        pytest.skip("this numba-cuda's streams have no __cuda_stream__")
    x = numba_cuda.to_device(np.ones(N, dtype=np.float32), stream=theirs)
    stream = device.create_stream(theirs)
    assert int(stream.handle) == numba_stream_address(theirs)
    scale(kernels, theirs, buffer_from_cai(x, stream), 4.0)
    theirs.synchronize()
    assert (x.copy_to_host() == 4).all()


# --- JAX -------------------------------------------------------------------


@pytest.fixture(scope="module")
def jax():
    module = pytest.importorskip("jax", reason="JAX is not installed")
    try:
        module.devices("gpu")
    except RuntimeError as error:
        pytest.skip(f"JAX has no GPU backend: {error}")
    return module


def jax_address(array):
    cai = getattr(array, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    return int(array.unsafe_buffer_pointer())


def test_jax_array_read_by_our_kernel(jax, kernels, device, buffer, own):
    import jax.numpy as jnp
    import numpy as np

    x = jax.device_put(jnp.arange(N, dtype=jnp.float32), jax.devices("gpu")[0])
    x.block_until_ready()  # JAX shares no stream: its work is done first
    assert jax_address(x) == x.unsafe_buffer_pointer()
    launch(own, CONFIG, kernels[1], jax_address(x), buffer, ctypes.c_float(3.0), ctypes.c_size_t(N))
    own.sync()
    assert (host_floats(device, buffer, own) == 3 * np.arange(N, dtype=np.float32)).all()
    assert (np.asarray(x) == np.arange(N, dtype=np.float32)).all()  # read, not written


def test_jax_reads_buffer_through_dlpack(jax, device, buffer, own):
    import jax.dlpack
    import jax.numpy as jnp
    import numpy as np

    values = np.arange(N, dtype=np.float32) * 0.5
    pinned = LegacyPinnedMemoryResource().allocate(N * 4)
    np.frombuffer(memoryview(pinned), dtype=np.float32)[:] = values
    buffer.copy_from(pinned, stream=own)
    own.sync()
    pinned.close()
    raw = jax.dlpack.from_dlpack(buffer)
    assert raw.unsafe_buffer_pointer() == buffer.handle  # shared, not copied
    assert raw.dtype == jnp.int8 and raw.shape == (N * 4,)
    floats = jax.lax.bitcast_convert_type(raw.reshape(N, 4), jnp.float32)
    assert (np.asarray(floats) == values).all()
    del raw, floats
