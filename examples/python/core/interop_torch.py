"""With PyTorch: a kernel of ours launched on a tensor, on PyTorch's stream,
and a Buffer of ours read by PyTorch through DLPack, both without a copy."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import Device, LaunchConfig, Program, ProgramOptions, Stream, launch  # noqa: E402

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
    import torch
except ImportError as error:
    print(f"no PyTorch: {error}; skipped")
    sys.exit(0)

kernel = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("scale")
config = LaunchConfig(grid=(N + 255) // 256, block=256)

# Their tensor, their stream, our kernel.
torch_stream = torch.cuda.Stream()
with torch.cuda.stream(torch_stream):
    t = torch.arange(N, dtype=torch.float32, device="cuda")
stream = Stream.from_handle(torch_stream.cuda_stream)
launch(stream, config, kernel, t.data_ptr(), ctypes.c_float(3.0), ctypes.c_size_t(N))
stream.sync()
expected = 3 * torch.arange(N, dtype=torch.float32, device="cuda")
ours_on_theirs = bool(torch.equal(t, expected))

# Our buffer, read by PyTorch through DLPack (bytes, viewed as float32).
own = device.create_stream()
buffer = device.allocate(N * 4, stream=own)
buffer.fill(0, stream=own)
own.sync()
view = torch.from_dlpack(buffer).view(torch.float32)
view += 2
torch.cuda.synchronize()
launch(own, config, kernel, buffer, ctypes.c_float(5.0), ctypes.c_size_t(N))
own.sync()
theirs_on_ours = bool((view == 10).all())

print(f"our kernel on a PyTorch tensor: {'OK' if ours_on_theirs else 'FAILED'}; "
      f"a Buffer through DLPack in PyTorch: {'OK' if theirs_on_ours else 'FAILED'}")
del view
buffer.close(own)
own.close()
sys.exit(0 if ours_on_theirs and theirs_on_ours else 1)
