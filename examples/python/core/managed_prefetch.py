"""Managed memory with prefetches: the host writes a buffer, a prefetch
moves it to the device before a kernel doubles it, and another brings it
back before the host reads it, with no explicit copy."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import (  # noqa: E402
    Device, Host, LaunchConfig, ManagedMemoryResource, Program, ProgramOptions, launch,
)

SOURCE = r"""
extern "C" __global__ void twice(int* data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= 2;
}
"""

N = 1 << 20

device = device_or_exit(Device)
if not device.properties.concurrent_managed_access:
    print("the device has no concurrent managed access; skipped")
    sys.exit(0)
twice = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("twice")
stream = device.create_stream()

mr = ManagedMemoryResource()
buf = mr.allocate(N * 4, stream=stream)
stream.sync()
values = (ctypes.c_int * N).from_address(buf.handle)
for i in range(0, N, 1024):
    values[i] = i

buf.prefetch(device, stream=stream)
launch(stream, LaunchConfig(grid=(N + 255) // 256, block=256), twice, buf, N)
buf.prefetch(Host(), stream=stream)
stream.sync()
ok = all(values[i] == 2 * i for i in range(0, N, 1024))
print(f"written on the host, doubled on the device, read on the host: {'OK' if ok else 'FAILED'}")
buf.close(stream)
stream.close()
sys.exit(0 if ok else 1)
