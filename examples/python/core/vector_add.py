"""Vector addition: a kernel compiled at run time, three device buffers, one
launch, the result checked on the host."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_none, skip  # noqa: E402

from cuda.core import Device, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch  # noqa: E402

SOURCE = r"""
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""

N = 1 << 20

# Compiling needs no GPU: without one it compiles for sm_90, then the rest is skipped.
device, no_gpu = device_or_none(Device)
arch = f"sm_{device.arch}" if device is not None else "sm_90"
code = Program(SOURCE, "c++", ProgramOptions(arch=arch)).compile("cubin")
if device is None:
    print(f"vector_add compiled into a cubin for {arch}; the launch needs a GPU")
    skip(no_gpu)
stream = device.create_stream()
kernel = code.get_kernel("vector_add")

nbytes = N * 4
pinned = LegacyPinnedMemoryResource()
host_a, host_b, host_c = (pinned.allocate(nbytes, stream=stream) for _ in range(3))
a = (ctypes.c_float * N).from_address(host_a.handle)
b = (ctypes.c_float * N).from_address(host_b.handle)
for i in range(N):
    a[i] = i
    b[i] = 2 * i

dev_a, dev_b, dev_c = (device.allocate(nbytes, stream=stream) for _ in range(3))
dev_a.copy_from(host_a, stream=stream)
dev_b.copy_from(host_b, stream=stream)
block = 256
launch(stream, LaunchConfig(grid=(N + block - 1) // block, block=block), kernel, dev_a, dev_b, dev_c, ctypes.c_size_t(N))
dev_c.copy_to(host_c, stream=stream)
stream.sync()

c = (ctypes.c_float * N).from_address(host_c.handle)
wrong = [i for i in range(0, N, 997) if c[i] != 3 * i]
for buffer in (dev_a, dev_b, dev_c, host_a, host_b, host_c):
    buffer.close()
stream.close()
if wrong:
    print(f"vector_add: FAILED at {len(wrong)} checked elements, first {wrong[0]}")
    sys.exit(1)
print(f"vector_add: {N} elements OK")
