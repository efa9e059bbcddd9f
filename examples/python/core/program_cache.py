"""A compile cache two processes share: each compiles the same kernel through
Program.compile(..., cache=FileStreamProgramCache(folder)); the first finds
the folder empty and compiles, the second finds the entry and loads it. The
kernel, from the cache, then runs here and is checked."""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import Device, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch  # noqa: E402
from cuda.core.utils import FileStreamProgramCache  # noqa: E402

SOURCE = r"""
extern "C" __global__ void iota(int* out, int start, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = start + i;
}
"""

# What each process runs: the entries it found, then the size of the CUBIN.
PROCESS = textwrap.dedent("""
    import sys
    from cuda.core import Program, ProgramOptions
    from cuda.core.utils import FileStreamProgramCache
    folder, arch, source = sys.argv[1], sys.argv[2], sys.stdin.read()
    with FileStreamProgramCache(folder) as cache:
        found = len(cache)
        code = Program(source, "c++", ProgramOptions(arch=arch)).compile("cubin", cache=cache)
    print(found, len(code.code))
""")

N = 4096

device = device_or_exit(Device)
arch = f"sm_{device.arch}"
folder = tempfile.mkdtemp(prefix="cuda-core-example-cache-")
runs = [subprocess.run([sys.executable, "-c", PROCESS, folder, arch], input=SOURCE, capture_output=True, text=True)
        for _ in range(2)]
for run in runs:
    if run.returncode != 0:
        sys.exit(f"a compiling process failed:\n{run.stderr}")
(first_found, first_size), (second_found, second_size) = (map(int, run.stdout.split()) for run in runs)
shared = first_found == 0 and second_found == 1 and first_size == second_size
print(f"first process found {first_found} entries, the second {second_found}: {'OK' if shared else 'FAILED'}")

stream = device.create_stream()
with FileStreamProgramCache(folder) as cache:
    kernel = Program(SOURCE, "c++", ProgramOptions(arch=arch)).compile("cubin", cache=cache).get_kernel("iota")
out = device.allocate(N * 4, stream=stream)
host = LegacyPinnedMemoryResource().allocate(N * 4, stream=stream)
values = (ctypes.c_int * N).from_address(host.handle)
launch(stream, LaunchConfig(grid=(N + 255) // 256, block=256), kernel, out, 7, N)
out.copy_to(host, stream=stream)
stream.sync()
ran = all(values[i] == 7 + i for i in range(N))
print(f"program_cache: the cached kernel over {N} elements: {'OK' if ran else 'FAILED'}")
out.close()
host.close()
stream.close()
shutil.rmtree(folder)
sys.exit(0 if shared and ran else 1)
