"""OpenGL interop, headless: a GL buffer object filled by glBufferData is
registered with CUDA, mapped on a stream, rewritten by a kernel through the
mapped Buffer, unmapped, and read back by GL; a GL texture is registered as
an image and unregistered. The GL context comes from EGL with no window
(_egl.py); where none can be made, the example says why and skips."""
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _egl import GL_TEXTURE_2D, GLUnavailable, headless_gl  # noqa: E402
from _gpu import device_or_exit  # noqa: E402

from cuda.core import Device, GraphicsResource, LaunchConfig, Program, ProgramOptions, launch  # noqa: E402

SOURCE = r"""
extern "C" __global__ void wave(float* data, float scale, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = data[i] * scale + 0.5f;
}
"""
N = 1 << 14

device = device_or_exit(Device)
try:
    gl = headless_gl(device.device_id)
except GLUnavailable as error:
    print(f"no OpenGL context: {' '.join(str(error).split())}; skipped")
    sys.exit(0)
print(f"OpenGL: {gl.renderer} ({gl.description})")

kernel = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("wave")
stream = device.create_stream()

vbo = gl.gen_buffer(struct.pack(f"<{N}f", *range(N)))
with GraphicsResource.from_gl_buffer(vbo) as resource:
    with resource.map(stream=stream) as buf:
        # The float parameter gets a float32 scalar: NVIDIA's package passes a Python float as a double.
        launch(stream, LaunchConfig(grid=(N + 255) // 256, block=256), kernel, buf, np.float32(3.0), np.int32(N))
    stream.sync()
seen = struct.unpack(f"<{N}f", gl.read_buffer(vbo, N * 4))
ok = seen == tuple(i * 3.0 + 0.5 for i in range(N))
print(f"kernel through the mapped GL buffer, read back by GL: {'OK' if ok else 'WRONG'}")

texture = gl.gen_texture_rgba8(16, 16, bytes(range(256)) * 4)
image = GraphicsResource.from_gl_image(texture, GL_TEXTURE_2D, flags="read_only")
ok = ok and image.handle != 0 and not image.is_mapped
image.close()
ok = ok and image.is_closed
print(f"texture registered and unregistered: {'OK' if ok else 'WRONG'}")

gl.delete_texture(texture)
gl.delete_buffer(vbo)
stream.close()
gl.close()
print("PASSED" if ok else "FAILED")
sys.exit(0 if ok else 1)
