"""Texture sampling and surface writes: an image in a CUDA array is upscaled
2x by a kernel that samples it through a texture object (nearest texel,
then bilinear filtering, normalized coordinates clamped at the edges) and
writes each result through a surface object into a second array; the host
reads that array back and checks it against NumPy."""
import ctypes
import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_none, skip  # noqa: E402

from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch  # noqa: E402
from cuda.core.texture import OpaqueArrayOptions, ResourceDescriptor, TextureObjectOptions  # noqa: E402

SOURCE = r"""
extern "C" __global__ void upscale(cudaTextureObject_t src, cudaSurfaceObject_t dst, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float u = (x + 0.5f) / width, v = (y + 0.5f) / height;
        surf2Dwrite(tex2D<float>(src, u, v), dst, x * (int)sizeof(float), y);
    }
}
"""

W, H = 24, 16
image = (np.sin(np.arange(W)[None, :] * 0.7) * np.cos(np.arange(H)[:, None] * 0.4)).astype(np.float32)


def bilinear(img: Any, out_w: int, out_h: int) -> Any:
    """What a texture with linear filtering and clamped edges returns at the
    centre of each texel of an out_w x out_h grid over img."""
    h, w = img.shape
    xs = (np.arange(out_w) + 0.5) / out_w * w - 0.5
    ys = (np.arange(out_h) + 0.5) / out_h * h - 0.5
    x0, y0 = np.floor(xs).astype(int), np.floor(ys).astype(int)
    a, b = (xs - x0)[None, :], (ys - y0)[:, None]

    def p(yy: Any, xx: Any) -> Any:
        return img[np.clip(yy, 0, h - 1)[:, None], np.clip(xx, 0, w - 1)[None, :]]

    return ((1 - a) * (1 - b) * p(y0, x0) + a * (1 - b) * p(y0, x0 + 1) + (1 - a) * b * p(y0 + 1, x0)
            + a * b * p(y0 + 1, x0 + 1)).astype(np.float32)


# Compiling needs no GPU: without one it compiles for sm_90, then the rest is skipped.
device, no_gpu = device_or_none(Device)
arch = f"sm_{device.arch}" if device is not None else "sm_90"
module = Program(SOURCE, "c++", ProgramOptions(arch=arch)).compile("cubin")
if device is None:
    print(f"upscale compiled into a cubin for {arch}; sampling needs a GPU")
    skip(no_gpu)
kernel = module.get_kernel("upscale")
stream = device.create_stream()

source = device.create_opaque_array(OpaqueArrayOptions(shape=(W, H), format=np.float32, num_channels=1))
source.copy_from(image, stream=stream)
target = device.create_opaque_array(
    OpaqueArrayOptions(shape=(2 * W, 2 * H), format="float32", num_channels=1, is_surface_load_store=True))
surface = device.create_surface_object(resource=ResourceDescriptor.from_opaque_array(target))

expected = {
    "point": np.repeat(np.repeat(image, 2, axis=0), 2, axis=1),
    "linear": bilinear(image, 2 * W, 2 * H),
}
failures = 0
for filter_mode, want in expected.items():
    options = TextureObjectOptions(address_mode="clamp", filter_mode=filter_mode, normalized_coords=True)
    texture = device.create_texture_object(resource=ResourceDescriptor.from_opaque_array(source), options=options)
    config = LaunchConfig(grid=((2 * W + 15) // 16, (2 * H + 15) // 16), block=(16, 16))
    launch(stream, config, kernel, ctypes.c_ulonglong(texture.handle), ctypes.c_ulonglong(surface.handle),
           ctypes.c_int(2 * W), ctypes.c_int(2 * H))
    got = np.zeros((2 * H, 2 * W), dtype=np.float32)
    target.copy_to(got, stream=stream)
    stream.sync()
    # Linear filtering weighs neighbours with 8 fractional bits: up to 1/256
    # of the difference between neighbours along each axis.
    tolerance = 0.0 if filter_mode == "point" else 1e-2
    error = float(np.max(np.abs(got - want)))
    ok = error <= tolerance
    failures += not ok
    print(f"{filter_mode:6} filtering: {got.shape[1]}x{got.shape[0]} samples, largest error {error:.2e}: "
          f"{'OK' if ok else 'FAILED'}")
    texture.close()

surface.close()
target.close()
source.close()
stream.close()
if failures:
    sys.exit(1)
print("texture_sampling: PASSED")
