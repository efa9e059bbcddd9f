"""Instructions per call of cubind's Python layers beside their Python floors,
counted by callgrind against the stand-in driver of tests/python/fake_driver
(no GPU needed: every driver call returns at once, so what is counted is the
binding's own work, the interpreter's and the GIL's).

Each case runs N1 and N2 times in a child process under callgrind; the
difference of the two totals over N2 - N1 is the count per call, which
leaves out start-up and import. Floors (benchmarks/call_floor.pyx) make the
same Python call with the GIL released around the same stand-in entry point
and convert nothing. Counts are exact for one build and one interpreter;
they are the tool for finding where a call's time goes, not a timing.

    python3 benchmarks/instruction_counts.py        (needs valgrind and a C compiler)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpu_bench_bindings import build_call_floor  # noqa: E402

N1, N2 = 2000, 12000
FAKE_DRIVER = os.path.join(HERE, "..", "tests", "python", "fake_driver", "fake_libcuda.c")

CHILD = r'''
import ctypes, importlib.util, sys
case, n = sys.argv[1], int(sys.argv[2])
spec = importlib.util.spec_from_file_location("call_floor", sys.argv[3])
floor = importlib.util.module_from_spec(spec)
spec.loader.exec_module(floor)
fake = ctypes.CDLL("libcuda.so.1")
address = lambda name: ctypes.cast(getattr(fake, name), ctypes.c_void_p).value
from cubind.bindings import driver
import cubind.core as core
driver.cuInit(0)
dev = driver.cuDeviceGet(0)[1]
attr = driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
floor.set_simple_entry_points(address("cuCtxGetCurrent"), address("cuDeviceGet"), address("cuDeviceGetAttribute"),
                              int(attr), 0)
device = core.Device(0)
device.set_current()
stream = device.create_stream()
floor.set_entry_points(address("cuLaunchKernelEx"), address("cuMemAllocFromPoolAsync"), address("cuMemFreeAsync"),
                       int(device.memory_resource.handle))
code = core.ObjectCode.from_cubin(b"stand-in", name="standin")
kernels = {k: code.get_kernel("k" + "_".join(["4"] * k)) for k in (0, 4, 16)}
config = core.LaunchConfig(grid=1, block=1)
sh, kh = int(stream.handle), {k: int(kernels[k].handle) for k in kernels}

def allocate_close():
    device.allocate(4096, stream=stream).close()

def floor_allocate_close():
    floor.allocate(4096, stream=sh).close()

cases = {
    "cuCtxGetCurrent": (driver.cuCtxGetCurrent, ()),
    "floor cuCtxGetCurrent": (floor.cuCtxGetCurrent, ()),
    "cuDeviceGet": (driver.cuDeviceGet, (0,)),
    "floor cuDeviceGet": (floor.cuDeviceGet, (0,)),
    "cuDeviceGetAttribute": (driver.cuDeviceGetAttribute, (attr, dev)),
    "floor cuDeviceGetAttribute": (floor.cuDeviceGetAttribute, (attr, dev)),
    "allocate + close": (allocate_close, ()),
    "floor allocate + close": (floor_allocate_close, ()),
}
for k in (0, 4, 16):
    cases[f"launch, {k} args"] = (core.launch, (stream, config, kernels[k]) + tuple(range(k)))
    cases[f"floor launch, {k} args"] = (floor.launch, (sh, None, kh[k]) + tuple(range(k)))
f, args = cases[case]
for _ in range(100):
    f(*args)
names = [f"a{i}" for i in range(len(args))]
source = f"def run(f, r, {', '.join(names)}):\n    for _ in r:\n        f({', '.join(names)})\n"
env = {}
exec(compile(source, "<run>", "exec"), env)
env["run"](f, range(n), *args)
'''

CASES = ["cuCtxGetCurrent", "cuDeviceGet", "cuDeviceGetAttribute", "launch, 0 args", "launch, 4 args",
         "launch, 16 args", "allocate + close"]


def main():
    if shutil.which("valgrind") is None:
        sys.exit("instruction_counts: valgrind is not installed (apt-get install valgrind)")
    work = tempfile.mkdtemp(prefix="cubind_instructions_")
    cc = shutil.which(os.environ.get("CC", "cc")) or "gcc"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", os.path.join(work, "libcuda.so.1"), FAKE_DRIVER,
                    "-lpthread"], check=True)
    floor_so = build_call_floor().__file__
    child = os.path.join(work, "child.py")
    with open(child, "w") as f:
        f.write(CHILD)
    env = dict(os.environ, LD_LIBRARY_PATH=work + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""),
               PYTHONHASHSEED="0")
    python = os.path.realpath(sys.executable)

    def total(case, n):
        out = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/cg.out", python, child,
                              case, str(n), floor_so], env=env, capture_output=True, text=True)
        found = re.search(r"Collected : (\d+)", out.stderr)
        if out.returncode != 0 or found is None:
            sys.exit(f"instruction_counts: {case} failed:\n{out.stderr[-2000:]}")
        return int(found.group(1))

    def per_call(case):
        return (total(case, N2) - total(case, N1)) / (N2 - N1)

    print("| call | cubind instructions | floor instructions | cubind - floor |")
    print("|---|---:|---:|---:|")
    for case in CASES:
        ours, floor = per_call(case), per_call("floor " + case)
        print(f"| {case} | {ours:.0f} | {floor:.0f} | {ours - floor:.0f} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
