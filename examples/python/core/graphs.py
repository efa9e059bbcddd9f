"""CUDA graphs built by stream capture. Three kernels and a copy back are
captured once with a GraphBuilder, then the whole graph runs five times, one
call each. A second graph holds a conditional while node: its body, a kernel
that counts, runs again and again until device code clears the condition
(cudaGraphSetConditional), with no round trip to the host. A third graph is
built node by node with a GraphDefinition (graph memory, a fill, a kernel, a
copy back, a free, and a host callback after them), and one of its kernel
nodes is then given new arguments in the instantiated graph. A fourth graph
allocates under capture: graph memory (GraphMemoryResource) becomes the
graph's own allocation node, while a pool's allocation (DeviceMemoryResource)
on the capturing stream is refused without spoiling the capture; it ends with
a C function (a ctypes function pointer) as a host callback, called with a
copy of its user data, captured and in a graph built node by node."""
import ctypes
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import (  # noqa: E402
    Device, DeviceMemoryResource, GraphMemoryResource, LaunchConfig, LegacyPinnedMemoryResource, Program,
    ProgramOptions, launch,
)
from cuda.core.graph import GraphDefinition  # noqa: E402

# cudaGraphSetConditional is a device-runtime builtin that NVRTC compiles
# itself once declared: no -rdc, no device runtime library to link.
SOURCE = r"""
extern "C" __device__ __cudart_builtin__ void CUDARTAPI cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                                 unsigned int value);
extern "C" {
__global__ void iota(int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i;
}
__global__ void scale(int* data, int factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
__global__ void add(int* data, int value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += value;
}
__global__ void count_to(int* counter, int limit, cudaGraphConditionalHandle keep_going)
{
    *counter += 1;
    cudaGraphSetConditional(keep_going, *counter < limit ? 1u : 0u);
}
}
"""

N = 1 << 20
LIMIT = 100

device = device_or_exit(Device)
module = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}", std="c++17")).compile("cubin")
stream = device.create_stream()
config = LaunchConfig(grid=(N + 255) // 256, block=256)
data = device.allocate(N * 4, stream=stream)
host = LegacyPinnedMemoryResource().allocate(N * 4, stream=stream)

# Capture: nothing runs while the builder is building; work submitted to it is recorded.
builder = device.create_graph_builder()
builder.begin_building()
launch(builder, config, module.get_kernel("iota"), data, N)
launch(builder, config, module.get_kernel("scale"), data, 3, N)
launch(builder, config, module.get_kernel("add"), data, 2, N)
data.copy_to(host, stream=builder)
builder.end_building()
graph = builder.complete()
graph.upload(stream)

values = (ctypes.c_int * N).from_address(host.handle)
ok = True
for _ in range(5):
    ctypes.memset(host.handle, 0, N * 4)
    graph.launch(stream)
    stream.sync()
    ok = ok and all(values[i] == 3 * i + 2 for i in range(0, N, 4099))
print(f"3 kernels and a copy captured once, launched 5 times: {'OK' if ok else 'FAILED'}")

# A while node: the condition starts at 1 at each launch (its default value);
# the body's kernel clears it once the counter reaches LIMIT.
counter = device.allocate(4, stream=stream)
counter_host = LegacyPinnedMemoryResource().allocate(4, stream=stream)
counter_value = (ctypes.c_int32 * 1).from_address(int(counter_host.handle))
builder2 = device.create_graph_builder()
builder2.begin_building()
counter.fill(0, stream=builder2)
keep_going = builder2.create_condition(1)
body = builder2.while_loop(keep_going)
body.begin_building()
launch(body, LaunchConfig(grid=1, block=1), module.get_kernel("count_to"), counter, LIMIT, keep_going)
body.end_building()
counter.copy_to(counter_host, stream=builder2)
builder2.end_building()
loop = builder2.complete()

counted: list[int] = []
for _ in range(2):
    loop.launch(stream)
    stream.sync()
    counted.append(counter_value[0])
loop_ok = counted == [LIMIT, LIMIT]
print(f"while node counted to {counted} (expected {LIMIT} each launch): {'OK' if loop_ok else 'FAILED'}")

# Node by node: each node says what it depends on; nothing runs until launch.
launches: list[int] = []
g = GraphDefinition()
scratch = g.allocate(N * 4)
cleared = scratch.memset(scratch.dptr, 0, N * 4)
summed = cleared.launch(config, module.get_kernel("add"), scratch.dptr, 7, N)
copied = summed.memcpy(host, scratch.dptr, N * 4)
freed = copied.deallocate(scratch.dptr)
freed.callback(lambda: launches.append(1))
explicit = g.instantiate()
explicit.launch(stream)
stream.sync()
first_ok = all(values[i] == 7 for i in range(0, N, 4099))
# The kernel node of the instantiated graph takes new arguments in place.
explicit[summed].update(config=config, kernel=module.get_kernel("add"), args=(scratch.dptr, 40, N))
explicit.launch(stream)
stream.sync()
second_ok = all(values[i] == 40 for i in range(0, N, 4099))
explicit_ok = first_ok and second_ok and len(launches) == 2 and len(g.nodes()) == 6
print(f"graph built node by node, then its kernel node updated: {'OK' if explicit_ok else 'FAILED'}")

# Allocation under capture. Graph memory is allocated and freed by each launch
# of the graph; a pool's allocation on the capturing stream raises RuntimeError
# before anything reaches the driver, and the capture carries on.
pool, graph_memory = DeviceMemoryResource(device), GraphMemoryResource(device)
builder3 = device.create_graph_builder().begin_building("thread_local")
try:
    pool.allocate(64, stream=builder3)
    refused = False
except RuntimeError:
    refused = True
temp = graph_memory.allocate(N * 4, stream=builder3)
launch(builder3, config, module.get_kernel("iota"), temp, N)
launch(builder3, config, module.get_kernel("add"), temp, 5, N)
temp.copy_to(host, stream=builder3)
temp.close(stream=builder3)

# A C function as a host callback: the driver calls it with its user data,
# here a copy of the bytes given (an int would be passed as an address).
seen: list[int] = []
HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # CUhostFn: void (*)(void*)
on_done = HOST_FN(lambda user_data: seen.append(ctypes.c_int32.from_address(user_data).value))
builder3.callback(on_done, user_data=struct.pack("i", 42))
captured = builder3.end_building().complete()
g2 = GraphDefinition()
g2.callback(on_done, user_data=struct.pack("i", 7))
by_node = g2.instantiate()
values_ok = True
for _ in range(2):
    ctypes.memset(host.handle, 0, N * 4)
    captured.launch(stream)
    stream.sync()
    values_ok = values_ok and all(values[i] == i + 5 for i in range(0, N, 4099))
by_node.launch(stream)
stream.sync()
capture_ok = refused and values_ok and seen == [42, 42, 7]
print(f"graph memory under capture, a pool refused ({refused}), ctypes callbacks saw {seen}: "
      f"{'OK' if capture_ok else 'FAILED'}")

for owner in (by_node, captured, builder3, explicit, loop, graph, body, builder2, builder):
    owner.close()
counter.close(stream)
data.close(stream)
host.close()
counter_host.close()
stream.close()
sys.exit(0 if ok and loop_ok and explicit_ok and capture_ok else 1)
