"""cubind.core.GraphicsResource on a GPU, with a headless OpenGL context made
through EGL (examples/python/core/_egl.py): a GL buffer object filled by
glBufferData is registered, mapped on a stream, rewritten by an NVRTC kernel
through the mapped Buffer, unmapped and read back with glGetBufferSubData; a
2-D texture is registered as an image, mapped, its CUDA array copied out and
written, and read back with glGetTexImage; the `with` forms, close, garbage
collection and the misuses cuda.core refuses. Skips, with the reason, where
EGL or a GL context on the GPU cannot be made (the loaders missing)."""
import ctypes
import gc
import os
import struct
import sys

import pytest

from cubind.core import CUDAError, Device, GraphicsResource, LaunchConfig, Program, ProgramOptions, launch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python", "core"))
import _egl  # noqa: E402

pytestmark = pytest.mark.gpu

N = 4096
SOURCE = r"""
extern "C" __global__ void twice_plus_one(float* data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = 2.0f * data[i] + 1.0f;
}
"""


@pytest.fixture(scope="module")
def device():
    dev = Device(0)
    dev.set_current()
    return dev


@pytest.fixture(scope="module")
def gl(device):
    try:
        context = _egl.headless_gl(device.device_id)
    except _egl.GLUnavailable as error:
        pytest.skip(f"no headless OpenGL here: {error}")
    yield context
    context.close()


@pytest.fixture(scope="module")
def kernel(device):
    return Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel(
        "twice_plus_one")


def _floats(count, f):
    return struct.pack(f"<{count}f", *(f(i) for i in range(count)))


def test_a_kernel_rewrites_a_gl_buffer_through_the_mapped_buffer(device, gl, kernel, stream):
    vbo = gl.gen_buffer(_floats(N, float))
    resource = GraphicsResource.from_gl_buffer(vbo)
    try:
        assert resource.handle != 0 and not resource.is_mapped
        buf = resource.map(stream=stream)
        assert buf.size == N * 4 and buf.handle != 0 and resource.is_mapped
        launch(stream, LaunchConfig(grid=(N + 255) // 256, block=256), kernel, buf, N)
        resource.unmap(stream=stream)
        assert buf.is_closed and not resource.is_mapped
        stream.sync()
        seen = struct.unpack(f"<{N}f", gl.read_buffer(vbo, N * 4))
        assert seen == tuple(2.0 * i + 1.0 for i in range(N))

        # Again, closing the Buffer itself unmaps; GL's data is CUDA's input.
        with resource.map(stream=stream) as buf:
            launch(stream, LaunchConfig(grid=(N + 255) // 256, block=256), kernel, buf, N)
        assert not resource.is_mapped
        stream.sync()
        seen = struct.unpack(f"<{N}f", gl.read_buffer(vbo, N * 4))
        assert seen == tuple(2.0 * (2.0 * i + 1.0) + 1.0 for i in range(N))
    finally:
        resource.close()
        gl.delete_buffer(vbo)
    assert resource.is_closed


def test_the_with_forms_map_and_close(device, gl, stream):
    vbo = gl.gen_buffer(size=N * 4)
    with GraphicsResource.from_gl_buffer(vbo, flags="write_discard", stream=stream) as buf:
        buf.fill(ctypes.c_uint32(0xC0FFEE42), stream=stream)
    assert buf.is_closed
    stream.sync()
    assert struct.unpack(f"<{N}I", gl.read_buffer(vbo, N * 4)) == (0xC0FFEE42,) * N
    with GraphicsResource.from_gl_buffer(vbo) as resource:
        with resource.map(stream=stream) as buf:
            buf.fill(7, stream=stream)
    assert resource.is_closed
    stream.sync()
    assert gl.read_buffer(vbo, N * 4) == b"\x07" * (N * 4)
    gl.delete_buffer(vbo)


def test_a_texture_maps_to_an_array_cuda_reads_and_writes(device, gl, stream):
    from cubind.bindings import driver

    width, height = 32, 16
    pixels = bytes((3 * i + 1) & 0xFF for i in range(width * height * 4))
    texture = gl.gen_texture_rgba8(width, height, pixels)
    resource = GraphicsResource.from_gl_image(texture, _egl.GL_TEXTURE_2D)
    try:
        with pytest.raises(CUDAError) as info:
            resource.map(stream=stream)  # an image has no pointer
        assert info.value.api_function == "cuGraphicsResourceGetMappedPointer"
        assert not resource.is_mapped

        array = resource.map_array(stream=stream)
        assert array != 0 and resource.is_mapped
        stream.sync()
        host = (ctypes.c_char * len(pixels))()

        def copy(to_host):
            p = driver.CUDA_MEMCPY2D()
            array_side, host_side = ("src", "dst") if to_host else ("dst", "src")
            setattr(p, f"{array_side}MemoryType", driver.CUmemorytype.CU_MEMORYTYPE_ARRAY)
            setattr(p, f"{array_side}Array", driver.CUarray(array))
            setattr(p, f"{host_side}MemoryType", driver.CUmemorytype.CU_MEMORYTYPE_HOST)
            setattr(p, f"{host_side}Host", ctypes.addressof(host))
            setattr(p, f"{host_side}Pitch", width * 4)
            p.WidthInBytes = width * 4
            p.Height = height
            (status,) = driver.cuMemcpy2D(p)
            assert status == driver.CUresult.CUDA_SUCCESS, status

        copy(to_host=True)
        assert bytes(host) == pixels, "CUDA reads what glTexImage2D wrote"
        inverted = bytes(255 - b for b in pixels)
        ctypes.memmove(host, inverted, len(inverted))
        copy(to_host=False)
        resource.unmap(stream=stream)
        stream.sync()
        assert gl.read_texture_rgba8(texture, width, height) == inverted, "GL reads what CUDA wrote"
    finally:
        resource.close()
        gl.delete_texture(texture)


def test_misuse_raises_what_cuda_core_raises(device, gl, stream):
    vbo = gl.gen_buffer(size=1024)
    resource = GraphicsResource.from_gl_buffer(vbo)
    buf = resource.map(stream=stream)
    with pytest.raises(RuntimeError, match="GraphicsResource is already mapped"):
        resource.map(stream=stream)
    buf.close()
    with pytest.raises(RuntimeError, match="GraphicsResource is not mapped"):
        resource.unmap()
    resource.close()
    resource.close()  # twice: nothing more
    with pytest.raises(RuntimeError, match="GraphicsResource has been closed"):
        resource.map(stream=stream)
    with pytest.raises(RuntimeError, match="GraphicsResource has been closed"):
        resource.unmap()
    # Dropped while mapped: unmapped and unregistered, so it registers again.
    again = GraphicsResource.from_gl_buffer(vbo)
    mapped = again.map(stream=stream)
    del again, mapped
    gc.collect()
    stream.sync()
    GraphicsResource.from_gl_buffer(vbo).close()
    with pytest.raises(CUDAError):
        GraphicsResource.from_gl_buffer(0xFFFFFF)  # no such GL buffer
    gl.delete_buffer(vbo)
