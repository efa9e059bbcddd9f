"""A library function that takes any array: decorated with
args_viewable_as_strided_memory, it reads the pointer, shape, strides and
dtype of what it is given through StridedMemoryView and runs one kernel on
it. Called with a NumPy array (host memory: copied to the device and back),
a device Buffer viewed with a shape and dtype, and a CuPy array where CuPy
is installed; each result is checked."""
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import Buffer, Device, LaunchConfig, Program, ProgramOptions, launch  # noqa: E402
from cuda.core.utils import StridedMemoryView, args_viewable_as_strided_memory  # noqa: E402

SOURCE = r"""
extern "C" __global__ void scale_2d(float* data, long long rows, long long cols,
                                    long long row_stride, long long col_stride, float factor)
{
    long long i = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < rows && j < cols) data[i * row_stride + j * col_stride] *= factor;
}
"""

device = device_or_exit(Device)
import numpy as np  # noqa: E402  (after the device check: a machine without a GPU needs no NumPy)

stream = device.create_stream()
kernel = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("scale_2d")


def _on_host(proxy: Any) -> bool:
    # DLPack says where the array lives; the CUDA Array Interface is device memory.
    return bool(proxy.has_dlpack and proxy.obj.__dlpack_device__()[0] == 1)


@args_viewable_as_strided_memory((0,))
def scale(array: Any, factor: float, stream: Any) -> None:
    """Multiplies a 2-D float32 array (any library, any strides) by factor in place."""
    # A device array is ordered after its producer's stream; host memory has none (-1).
    view = array.view(-1 if _on_host(array) else int(stream.handle))
    if view.dtype != np.float32 or len(view.shape) != 2:
        raise TypeError(f"scale takes a 2-D float32 array, not {view.dtype} of shape {view.shape}")
    rows, cols = view.shape
    row_stride, col_stride = view.strides if view.strides is not None else (cols, 1)
    staging = host = None
    ptr = view.ptr
    if not view.is_device_accessible:
        # Host memory: the kernel works on a device copy of the span the view covers.
        nbytes = ((rows - 1) * row_stride + (cols - 1) * col_stride + 1) * 4
        host = Buffer.from_handle(view.ptr, nbytes, owner=view.exporting_obj)
        staging = device.allocate(nbytes, stream=stream)
        staging.copy_from(host, stream=stream)
        ptr = int(staging.handle)
    block = (16, 16)
    grid = ((cols + 15) // 16, (rows + 15) // 16)
    launch(stream, LaunchConfig(grid=grid, block=block), kernel, np.uint64(ptr), np.int64(rows), np.int64(cols),
           np.int64(row_stride), np.int64(col_stride), np.float32(factor))
    if staging is not None and host is not None:
        host.copy_from(staging, stream=stream)
        stream.sync()
        staging.close()


failures = []

# 1. A NumPy array, and a transposed (strided) view of one.
a = np.arange(48, dtype=np.float32).reshape(6, 8)
expected = a * 3
scale(a, 3.0, stream)
if not np.array_equal(a, expected):
    failures.append("numpy")
t = np.arange(48, dtype=np.float32).reshape(6, 8)
scale(t.T, 0.5, stream)
if not np.array_equal(t, np.arange(48, dtype=np.float32).reshape(6, 8) * 0.5):
    failures.append("numpy transposed")

# 2. Device memory of our own: a Buffer viewed as a 4 x 16 float32 array.
buffer = device.allocate(4 * 16 * 4, stream=stream)
host = np.arange(64, dtype=np.float32)
buffer.copy_from(Buffer.from_handle(host.ctypes.data, host.nbytes, owner=host), stream=stream)
view = StridedMemoryView.from_buffer(buffer, (4, 16), dtype=np.dtype(np.float32))
scale(view, 2.0, stream)
back = np.empty(64, dtype=np.float32)
buffer.copy_to(Buffer.from_handle(back.ctypes.data, back.nbytes, owner=back), stream=stream)
stream.sync()
if not np.array_equal(back, np.arange(64, dtype=np.float32) * 2):
    failures.append("Buffer view")
buffer.close()

# 3. A CuPy array, where CuPy is installed (DLPack, on CuPy's stream).
cupy: Any
try:
    import cupy
except ImportError:
    cupy = None
if cupy is not None:
    c = cupy.arange(48, dtype=cupy.float32).reshape(6, 8)[:, ::2]
    scale(c, 4.0, stream)
    stream.sync()
    if not np.array_equal(cupy.asnumpy(c), np.arange(48, dtype=np.float32).reshape(6, 8)[:, ::2] * 4):
        failures.append("cupy")

stream.close()
if failures:
    print(f"strided_views: FAILED for {', '.join(failures)}")
    sys.exit(1)
print(f"strided_views: NumPy, a viewed Buffer{' and CuPy' if cupy is not None else ''} OK")
