"""cubind.core against NVIDIA's cuda.core 1.2 and a C floor, side by side in one run.

Launch of an empty kernel with 0, 4 and 16 int arguments: per round a burst of
launches from C (benchmarks/driver_floor.cpp, loaded into this process: once
through cuLaunchKernel, once through cuLaunchKernelEx, the call both Python
packages make), through cubind.core.launch and through cuda.core.launch, on the same
context, stream and kernel (cubind's CUkernel; cuda.core's own, loaded from
the same CUBIN), in rotating order; the overhead is the median over rounds of
each burst less C's. Allocate + free of 4 KiB from the device's default pool:
per round C (benchmarks/core_alloc_floor.cpp), cubind and cuda.core, best of
rounds. Graph launch of a captured graph of 100 empty-kernel launches (each
side captures its own through GraphBuilder, then launches it in bursts, in
rotating order): per graph launch, the time to submit and the time to submit
and run to a stream sync, with the ratio cubind / cuda.core. Beside them:
Device(0).set_current() + create_stream(), Stream.record(), Event timing,
StridedMemoryView from a PyTorch tensor and from a CuPy array, and
`import cubind.core` against `import cuda.core`.

Goals (issue "cubind.core in Python, part 1"): launches within C + 0.3, 0.4 and
0.5 us for 0, 4 and 16 arguments; allocate + free within C + 0.25 us;
import <= 25 ms.

    python3 benchmarks/gpu_bench_core.py      (on a GPU machine)
"""
import ctypes
import os
import statistics
import sys
import time
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpu_bench_bindings import KERNELS, build_c_floor, build_call_floor, checked, import_ms, load_cpp_floor  # noqa: E402
from strided_view_host import export_floors, viewer  # noqa: E402

import cubind.core as cb  # noqa: E402

LAUNCHES_PER_BURST = 256
LAUNCH_ROUNDS = 300
WARMUP_ROUNDS = 10
ALLOC_BYTES = 4096
ALLOC_PER_ROUND = 2000
ALLOC_ROUNDS = 15
GOALS_US = {0: 0.3, 4: 0.4, 16: 0.5}
GRAPH_KERNELS = 100
GRAPH_LAUNCHES_PER_ROUND = 64
GRAPH_ROUNDS = 60


def build_alloc_floor():
    lib = load_cpp_floor("core_alloc_floor")
    lib.alloc_free_ns.restype = ctypes.c_double
    lib.alloc_free_ns.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_long, ctypes.c_int]
    if lib.alloc_floor_open() != 0:
        raise RuntimeError("allocation floor: libcuda.so.1 lacks cuMemAllocFromPoolAsync or cuMemFreeAsync")
    return lib


_BURST = """
def burst(launch, s, config, kernel, args, r, clock):
    start = clock()
    for _ in r:
        launch(s, config, kernel, *args)
    return clock() - start
"""


def timed_bursts(launch, head, nargs, count, stream):
    """A function timing `count` calls launch(*head, *args) with nargs int
    arguments from an idle stream, in ns per call: its loop is compiled once,
    with everything in locals, so the Python-side cost is the call itself."""
    env = {}
    exec(compile(_BURST, "<burst>", "exec"), env)
    burst = env["burst"]
    args = tuple(range(nargs))
    r = range(count)
    launch(*head, *args)
    stream.sync()

    def timed():
        stream.sync()
        ns = burst(launch, *head, args, r, time.perf_counter_ns)
        stream.sync()
        return ns / count
    return timed


def python_burst(module, stream, kernel, nargs, count):
    return timed_bursts(module.launch, (stream, module.LaunchConfig(grid=1, block=1), kernel), nargs, count, stream)


def floor_burst(floor, stream, kernel, nargs, count):
    """The Python launch floor (benchmarks/call_floor.pyx): stream and kernel as ints, no config."""
    return timed_bursts(floor.launch, (int(stream.handle), None, int(kernel.handle)), nargs, count, stream)


