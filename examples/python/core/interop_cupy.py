"""With CuPy: a kernel of ours launched on a CuPy array, on CuPy's stream, and
a Buffer of ours read by CuPy through DLPack, both without a copy."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import Device, LaunchConfig, Program, ProgramOptions, Stream, launch  # noqa: E402

SOURCE = r"""
extern "C" __global__ void scale(float* data, float factor, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
"""

N = 1 << 16

device = device_or_exit(Device)
try:
    import cupy
except ImportError as error:
    print(f"no CuPy: {error}; skipped")
    sys.exit(0)

kernel = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("scale")
config = LaunchConfig(grid=(N + 255) // 256, block=256)

# Their array, their stream, our kernel.
cupy_stream = cupy.cuda.Stream(non_blocking=True)
with cupy_stream:
    x = cupy.arange(N, dtype=cupy.float32)
stream = Stream.from_handle(cupy_stream.ptr)
launch(stream, config, kernel, x.data.ptr, ctypes.c_float(3.0), ctypes.c_size_t(N))
stream.sync()
ours_on_theirs = bool((x == 3 * cupy.arange(N, dtype=cupy.float32)).all())

# Our buffer, read by CuPy through DLPack (bytes, viewed as float32).
own = device.create_stream()
buffer = device.allocate(N * 4, stream=own)
buffer.fill(0, stream=own)
own.sync()
view = cupy.from_dlpack(buffer).view(cupy.float32)
view += 2
cupy.cuda.Device().synchronize()
launch(own, config, kernel, buffer, ctypes.c_float(5.0), ctypes.c_size_t(N))
own.sync()
theirs_on_ours = bool((view == 10).all())

print(f"our kernel on a CuPy array: {'OK' if ours_on_theirs else 'FAILED'}; "
      f"a Buffer through DLPack in CuPy: {'OK' if theirs_on_ours else 'FAILED'}")
del view
buffer.close(own)
own.close()
sys.exit(0 if ours_on_theirs and theirs_on_ours else 1)
