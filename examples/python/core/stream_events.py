"""Stream ordering with events: a producer stream fills a buffer, a consumer
stream waits on an event recorded after it and then doubles it; timing
events around the work give its device time."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import (  # noqa: E402
    Device, EventOptions, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch,
)

SOURCE = r"""
extern "C" __global__ void fill(int* out, int value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}
extern "C" __global__ void twice(int* data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= 2;
}
"""

N = 1 << 22

device = device_or_exit(Device)
module = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin")
producer, consumer = device.create_stream(), device.create_stream()
config = LaunchConfig(grid=(N + 255) // 256, block=256)
timing = EventOptions(timing_enabled=True)

data = device.allocate(N * 4, stream=producer)
start = producer.record(options=timing)
launch(producer, config, module.get_kernel("fill"), data, 21, N)
filled = producer.record()
consumer.wait(filled)
launch(consumer, config, module.get_kernel("twice"), data, N)
end = consumer.record(options=timing)

host = LegacyPinnedMemoryResource().allocate(N * 4, stream=consumer)
data.copy_to(host, stream=consumer)
consumer.sync()
values = (ctypes.c_int * N).from_address(host.handle)
ok = all(values[i] == 42 for i in range(0, N, 4099))
print(f"fill on one stream, twice on another after its event: {'OK' if ok else 'FAILED'}; "
      f"device time {end - start:.3f} ms")
data.close(consumer)
host.close()
producer.close()
consumer.close()
sys.exit(0 if ok else 1)