def alloc_free_ns(allocate, stream, sync_stream=None):
    """allocate(ALLOC_BYTES, stream=stream).close() in a loop, ns per pair."""
    sync_stream = stream if sync_stream is None else sync_stream

    def one_round():
        start = time.perf_counter_ns()
        for _ in range(ALLOC_PER_ROUND):
            allocate(ALLOC_BYTES, stream=stream).close()
        ns = (time.perf_counter_ns() - start) / ALLOC_PER_ROUND
        sync_stream.sync()
        return ns
    return one_round


def captured_graph(mod, device, kernel):
    """A Graph of GRAPH_KERNELS launches of `kernel` (no arguments), captured
    with mod's GraphBuilder; its builder is closed."""
    builder = device.create_graph_builder()
    builder.begin_building()
    config = mod.LaunchConfig(grid=1, block=1)
    for _ in range(GRAPH_KERNELS):
        mod.launch(builder, config, kernel)
    builder.end_building()
    graph = builder.complete()
    builder.close()
    return graph


def graph_rounds(graph, stream):
    """A function launching `graph` GRAPH_LAUNCHES_PER_ROUND times from an idle
    stream: (ns to submit, ns to submit and run to the sync), per launch."""
    graph.upload(stream)
    graph.launch(stream)
    stream.sync()
    launch = graph.launch
    r = range(GRAPH_LAUNCHES_PER_ROUND)

    def timed():
        stream.sync()
        start = time.perf_counter_ns()
        for _ in r:
            launch(stream)
        submitted = time.perf_counter_ns()
        stream.sync()
        done = time.perf_counter_ns()
        return (submitted - start) / GRAPH_LAUNCHES_PER_ROUND, (done - start) / GRAPH_LAUNCHES_PER_ROUND
    return timed


