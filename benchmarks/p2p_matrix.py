"""Peer-to-peer bandwidth and latency between every pair of GPUs, through
cubind.core, through cuda.core (where installed) and through the driver API
directly, in one process, as ratios to the driver's figures.

Each package runs examples/python/core/p2p_matrix.py's measure() unchanged
(its import swapped as examples/python/core/run.py swaps it). The driver's
figures come from the same devices, pools, buffers, streams and spin kernel
(cubind.core's), with the copies and the timing events made by
cuMemcpyAsync, cuEventRecord and cuEventElapsedTime from cubind.bindings.
Each matrix is measured ROUNDS times, the packages in turn, and each cell
keeps its best (highest bandwidth, lowest latency).

    python benchmarks/p2p_matrix.py

The goal: cubind.core's bandwidth >= 97% of the driver's in every cell, and
its latency no more than the driver's / 0.97."""
import os
import sys
import types
from typing import Any, Callable, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples", "python", "core")
sys.path.insert(0, EXAMPLES)
import run  # noqa: E402  (examples/python/core/run.py)

ROUNDS = 7
GOAL = 0.97


def load_example(implementation: str) -> Optional[types.ModuleType]:
    """p2p_matrix.py as a module on `implementation`, or None where that
    package is not installed."""
    path = os.path.join(EXAMPLES, "p2p_matrix.py")
    module = types.ModuleType(f"p2p_matrix_{implementation.replace('.', '_')}")
    module.__file__ = path
    try:
        exec(compile(run.source_for(implementation, path), path, "exec"), module.__dict__)
    except ImportError as error:
        print(f"{implementation}: not installed ({error})")
        return None
    return module


def driver_timer(example: types.ModuleType) -> Callable[..., float]:
    """A time_copies for `example`'s Setup whose copies and events are driver
    calls made through cubind.bindings."""
    from cubind.bindings import driver

    def check(result: Any) -> Any:
        err, *rest = result if isinstance(result, tuple) else (result,)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"driver call failed: {err!r}")
        return rest[0] if len(rest) == 1 else rest

    events: Dict[int, Any] = {}

    def time_copies(setup: Any, i: int, j: int, size: int, repeats: int) -> float:
        setup.devices[i].set_current()
        if i not in events:
            events[i] = (check(driver.cuEventCreate(0)), check(driver.cuEventCreate(0)))
        start, end = events[i]
        stream = driver.CUstream(int(setup.streams[i].handle))
        src = int(setup.buffers[size][i].handle)
        dst = int(setup.buffers[size][j].handle)
        setup.hold(i)
        check(driver.cuEventRecord(start, stream))
        for _ in range(repeats):
            check(driver.cuMemcpyAsync(dst, src, size, stream))
        check(driver.cuEventRecord(end, stream))
        check(driver.cuEventSynchronize(end))
        return float(check(driver.cuEventElapsedTime(start, end)))

    return time_copies


def best(results: List[Dict[str, Any]], key: str, better: Callable[..., Any]) -> List[List[Any]]:
    n = len(results[0][key])
    return [[None if i == j else better(r[key][i][j] for r in results) for j in range(n)] for i in range(n)]


def main() -> int:
    example = load_example("cubind")
    assert example is not None
    from _gpu import device_or_none  # examples/python/core/_gpu.py

    device, reason = device_or_none(example.Device)
    if device is None:
        print(f"no GPU: {reason}; skipped")
        return 0
    devices = example.Device.get_all_devices()
    if len(devices) < 2:
        print(f"{len(devices)} GPU: no pair to measure; skipped")
        return 0
    packages = {"cubind.core": example}
    reference = load_example("cuda.core")
    if reference is not None:
        packages["cuda.core"] = reference
    runs: Dict[str, List[Dict[str, Any]]] = {name: [] for name in ["driver", *packages]}
    raw_example = load_example("cubind")
    assert raw_example is not None
    raw_example.time_copies = driver_timer(raw_example)
    for _ in range(ROUNDS):
        runs["driver"].append(raw_example.measure())
        for name, module in packages.items():
            runs[name].append(module.measure())
    bandwidth = {name: best(r, "bandwidth", max) for name, r in runs.items()}
    latency = {name: best(r, "latency", min) for name, r in runs.items()}
    n = len(devices)
    print(f"{n} x {devices[0].name}; best of {ROUNDS} rounds; bandwidth of "
          f"{example.BANDWIDTH_BYTES >> 20} MiB copies, latency of {example.LATENCY_BYTES}-byte copies")
    print("| pair | driver GB/s | " + " | ".join(f"{p} GB/s (ratio)" for p in packages)
          + " | driver us | " + " | ".join(f"{p} us (ratio)" for p in packages) + " |")
    print("|---" * (3 + 2 * len(packages)) + "|")
    met = True
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            cells = [f"{i} -> {j}", f"{bandwidth['driver'][i][j]:.1f}"]
            for p in packages:
                ratio = bandwidth[p][i][j] / bandwidth["driver"][i][j]
                cells.append(f"{bandwidth[p][i][j]:.1f} ({ratio:.3f})")
                met = met and (p != "cubind.core" or ratio >= GOAL)
            cells.append(f"{latency['driver'][i][j]:.2f}")
            for p in packages:
                ratio = latency["driver"][i][j] / latency[p][i][j]
                cells.append(f"{latency[p][i][j]:.2f} ({ratio:.3f})")
                met = met and (p != "cubind.core" or ratio >= GOAL)
            print("| " + " | ".join(cells) + " |")
    print(f"goal (cubind.core >= {GOAL:.0%} of the driver's figures in every cell): {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
