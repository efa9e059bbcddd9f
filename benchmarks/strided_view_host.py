"""StridedMemoryView of host arrays, cubind.core against NVIDIA's cuda.core 1.2 and
the export floor, side by side in one run: a NumPy array, and a PyTorch CPU tensor
where PyTorch is installed.

A view is `StridedMemoryView.from_any_interface(array, -1)` with its ptr, shape,
strides and dtype read, as a library function taking any array does. The
floor (benchmarks/call_floor.pyx) is the producer's own export behind a
Python call, which no consumer can avoid: through the type's DLPack exchange
table where it has one (PyTorch), and `array.__dlpack_device__()` and
`array.__dlpack__(max_version=(1, 0))`, the capsule dropped; the least of the
two (export_floors). Per side best of
rounds, the sides in rotating order. No GPU is needed; on a GPU machine,
benchmarks/side_by_side.py has the same rows for PyTorch and CuPy device arrays.

Goal (issue "cubind.core in Python, part 2"): cubind at most half of
cuda.core's time, and at most half of its time over the floor.

    python3 benchmarks/strided_view_host.py
"""
import os
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import build_call_floor  # noqa: E402

ROUNDS = 7
NUMBER = 20000


def best_ns(fn):
    return timeit.timeit(fn, number=NUMBER) / NUMBER * 1e9


def viewer(cls, array):
    """One view of array as a library function makes it (side_by_side.py's
    device rows too): from_any_interface with no stream ordering, then ptr,
    shape, strides and dtype read."""
    def run():
        view = cls.from_any_interface(array, -1)
        return view.ptr, view.shape, view.strides, view.dtype
    return run


def export_floors(floor, array, stream):
    """The producer's export alone behind a Python call (call_floor.pyx), as
    name -> function: "__dlpack__" (__dlpack_device__ and __dlpack__ with
    `stream`, the capsule dropped) where the producer takes that stream, and
    "exchange table" where its type has one. No consumer spends less than the
    least of them. Time them before the next array's floors are set up."""
    floors = {}
    try:
        floor.dlpack_capsule(array, stream)
    except Exception as e:  # a producer that refuses the stream: that floor is not measured
        print(f"(the __dlpack__ floor of {type(array).__name__} failed: {e!r})")
    else:
        floors["__dlpack__"] = lambda: floor.dlpack_capsule(array, stream)
    if floor.set_dlpack_exchange(array):
        floors["exchange table"] = lambda: floor.dlpack_exchange(array)
    return floors


def arrays():
    """(label, array) of each host producer installed."""
    found = [("a NumPy array", np.zeros((64, 64), dtype=np.float32))]
    try:
        import torch
    except ImportError:
        pass
    else:
        found.append(("a PyTorch CPU tensor", torch.zeros((64, 64), dtype=torch.float32)))
    return found


def main():
    from cubind.core.utils import StridedMemoryView as ours

    try:
        from cuda.core.utils import StridedMemoryView as theirs
    except ImportError:
        theirs = None
    floor = build_call_floor()
    print("| StridedMemoryView of | export floor ns (how) | cubind ns | cuda.core ns | cubind / cuda.core "
          "| cubind over floor ns | cuda.core over floor ns | ratio over floor |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, array in arrays():
        floors = export_floors(floor, array, None)
        sides = dict(floors, cubind=viewer(ours, array))
        if theirs is not None:
            sides["cuda.core"] = viewer(theirs, array)
        best = {name: float("inf") for name in sides}
        order = list(sides)
        for round_ in range(ROUNDS):
            shift = round_ % len(order)
            for name in order[shift:] + order[:shift]:
                best[name] = min(best[name], best_ns(sides[name]))
        how, least = min(((name, best[name]) for name in floors), key=lambda item: item[1])
        ours_ns = best["cubind"]
        theirs_ns = best.get("cuda.core", float("nan"))
        print(f"| {label} | {least:.0f} ({how}) | {ours_ns:.0f} | {theirs_ns:.0f} | {ours_ns / theirs_ns:.2f} "
              f"| {ours_ns - least:.0f} | {theirs_ns - least:.0f} | {(ours_ns - least) / (theirs_ns - least):.2f} |")
    print("goal: cubind / cuda.core <= 0.50, and the same over the floor")


if __name__ == "__main__":
    main()
