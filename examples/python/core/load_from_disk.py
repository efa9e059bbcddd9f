"""Device code from files: a kernel compiled once to PTX and to a CUBIN,
written to disk, then loaded with ObjectCode.from_ptx and from_cubin as code
shipped with an application would be, and launched from each."""
import ctypes
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_none, skip  # noqa: E402

from cuda.core import Device, LaunchConfig, LegacyPinnedMemoryResource, ObjectCode, Program, ProgramOptions, launch  # noqa: E402

SOURCE = r"""
extern "C" __global__ void iota(int* out, int start, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = start + i;
}
"""

N = 4096

# Compiling a cubin needs no GPU: without one it compiles it for sm_90 and skips the rest
# (NVIDIA's package asks the driver before it returns PTX, so the PTX waits for a GPU).
device, no_gpu = device_or_none(Device)
if device is None:
    cubin = Program(SOURCE, "c++", ProgramOptions(arch="sm_90")).compile("cubin").code
    print(f"iota compiled into a {len(cubin)}-byte cubin for sm_90; writing PTX and loading both need a GPU")
    skip(no_gpu)
folder = tempfile.mkdtemp(prefix="cuda-core-example-")
program = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}"))
paths = {}
for target in ("ptx", "cubin"):
    paths[target] = os.path.join(folder, f"iota.{target}")
    with open(paths[target], "wb") as f:
        f.write(program.compile(target).code)
stream = device.create_stream()

out = device.allocate(N * 4, stream=stream)
host = LegacyPinnedMemoryResource().allocate(N * 4, stream=stream)
values = (ctypes.c_int * N).from_address(host.handle)
failed = False
for start, (target, load) in enumerate((("ptx", ObjectCode.from_ptx), ("cubin", ObjectCode.from_cubin)), 1):
    kernel = load(paths[target]).get_kernel("iota")
    launch(stream, LaunchConfig(grid=(N + 255) // 256, block=256), kernel, out, start * 1000, N)
    out.copy_to(host, stream=stream)
    stream.sync()
    ok = all(values[i] == start * 1000 + i for i in range(N))
    failed |= not ok
    print(f"{target} from {os.path.basename(paths[target])}: {'OK' if ok else 'FAILED'}")
for path in paths.values():
    os.remove(path)
os.rmdir(folder)
out.close()
host.close()
stream.close()
sys.exit(1 if failed else 0)
