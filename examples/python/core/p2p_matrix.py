"""Bandwidth and latency between every pair of GPUs, measured as NVIDIA's
p2pBandwidthLatencyTest measures them. Each device's memory pool is made
accessible to every other device, one buffer comes from each pool, and
stream-ordered copies (Buffer.copy_to) move data from device i to device j,
timed by events on device i's stream. A kernel that spins for a fixed time
holds the stream while the copies are queued, so only the GPU's time counts.

With one GPU the example says so and stops: there is no pair to measure.
benchmarks/p2p_matrix.py runs measure() on each package and compares it with
the same copies made through the driver API."""
import ctypes
import os
import sys
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import (  # noqa: E402
    Buffer, Device, EventOptions, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch,
)

SPIN = r"""
extern "C" __global__ void spin(unsigned long long cycles)
{
    unsigned long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""

BANDWIDTH_BYTES = 64 << 20
BANDWIDTH_REPEATS = 10
LATENCY_BYTES = 4
LATENCY_REPEATS = 100
SPIN_MS = 20


class Setup:
    """The devices, a stream and two buffers (large and small) on each, peer
    access between their pools, and the spin kernel: what every measurement
    of one run shares."""

    def __init__(self) -> None:
        self.devices = list(Device.get_all_devices())
        self.timing = EventOptions(timing_enabled=True)
        self.streams: List[Any] = []
        self.buffers: Dict[int, List[Any]] = {BANDWIDTH_BYTES: [], LATENCY_BYTES: []}
        self.spins: List[Any] = []
        for device in self.devices:
            device.set_current()
            device.memory_resource.peer_accessible_by = [
                d for d in self.devices if d.device_id != device.device_id and d.can_access_peer(device)]
            stream = device.create_stream()
            self.streams.append(stream)
            for size, buffers in self.buffers.items():
                buffers.append(device.allocate(size, stream=stream))
            program = Program(SPIN, "c++", ProgramOptions(arch=f"sm_{device.arch}"))
            self.spins.append(program.compile("cubin").get_kernel("spin"))
        for stream in self.streams:
            stream.sync()

    def hold(self, i: int) -> None:
        """Queues the spin kernel on device i's stream: what is queued after
        it starts only when it ends, so the copies run back to back."""
        cycles = self.devices[i].properties.clock_rate * SPIN_MS  # kHz x ms
        launch(self.streams[i], LaunchConfig(grid=1, block=1), self.spins[i], cycles)

    def close(self) -> None:
        for buffers in self.buffers.values():
            for buffer, stream in zip(buffers, self.streams):
                buffer.close(stream)
        for stream in self.streams:
            stream.sync()
            stream.close()


def time_copies(setup: Setup, i: int, j: int, size: int, repeats: int) -> float:
    """Milliseconds of GPU time for `repeats` copies of `size` bytes from
    device i's buffer to device j's, on device i's stream."""
    setup.devices[i].set_current()
    stream = setup.streams[i]
    src, dst = setup.buffers[size][i], setup.buffers[size][j]
    setup.hold(i)
    start = stream.record(options=setup.timing)
    for _ in range(repeats):
        src.copy_to(dst, stream=stream)
    end = stream.record(options=setup.timing)
    end.sync()
    return float(end - start)


def measure(setup: Any = None) -> Dict[str, Any]:
    """{"devices": names, "bandwidth": GB/s, "latency": microseconds}, the
    last two as n x n lists with None on the diagonal; over the given
    Setup, or over one of its own."""
    own = setup is None
    setup = Setup() if own else setup
    n = len(setup.devices)
    bandwidth: List[List[Any]] = [[None] * n for _ in range(n)]
    latency: List[List[Any]] = [[None] * n for _ in range(n)]
    try:
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                time_copies(setup, i, j, BANDWIDTH_BYTES, 1)  # a pair's first copy sets up its path
                ms = time_copies(setup, i, j, BANDWIDTH_BYTES, BANDWIDTH_REPEATS)
                bandwidth[i][j] = BANDWIDTH_BYTES * BANDWIDTH_REPEATS / (ms * 1e-3) / 1e9
                ms = time_copies(setup, i, j, LATENCY_BYTES, LATENCY_REPEATS)
                latency[i][j] = ms * 1e3 / LATENCY_REPEATS
    finally:
        if own:
            setup.close()
    return {"devices": [d.name for d in setup.devices], "bandwidth": bandwidth, "latency": latency}


def table(title: str, unit: str, values: List[List[Any]]) -> str:
    n = len(values)
    lines = [f"{title} ({unit}), row: from device, column: to device",
             "      " + "".join(f"{j:>9}" for j in range(n))]
    for i, row in enumerate(values):
        lines.append(f"{i:>6}" + "".join(f"{'-':>9}" if v is None else f"{v:>9.2f}" for v in row))
    return "\n".join(lines)


def check(setup: Setup) -> bool:
    """A pattern written to each device's buffer, copied to every peer,
    arrives unchanged."""
    size = 1 << 20
    n = len(setup.devices)
    host = [LegacyPinnedMemoryResource().allocate(size, stream=setup.streams[0]) for _ in range(2)]
    ok = True
    for i in range(n):
        pattern = bytes((i * 37 + k * 7) & 0xFF for k in range(size))
        ctypes.memmove(int(host[0].handle), pattern, size)
        # Views of the first `size` bytes of each large buffer; they own nothing.
        src = Buffer.from_handle(int(setup.buffers[BANDWIDTH_BYTES][i].handle), size)
        src.copy_from(host[0], stream=setup.streams[i])
        for j in range(n):
            if j == i:
                continue
            ctypes.memset(int(host[1].handle), 0, size)
            dst = Buffer.from_handle(int(setup.buffers[BANDWIDTH_BYTES][j].handle), size)
            src.copy_to(dst, stream=setup.streams[i])
            dst.copy_to(host[1], stream=setup.streams[i])
            setup.streams[i].sync()
            if ctypes.string_at(int(host[1].handle), size) != pattern:
                print(f"copy {i} -> {j}: the data differs")
                ok = False
    for buffer in host:
        buffer.close()
    return ok


def main() -> int:
    device_or_exit(Device)
    if len(Device.get_all_devices()) < 2:
        print(f"{len(Device.get_all_devices())} GPU: no pair to measure; skipped")
        return 0
    setup = Setup()
    try:
        ok = check(setup)
        result = measure(setup)
    finally:
        setup.close()
    print(table("unidirectional bandwidth, peer access on", "GB/s", result["bandwidth"]))
    print(table(f"latency of {LATENCY_BYTES}-byte copies", "us", result["latency"]))
    print(f"{len(result['devices'])} GPUs ({result['devices'][0]}), every pair: {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