def per_call_us(fn, number=2000):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def strided_memory_view_rows(cc, stream, floor):
    """StridedMemoryView.from_any_interface of a PyTorch tensor and of a CuPy
    array, per construction (ptr, shape, strides and dtype read once, as a
    library function does), with stream_ptr=-1 so only the view is timed.
    Beside them the export floor (benchmarks/call_floor.pyx): the producer's
    export alone, through its DLPack exchange table where its type has one
    and through __dlpack__, the least of the two; no consumer can spend
    less. Goal: cubind at most half of cuda.core's time, and, both being
    above the floor, at most half of its time over the floor."""
    from cubind.core.utils import StridedMemoryView as ours_view

    theirs_view = None
    if cc is not None:
        from cuda.core.utils import StridedMemoryView as theirs_view
    arrays = []
    try:
        import torch

        if torch.cuda.is_available():
            arrays.append(("StridedMemoryView from a PyTorch tensor",
                           torch.zeros((64, 64), dtype=torch.float32, device="cuda")))
    except ImportError:
        pass
    try:
        import cupy

        arrays.append(("StridedMemoryView from a CuPy array", cupy.zeros((64, 64), dtype=cupy.float32)))
    except ImportError:
        pass
    print()
    print("| call | cubind us | cuda.core us | cubind / cuda.core | export floor us (how) | cubind over floor "
          "| cuda.core over floor | ratio over floor | goal |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    if not arrays:
        print("| StridedMemoryView | (neither PyTorch nor CuPy is installed) | | | | | | | |")
        return

    for label, array in arrays:
        floors = {how: per_call_us(fn, number=2000) for how, fn in export_floors(floor, array, -1).items()}
        how, least = min(floors.items(), key=lambda item: item[1]) if floors else ("none", float("nan"))
        ours = per_call_us(viewer(ours_view, array), number=2000)
        theirs = per_call_us(viewer(theirs_view, array), number=2000) if theirs_view is not None else float("nan")
        over = (ours - least) / (theirs - least) if theirs > least else float("nan")
        print(f"| {label} | {ours:.2f} | {theirs:.2f} | {ours / theirs:.2f} | {least:.2f} ({how}) "
              f"| {ours - least:.2f} | {theirs - least:.2f} | {over:.2f} | <= 0.50 |")


def main():
    try:
        import cuda.core as cc
    except ImportError:
        cc = None

    device = cb.Device(0)
    device.set_current()
    stream = device.create_stream()
    cubin = cb.Program(KERNELS, "c++", cb.ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").code
    module = cb.ObjectCode.from_cubin(cubin)
    kernels = {n: module.get_kernel(f"k{n}") for n in (0, 4, 16)}
    c_floor = build_c_floor()
    alloc_floor = build_alloc_floor()
    py_floor = build_call_floor()
    py_floor.set_entry_points(*(c_floor.floor_symbol(name) for name in
                                (b"cuLaunchKernelEx", b"cuMemAllocFromPoolAsync", b"cuMemFreeAsync")),
                              int(device.memory_resource.handle))

    sides = {"cubind": (cb, stream, kernels)}
    if cc is not None:
        cc_device = cc.Device(0)
        cc_device.set_current()
        cc_stream = cc.Stream.from_handle(int(stream.handle))
        cc_module = cc.ObjectCode.from_cubin(cubin)
        sides["cuda.core"] = (cc, cc_stream, {n: cc_module.get_kernel(f"k{n}") for n in (0, 4, 16)})

    # Two C floors in the same rounds: cuLaunchKernel, and cuLaunchKernelEx
    # (the entry point cubind.core and cuda.core both launch through, which
    # costs the driver more per launch); each side's overhead over each.
    # Beside them the Python floor: cuLaunchKernelEx behind a Python call of
    # launch's shape with the GIL released, nothing converted.
    results = {}
    floors = ("C", "C Ex")
    print("| launch | C ns | C Ex ns | Python floor over C Ex | "
          + " | ".join(f"{s} ns | {s} over C | {s} over C Ex | {s} over Python floor" for s in sides)
          + " | goal over C ns |")
    print("|---|---:|---:|---:|" + "---:|---:|---:|---:|" * len(sides) + "---:|")
    for n in (0, 4, 16):
        bursts = {floor: (lambda n=n, ex=ex: checked(c_floor.floor_launch_ns(
            int(kernels[n].handle), int(stream.handle), n, LAUNCHES_PER_BURST, ex), "launch"))
            for floor, ex in zip(floors, (0, 1))}
        bursts["Python floor"] = floor_burst(py_floor, stream, kernels[n], n, LAUNCHES_PER_BURST)
        for side, (mod, s, ks) in sides.items():
            bursts[side] = python_burst(mod, s, ks[n], n, LAUNCHES_PER_BURST)
        order = list(bursts)
        times = {side: [] for side in order}
        for round_ in range(-WARMUP_ROUNDS, LAUNCH_ROUNDS):
            shift = round_ % len(order)
            this_round = {side: bursts[side]() for side in order[shift:] + order[:shift]}
            if round_ >= 0:
                for side, ns in this_round.items():
                    times[side].append(ns)
        cells = []
        for side in sides:
            over = {floor: statistics.median(v - f for v, f in zip(times[side], times[floor]))
                    for floor in floors + ("Python floor",)}
            results[(side, n)] = over
            cells.append(f"{statistics.median(times[side]):.0f} | {over['C']:.0f} | {over['C Ex']:.0f} "
                         f"| {over['Python floor']:.0f}")
        floor_over = statistics.median(v - f for v, f in zip(times["Python floor"], times["C Ex"]))
        print(f"| {n} args | {statistics.median(times['C']):.0f} | {statistics.median(times['C Ex']):.0f} | "
              f"{floor_over:.0f} | " + " | ".join(cells) + f" | {GOALS_US[n] * 1000:.0f} |")
    print("over = median over rounds of (burst - the floor's burst of the same round), per launch")

    # Allocate + free of 4 KiB from the default pool, rounds of C and each side.
    pool = int(device.memory_resource.handle)
    rounds = {"C": lambda: checked(
        alloc_floor.alloc_free_ns(pool, int(stream.handle), ALLOC_BYTES, ALLOC_PER_ROUND, 1), "alloc")}
    rounds["Python floor"] = alloc_free_ns(py_floor.allocate, int(stream.handle), stream)
    rounds["cubind"] = alloc_free_ns(device.allocate, stream)
    if cc is not None:
        rounds["cuda.core"] = alloc_free_ns(cc_device.allocate, sides["cuda.core"][1])
    best = {side: float("inf") for side in rounds}
    for _ in range(ALLOC_ROUNDS):
        for side, fn in rounds.items():
            best[side] = min(best[side], fn())
    print()
    print("| allocate + free 4 KiB | ns | over C ns | over Python floor ns |")
    print("|---|---:|---:|---:|")
    for side, ns in best.items():
        print(f"| {side} | {ns:.0f} | {ns - best['C']:.0f} | {ns - best['Python floor']:.0f} |")
    print("goal: cubind within C + 250 ns; the Python floor is allocate + close with the GIL released around "
          "each driver call and nothing checked")

    # Graph launch: each side's own graph of the same 100 kernel launches.
    graphs = {"cubind": graph_rounds(captured_graph(cb, device, kernels[0]), stream)}
    if cc is not None:
        graphs["cuda.core"] = graph_rounds(
            captured_graph(cc, cc_device, sides["cuda.core"][2][0]), sides["cuda.core"][1])
    submit = {side: [] for side in graphs}
    total = {side: [] for side in graphs}
    order = list(graphs)
    for round_ in range(-WARMUP_ROUNDS, GRAPH_ROUNDS):
        shift = round_ % len(order)
        for side in order[shift:] + order[:shift]:
            sent, ran = graphs[side]()
            if round_ >= 0:
                submit[side].append(sent)
                total[side].append(ran)
    print()
    print(f"| graph launch of a {GRAPH_KERNELS}-kernel captured graph | cubind ns | cuda.core ns | cubind / cuda.core |")
    print("|---|---:|---:|---:|")
    for label, times in (("submit (Graph.launch returns)", submit), ("submit and run to sync", total)):
        ours = statistics.median(times["cubind"])
        theirs = statistics.median(times["cuda.core"]) if cc is not None else float("nan")
        print(f"| {label} | {ours:.0f} | {theirs:.0f} | {ours / theirs:.2f} |")
    print(f"per graph launch: median over {GRAPH_ROUNDS} rounds of {GRAPH_LAUNCHES_PER_ROUND} launches each")

    print()
    print("| call | cubind us | cuda.core us |")
    print("|---|---:|---:|")

    def setup(mod):
        def run():
            d = mod.Device(0)
            d.set_current()
            d.create_stream().close()
        return run

    def record(s):
        return lambda: s.record()

    def timing(mod, dev, s):
        options = mod.EventOptions(timing_enabled=True)

        def run():
            a = s.record(options=options)
            b = s.record(options=options)
            b.sync()
            return b - a
        return run

    rows = [("Device(0) + set_current() + create_stream()", lambda mod, d, s: setup(mod)),
            ("Stream.record()", lambda mod, d, s: record(s)),
            ("two timed events, sync, subtract", timing)]
    for label, make in rows:
        ours = per_call_us(make(cb, device, stream), number=500)
        theirs = per_call_us(make(cc, cc_device, sides["cuda.core"][1]), number=500) if cc is not None else float("nan")
        print(f"| {label} | {ours:.2f} | {theirs:.2f} |")

    strided_memory_view_rows(cc, stream, py_floor)

    print()
    ours = import_ms("cubind.core")
    theirs = import_ms("cuda.core") if cc is not None else float("nan")
    print("| import | ms |")
    print("|---|---:|")
    print(f"| cubind.core | {ours:.1f} |")
    print(f"| cuda.core | {theirs:.1f} |")
    print("goal: import cubind.core <= 25 ms")
    stream.close()


if __name__ == "__main__":
    main()
