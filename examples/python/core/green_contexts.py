"""Green contexts: the device's SMs split into two groups, a green context on
each, and a kernel run on a stream of each. Checks that every element was
written and that each context reports the SMs its group was given."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import (  # noqa: E402
    ContextOptions,
    Device,
    LaunchConfig,
    LegacyPinnedMemoryResource,
    Program,
    ProgramOptions,
    SMResourceOptions,
    launch,
)

SOURCE = r"""
extern "C" __global__ void fill(int* out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}
"""

N = 1 << 16

device = device_or_exit(Device)
sm = device.resources.sm
# Two groups of equal size, in whole steps of the smallest partition the
# device allows (rounded up to the co-scheduling alignment).
alignment = max(sm.coscheduled_alignment, 1)
step = -(-max(sm.min_partition_size, alignment) // alignment) * alignment
count = sm.sm_count // 2 // step * step
if count < sm.min_partition_size or count == 0:
    print(f"green_contexts: {sm.sm_count} SMs are too few for two partitions; skipped")
    sys.exit(0)
groups, remainder = sm.split(SMResourceOptions(count=[count, count]))
print(f"green_contexts: {sm.sm_count} SMs split into {[g.sm_count for g in groups]}, {remainder.sm_count} left over")

kernel = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("fill")
pinned = LegacyPinnedMemoryResource()
block = 256
problems = []
for index, group in enumerate(groups):
    context = device.create_context(ContextOptions(resources=[group]))
    given = context.resources.sm.sm_count
    if not context.is_green or given != group.sm_count:
        problems.append(f"context {index} has {given} SMs, its group {group.sm_count}")
    stream = context.create_stream()
    base = 1000 * (index + 1)
    out = device.allocate(N * 4, stream=stream)
    launch(stream, LaunchConfig(grid=(N + block - 1) // block, block=block), kernel, out, ctypes.c_int(base),
           ctypes.c_int(N))
    host = pinned.allocate(N * 4, stream=stream)
    out.copy_to(host, stream=stream)
    stream.sync()
    values = (ctypes.c_int * N).from_address(int(host.handle))
    wrong = [i for i in range(N) if values[i] != base + i]
    if wrong:
        problems.append(f"context {index}: {len(wrong)} wrong elements, first at {wrong[0]}")
    out.close(stream)
    host.close()
    stream.close()
    context.close()

if problems:
    print("green_contexts: FAILED: " + "; ".join(problems))
    sys.exit(1)
print(f"green_contexts: {len(groups)} green contexts, {N} elements each OK")
