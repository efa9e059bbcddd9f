"""Link-time optimisation: two pieces compiled separately to LTO-IR, a kernel
calling an extern device function and the function itself, linked by the
Linker into one CUBIN in which the call is inlined. Without a GPU it compiles
and links for sm_90 and skips the launch."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_none, skip  # noqa: E402

from cuda.core import (  # noqa: E402
    Device, LaunchConfig, LegacyPinnedMemoryResource, Linker, LinkerOptions, Program, ProgramOptions, launch,
)

KERNEL = r"""
extern __device__ float transform(float x);
extern "C" __global__ void apply(float* data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = transform(data[i]);
}
"""
FUNCTION = r"""
__device__ float transform(float x) { return 2.0f * x + 1.0f; }
"""

N = 10_000

# Compiling and linking need no GPU: without one they run for sm_90, then the launch is skipped.
device, no_gpu = device_or_none(Device)
arch = f"sm_{device.arch}" if device is not None else "sm_90"
options = ProgramOptions(arch=arch, relocatable_device_code=True, link_time_optimization=True)
pieces = [Program(source, "c++", options).compile("ltoir") for source in (KERNEL, FUNCTION)]
linker = Linker(*pieces, options=LinkerOptions(arch=arch, link_time_optimization=True))
cubin = linker.link("cubin")
linker.close()
if device is None:
    print(f"two LTO-IR pieces compiled and linked into a cubin for {arch}; the launch needs a GPU")
    skip(no_gpu)
kernel = cubin.get_kernel("apply")  # loading the cubin needs the driver

stream = device.create_stream()
host = LegacyPinnedMemoryResource().allocate(N * 4, stream=stream)
values = (ctypes.c_float * N).from_address(host.handle)
for i in range(N):
    values[i] = i
data = device.allocate(N * 4, stream=stream)
data.copy_from(host, stream=stream)
launch(stream, LaunchConfig(grid=(N + 127) // 128, block=128), kernel, data, N)
data.copy_to(host, stream=stream)
stream.sync()
ok = all(values[i] == 2 * i + 1 for i in range(N))
print(f"two LTO-IR pieces linked and launched: {'OK' if ok else 'FAILED'}")
data.close()
host.close()
stream.close()
sys.exit(0 if ok else 1)
