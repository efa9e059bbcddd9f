"""Every pair of GPUs, one process per GPU: each process allocates a buffer
from an IPC-enabled memory pool on its own device, fills it with a kernel
and records an IPC event; the processes exchange pools, buffers and events
through queues; then each one grants its device access to every peer's pool,
waits on the peer's event, pulls the peer's buffer into its own memory,
checks the data and times the copies (unidirectional bandwidth, peer to
self). A process frees its memory only after every peer has let go of its
mapping.

With one GPU the example says so and stops: there is no pair to measure."""
import ctypes
import importlib
import multiprocessing
import os
import queue
import sys
from typing import Any, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

FILL = r"""
extern "C" __global__ void fill(unsigned int* out, unsigned int seed, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = seed * 2654435761u + i;
}
"""

WORDS = 16 << 20  # 64 MiB a buffer
REPEATS = 10
TIMEOUT = 180


def expected(seed: int, i: int) -> int:
    return (seed * 2654435761 + i) & 0xFFFFFFFF


def worker(core_name: str, rank: int, inboxes: List[Any], outbox: Any) -> None:
    """Process `rank`: owns device `rank`, sends its pool, buffer and event
    to every peer's inbox, pulls every peer's buffer; tells the parent
    ("row", rank, GB/s per peer, ok), then ("done", rank) once released."""
    core = importlib.import_module(core_name)
    device = core.Device(rank)
    device.set_current()
    stream = device.create_stream()
    kernel = core.Program(FILL, "c++", core.ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel(
        "fill")
    mr = core.DeviceMemoryResource(device, core.DeviceMemoryResourceOptions(ipc_enabled=True))
    mine = mr.allocate(WORDS * 4, stream=stream)
    core.launch(stream, core.LaunchConfig(grid=(WORDS + 255) // 256, block=256), kernel, mine, rank + 1, WORDS)
    ready = stream.record(options=core.EventOptions(ipc_enabled=True))
    for peer, inbox in enumerate(inboxes):
        if peer != rank:
            inbox.put((rank, (mr, mine, ready)))
    # Unpickling maps each peer's pool, buffer and event into this process.
    peers = dict(inboxes[rank].get(timeout=TIMEOUT) for _ in range(len(inboxes) - 1))
    local = device.allocate(WORDS * 4, stream=stream)
    host = core.LegacyPinnedMemoryResource().allocate(WORDS * 4, stream=stream)
    timing = core.EventOptions(timing_enabled=True)
    row: List[Optional[float]] = [None] * len(inboxes)
    ok = True
    for peer, (pool, buffer, event) in sorted(peers.items()):
        pool.peer_accessible_by = [device]
        stream.wait(event)  # ordered after the peer's fill, made in its own process
        buffer.copy_to(local, stream=stream)  # the first copy sets up the path
        start = stream.record(options=timing)
        for _ in range(REPEATS):
            buffer.copy_to(local, stream=stream)
        end = stream.record(options=timing)
        local.copy_to(host, stream=stream)
        stream.sync()
        row[peer] = WORDS * 4 * REPEATS / ((end - start) * 1e-3) / 1e9
        values = (ctypes.c_uint32 * WORDS).from_address(int(host.handle))
        if any(values[i] != expected(peer + 1, i) for i in range(0, WORDS, 65537)):
            print(f"process {rank}: the buffer of process {peer} differs")
            ok = False
        buffer.close(stream)  # unmapped here before its owner frees it
    stream.sync()
    outbox.put(("row", rank, row, ok))

    inboxes[rank].get(timeout=TIMEOUT)  # every process has let go of its peers' mappings
    local.close(stream)
    host.close()
    mine.close(stream)
    stream.sync()
    mr.close()
    outbox.put(("done", rank))


def main() -> int:
    from cuda.core import Device

    device_or_exit(Device)
    count = len(Device.get_all_devices())
    if count < 2:
        print(f"{count} GPU: no pair to measure; skipped")
        return 0
    if not all(d.properties.mempool_supported_handle_types & 1 for d in Device.get_all_devices()):
        print("a device's memory pools cannot be shared as file descriptors; skipped")
        return 0
    core_name = ".".join(Device.__module__.split(".")[:2])
    ctx = multiprocessing.get_context("spawn")
    inboxes = [ctx.Queue() for _ in range(count)]
    outbox = ctx.Queue()
    workers = [ctx.Process(target=worker, args=(core_name, rank, inboxes, outbox)) for rank in range(count)]
    for process in workers:
        process.start()

    def receive(kind: str) -> List[Any]:
        # Waits a second at a time, so that a worker that died (a crash
        # prints no message) ends the run at once instead of at the timeout.
        got: List[Any] = []
        waited = 0
        while len(got) < count:
            try:
                message = outbox.get(timeout=1)
            except queue.Empty:
                dead = [f"process {rank} (exit code {p.exitcode})" for rank, p in enumerate(workers)
                        if p.exitcode not in (None, 0)]
                if dead:
                    raise RuntimeError(f"waiting for {kind!r}: {', '.join(dead)} ended without answering") from None
                waited += 1
                if waited >= TIMEOUT:
                    raise RuntimeError(f"no {kind!r} from every worker after {TIMEOUT} s") from None
                continue
            if message[0] != kind:
                raise RuntimeError(f"expected {kind!r} from the workers, got {message[0]!r}")
            got.append(message)
        return sorted(got, key=lambda m: m[1])

    ok = False
    rows: List[Any] = []
    try:
        rows = receive("row")  # the workers exchange their memory among themselves
        for rank in range(count):
            inboxes[rank].put("release")
        receive("done")
        ok = all(m[3] for m in rows)
    finally:
        for process in workers:
            process.join(TIMEOUT if ok else 2)  # after a failure the others wait on their inboxes
            if process.is_alive():
                process.kill()
                ok = False
    ok = ok and all(p.exitcode == 0 for p in workers)
    print("bandwidth (GB/s) of a pull by the row's process from the column's, each process on its own GPU")
    print("      " + "".join(f"{j:>9}" for j in range(count)))
    for m in rows:
        print(f"{m[1]:>6}" + "".join(f"{'-':>9}" if v is None else f"{v:>9.2f}" for v in m[2]))
    print(f"{count} processes, one GPU each, every pair over IPC: {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
