"""Create/destroy cycles leave nothing behind.

Each case of _leak_cycles.py runs in a child process: a warm-up, then the
measured cycles in four windows. The bytes malloc holds (C and C++ memory:
cubind's own objects, the CUDA libraries' handles) must not grow by more than
a few hundred bytes per cycle in every window, nor the objects the garbage
collector tracks and the bytes tracemalloc counts (Python memory) over all
cycles, and on a GPU neither the device memory in use (cuMemGetInfo). The
figures are printed (pytest -s) and recorded as test properties (--junitxml),
so that they can be quoted.

The heap is judged by its least growth over a window: a leak grows every
window by its share, while a cache that fills once grows one. The resident set
is printed for reference only: nvJitLink's links move it by megabytes either
way, enough to hide a leaked cubin per link.
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "_leak_cycles.py")

KiB = 1024
MiB = 1024 * KiB

# case: (cycles, warm-up)
CPU_CASES = {
    # An NVRTC compile with ptxas is the slow part of CI's cycles (tens of ms each).
    "bindings_nvrtc": (1000, 100),
    "core_program": (1000, 100),
    "bindings_nvjitlink": (2000, 200),
    "core_linker": (1000, 100),
    "core_object_code": (10000, 500),
    # nvJitLinkCreate makes a handle even for options it rejects; it is destroyed.
    "core_linker_rejected": (2000, 200),
    "bindings_nvjitlink_rejected": (2000, 200),
    "bindings_handles_structs": (100000, 1000),
}

# On an H100 these take well under a minute together.
GPU_CASES = {
    "gpu_stream": (100000, 1000),
    "gpu_event": (50000, 1000),
    "gpu_buffer_device": (100000, 1000),
    "gpu_buffer_device_own_pool": (100000, 1000),
    # cuMemHostAlloc / cuMemFreeHost pin and unpin pages each time: about 100 us a cycle.
    "gpu_buffer_pinned": (20000, 200),
    "gpu_buffer_legacy_pinned": (10000, 200),
    # cuLibraryLoadData, cuLibraryGetKernel and cuLibraryUnload each cycle.
    "gpu_object_code": (5000, 200),
}

# NVRTC keeps about 120 bytes per compiled program itself (through
# nvrtcCreateProgram and nvrtcDestroyProgram alone, in C). A leaked cubin is
# about 3 KiB, a leaked handle or cubind object some hundred bytes or more.
HEAP_BYTES_PER_CYCLE = 512

# Objects and Python bytes may move by a few (a cache entry, an interned name),
# never by one per cycle.
MAX_OBJECTS = 50
MAX_TRACED = 64 * KiB


def run_case(case, cycles, warmup, record_property):
    result = subprocess.run([sys.executable, SCRIPT, case, str(cycles), str(warmup)],
                            capture_output=True, text=True, cwd=HERE, timeout=900)
    lines = [line for line in result.stdout.splitlines() if line.startswith("# result ")]
    assert result.returncode == 0 and lines, (f"{case}: child exit {result.returncode}\n"
                                              f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    figures = json.loads(lines[-1][len("# result "):])
    cycles = figures["cycles"]
    per_cycle = {key: figures[key] / cycles for key in ("rss_bytes", "traced_bytes", "device_bytes")}
    per_cycle["heap_bytes"] = min(figures["heap_windows"]) / figures["cycles_per_window"]
    line = (f"leak {case}: {cycles} cycles after {warmup} warm-up: "
            f"heap {', '.join(f'{b:+d}' for b in figures['heap_windows'])} B a window "
            f"(least {per_cycle['heap_bytes']:+.2f} B/cycle), RSS {figures['rss_bytes']:+d} B, "
            f"gc objects {figures['objects']:+d}, "
            f"tracemalloc {figures['traced_bytes']:+d} B ({per_cycle['traced_bytes']:+.3f} B/cycle)")
    if case.startswith("gpu_"):
        line += f", device memory {figures['device_bytes']:+d} B ({per_cycle['device_bytes']:+.2f} B/cycle)"
    print("\n" + line)
    for key, value in figures.items():
        record_property(key, value)
    figures["heap_bytes_per_cycle"] = per_cycle["heap_bytes"]
    for key, value in per_cycle.items():
        record_property(key.replace("_bytes", "_bytes_per_cycle"), round(value, 3))
    return figures


def check(case, figures):
    assert figures["heap_bytes_per_cycle"] <= HEAP_BYTES_PER_CYCLE, (
        f"{case}: the heap grew by {figures['heap_windows']} bytes in windows of {figures['cycles_per_window']} "
        f"cycles, at least {figures['heap_bytes_per_cycle']:.1f} bytes a cycle (allowed {HEAP_BYTES_PER_CYCLE})")
    assert figures["objects"] <= MAX_OBJECTS, (
        f"{case}: {figures['objects']} more objects tracked by gc after {figures['cycles']} cycles")
    assert figures["traced_bytes"] <= MAX_TRACED, (
        f"{case}: tracemalloc counts {figures['traced_bytes']} more bytes after {figures['cycles']} cycles")


# Leaks found and not fixed yet, each with its reason; strict, so a fix shows up as XPASS.
KNOWN_LEAKS = {}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xfail(reason=KNOWN_LEAKS[c], strict=True))
                                  if c in KNOWN_LEAKS else c for c in sorted(CPU_CASES)])
def test_cycles_leave_no_growth(case, record_property):
    cycles, warmup = CPU_CASES[case]
    check(case, run_case(case, cycles, warmup, record_property))


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(GPU_CASES))
def test_gpu_cycles_leave_no_growth(case, record_property):
    cycles, warmup = GPU_CASES[case]
    figures = run_case(case, cycles, warmup, record_property)
    check(case, figures)
    # The driver reserves device memory in pages of 2 MiB; a leaked stream,
    # event or buffer per cycle would hold far more than one page over the run.
    assert figures["device_bytes"] <= 2 * MiB, (
        f"{case}: device memory in use grew by {figures['device_bytes']} bytes over {cycles} cycles")
