"""SAXPY for float and double from one template kernel: Program.compile
instantiates both through name_expressions, and get_kernel takes them by the
same text."""
import ctypes
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_none, skip  # noqa: E402

from cuda.core import Device, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch  # noqa: E402

SOURCE = r"""
template <typename T>
__global__ void saxpy(T a, const T* x, T* y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""

N = 100_000

# Compiling needs no GPU: without one it compiles for sm_90, then the rest is skipped.
device, no_gpu = device_or_none(Device)
arch = f"sm_{device.arch}" if device is not None else "sm_90"
names = ("saxpy<float>", "saxpy<double>")
module = Program(SOURCE, "c++", ProgramOptions(arch=arch, std="c++17")).compile(
    "cubin", name_expressions=names)
if device is None:
    print(f"{' and '.join(names)} compiled into a cubin for {arch}; the launches need a GPU")
    skip(no_gpu)
stream = device.create_stream()

failures = 0
element_types: tuple[Any, ...] = (ctypes.c_float, ctypes.c_double)
for name, ctype in zip(names, element_types):
    size = ctypes.sizeof(ctype)
    pinned = LegacyPinnedMemoryResource()
    host_x, host_y = pinned.allocate(N * size, stream=stream), pinned.allocate(N * size, stream=stream)
    x = (ctype * N).from_address(host_x.handle)
    y = (ctype * N).from_address(host_y.handle)
    for i in range(N):
        x[i] = i
        y[i] = 1
    dev_x, dev_y = device.allocate(N * size, stream=stream), device.allocate(N * size, stream=stream)
    dev_x.copy_from(host_x, stream=stream)
    dev_y.copy_from(host_y, stream=stream)
    block = 128
    config = LaunchConfig(grid=(N + block - 1) // block, block=block)
    launch(stream, config, module.get_kernel(name), ctype(3), dev_x, dev_y, ctypes.c_size_t(N))
    dev_y.copy_to(host_y, stream=stream)
    stream.sync()
    bad = [i for i in range(0, N, 101) if y[i] != 3 * i + 1]
    failures += len(bad)
    print(f"{name}: {'OK' if not bad else f'FAILED at {len(bad)} checked elements'}")
    for buffer in (dev_x, dev_y, host_x, host_y):
        buffer.close()
stream.close()
sys.exit(1 if failures else 0)
