"""StridedMemoryView of a NumPy array, cubind.core against NVIDIA's cuda.core 1.2 and
the export floor, side by side in one run.

A view is `StridedMemoryView.from_any_interface(array, -1)` with its ptr, shape,
strides and dtype read, as a library function taking any array does. The
floor (benchmarks/call_floor.pyx) is the producer's own export behind a
Python call: `array.__dlpack_device__()` and `array.__dlpack__(max_version=(1, 0))`,
the capsule dropped, which no DLPack consumer can avoid. Per side best of
rounds, the sides in rotating order. No GPU is needed; on a GPU machine,
benchmarks/gpu_bench_core.py has the same rows for PyTorch and CuPy arrays.

Goal (issue "cubind.core in Python, part 2"): cubind at most half of
cuda.core's time, and at most half of its time over the floor.

    python3 benchmarks/strided_view_numpy.py
"""
import os
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_bench_bindings import build_call_floor  # noqa: E402

ROUNDS = 7
NUMBER = 20000


def best_ns(fn):
    return timeit.timeit(fn, number=NUMBER) / NUMBER * 1e9


def viewer(cls, array):
    def run():
        view = cls.from_any_interface(array, -1)
        return view.ptr, view.shape, view.strides, view.dtype
    return run


def main():
    from cubind.core.utils import StridedMemoryView as ours

    try:
        from cuda.core.utils import StridedMemoryView as theirs
    except ImportError:
        theirs = None
    floor = build_call_floor()
    array = np.zeros((64, 64), dtype=np.float32)
    sides = {"floor": lambda: floor.dlpack_capsule(array, None), "cubind": viewer(ours, array)}
    if theirs is not None:
        sides["cuda.core"] = viewer(theirs, array)
    best = {name: float("inf") for name in sides}
    order = list(sides)
    for round_ in range(ROUNDS):
        shift = round_ % len(order)
        for name in order[shift:] + order[:shift]:
            best[name] = min(best[name], best_ns(sides[name]))
    ours_ns, floor_ns = best["cubind"], best["floor"]
    theirs_ns = best.get("cuda.core", float("nan"))
    print("| StridedMemoryView of a NumPy array | ns |")
    print("|---|---:|")
    for name in order:
        print(f"| {name} | {best[name]:.0f} |")
    print(f"cubind / cuda.core: {ours_ns / theirs_ns:.2f} (goal <= 0.50); over the floor: "
          f"{ours_ns - floor_ns:.0f} ns against {theirs_ns - floor_ns:.0f} ns, "
          f"{(ours_ns - floor_ns) / (theirs_ns - floor_ns):.2f} (goal <= 0.50)")


if __name__ == "__main__":
    main()
