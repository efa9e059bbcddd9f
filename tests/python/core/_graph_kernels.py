"""What the graph GPU tests (captured and built node by node) share: the
kernels they put in graphs, a launch configuration over N ints, and reading
the ints of a device buffer back."""
import struct

from cubind.core import LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions

N = 1000
BLOCK = 128

# cudaGraphSetConditional is a device-runtime builtin NVRTC lowers itself:
# declared, it needs neither -rdc nor cudadevrt.
SOURCE = r"""
extern "C" __device__ __cudart_builtin__ void CUDARTAPI cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                                 unsigned int value);
extern "C" {
__global__ void fill(int* out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}

__global__ void add(int* out, int value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += value;
}

__global__ void count_to(int* word, int limit, cudaGraphConditionalHandle condition)
{
    *word += 1;
    cudaGraphSetConditional(condition, *word < limit ? 1u : 0u);
}

__global__ void set_condition(cudaGraphConditionalHandle condition, unsigned int value)
{
    cudaGraphSetConditional(condition, value);
}
}
"""


def compile_kernels(device):
    """SOURCE as a cubin for the device."""
    return Program(SOURCE, "c++", ProgramOptions(arch="sm_" + device.arch, std="c++17")).compile("cubin")


def config(n=N):
    return LaunchConfig(grid=(n + BLOCK - 1) // BLOCK, block=BLOCK)


def read_ints(buffer, stream, count):
    """The first count ints of a device buffer, copied out on stream."""
    host = LegacyPinnedMemoryResource().allocate(buffer.size, stream=stream)
    buffer.copy_to(host, stream=stream)
    stream.sync()
    values = struct.unpack(f"{count}i", bytes(memoryview(host))[: count * 4])
    host.close()
    return values
