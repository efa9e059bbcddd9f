"""With numba-cuda: a kernel of ours launched on a Numba device array, on
Numba's stream, read through its CUDA Array Interface; and a Numba kernel
launched on a Buffer of ours, on our stream, through an interface we describe.
No copies either way."""
import ctypes
import os
import sys
from typing import Any, Callable, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import Buffer, Device, LaunchConfig, Program, ProgramOptions, Stream, launch  # noqa: E402

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
    import numba
    import numpy as np
    from numba import cuda
except ImportError as error:
    print(f"no numba-cuda: {error}; skipped")
    sys.exit(0)
if not cuda.is_available():
    print("no numba-cuda: numba.cuda.is_available() is False; skipped")
    sys.exit(0)


def step(name: str, check: Callable[[], bool]) -> bool:
    # Names the step that failed rather than leaving a bare traceback.
    try:
        return check()
    except Exception as error:
        print(f"{name}: {error.__class__.__name__}: {error}")
        return False


def stream_address(numba_stream: Any) -> int:
    # Newer numba-cuda streams speak __cuda_stream__; older ones hand out a
    # ctypes c_void_p or a cuda.bindings CUstream as their handle.
    protocol = getattr(numba_stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    handle = numba_stream.handle
    return int(handle.value) if hasattr(handle, "value") else int(handle)


def buffer_from_cai(array: Any, stream: Any) -> Any:
    # A Buffer over the array's memory (version 3 of the interface); the array
    # stays alive with it. Where the producer names a stream, ours waits for it.
    cai = array.__cuda_array_interface__
    if cai["typestr"] != "<f4" or cai.get("strides") not in (None, (4,)):
        raise ValueError(f"expected a contiguous float32 vector, got {cai}")
    producer = cai.get("stream")
    if producer is not None and producer != int(stream.handle):
        stream.wait(Stream.from_handle(producer))
    return Buffer.from_handle(cai["data"][0], cai["shape"][0] * 4, owner=array)


kernel = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("scale")
config = LaunchConfig(grid=(N + 255) // 256, block=256)


@cuda.jit
def add_one(a: Any) -> None:
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1.0


def numba_cannot_compile() -> Optional[str]:
    """Why this numba-cuda compiles no kernel here, or None: some releases
    fail inside their own typing registry against a newer NumPy."""
    try:
        add_one.compile("void(float32[:])")
    except AttributeError as error:
        return f"numba-cuda {getattr(numba, '__version__', '?')} compiles no kernel with NumPy {np.__version__} ({error})"
    return None


def ours_on_theirs() -> bool:
    # Their array, their stream, our kernel.
    numba_stream = cuda.stream()
    x = cuda.to_device(np.arange(N, dtype=np.float32), stream=numba_stream)
    if hasattr(numba_stream, "__cuda_stream__"):
        stream = device.create_stream(numba_stream)
    else:
        stream = Stream.from_handle(stream_address(numba_stream))
    view = buffer_from_cai(x, stream)
    launch(stream, config, kernel, view, ctypes.c_float(3.0), ctypes.c_size_t(N))
    numba_stream.synchronize()
    return bool((x.copy_to_host() == 3 * np.arange(N, dtype=np.float32)).all())


def theirs_on_ours() -> bool:
    # Our buffer, our stream, their kernel: the interface dict describes the
    # Buffer's bytes as float32 and names no stream (ordering is ours).
    own = device.create_stream()
    buffer = device.allocate(N * 4, stream=own)
    buffer.fill(np.float32(1.0), stream=own)
    description = {
        "shape": (N,),
        "typestr": "<f4",
        "data": (int(buffer.handle), False),
        "strides": None,
        "stream": None,
        "version": 3,
    }
    array = cuda.from_cuda_array_interface(description, owner=buffer, sync=False)
    if array.__cuda_array_interface__["data"][0] != int(buffer.handle):
        raise RuntimeError("Numba's array does not point at the Buffer")
    numba_stream = cuda.external_stream(int(own.handle))
    add_one[(N + 255) // 256, 256, numba_stream](array)
    launch(own, config, kernel, buffer, ctypes.c_float(5.0), ctypes.c_size_t(N))
    result = array.copy_to_host(stream=numba_stream)
    own.sync()
    ok = bool((result == 10).all())
    del array
    buffer.close(own)
    own.close()
    return ok


first = step("our kernel on a Numba array", ours_on_theirs)
broken_jit = numba_cannot_compile()
if broken_jit:
    print(f"a Numba kernel on a Buffer: {broken_jit}; skipped")
    second = "skipped"
else:
    second = "OK" if step("a Numba kernel on a Buffer", theirs_on_ours) else "FAILED"
print(f"our kernel on a Numba array: {'OK' if first else 'FAILED'}; a Numba kernel on a Buffer: {second}")
sys.exit(0 if first and second != "FAILED" else 1)
