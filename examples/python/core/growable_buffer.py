"""A buffer on virtual memory that grows in place: VirtualMemoryResource
maps more physical memory behind the buffer's end, so what was written
before stays where it was and the new part is ready to use."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import (  # noqa: E402
    Buffer, Device, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions,
    VirtualMemoryResource, VirtualMemoryResourceOptions, launch,
)

SOURCE = r"""
extern "C" __global__ void fill(int* out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}
"""

device = device_or_exit(Device)
if not device.properties.virtual_memory_management_supported:
    print("the device has no virtual memory management; skipped")
    sys.exit(0)
fill = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("fill")
stream = device.create_stream()

vmr = VirtualMemoryResource(device, VirtualMemoryResourceOptions(handle_type=None))
buf = vmr.allocate(1 << 20, stream=stream)          # rounded up to the granularity
first = buf.size // 4
launch(stream, LaunchConfig(grid=(first + 255) // 256, block=256), fill, buf, 0, first)
stream.sync()

buf = vmr.modify_allocation(buf, 4 * buf.size)      # same address where the range after it is free
total = buf.size // 4
rest = Buffer.from_handle(buf.handle + first * 4, (total - first) * 4)
launch(stream, LaunchConfig(grid=(total - first + 255) // 256, block=256), fill, rest, first, total - first)

host = LegacyPinnedMemoryResource().allocate(buf.size)
buf.copy_to(host, stream=stream)
stream.sync()
values = (ctypes.c_int * total).from_address(host.handle)
ok = all(values[i] == i for i in range(0, total, 997)) and values[total - 1] == total - 1
print(f"grew from {first * 4} to {total * 4} bytes, contents kept: {'OK' if ok else 'FAILED'}")
host.close()
buf.close(stream)
stream.close()
sys.exit(0 if ok else 1)
