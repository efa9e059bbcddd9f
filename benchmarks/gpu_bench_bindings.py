"""cubind.bindings against cuda.bindings and a C floor, side by side in one run.

Per call: the time of the same driver call made from C (benchmarks/driver_floor.cpp,
entry points from libcuda.so.1), through cubind.bindings.driver and through
cuda.bindings.driver. Overhead = Python time - C time; the goal is cubind's
overhead <= 0.5 x cuda.bindings' on every simple call, a 16-argument
cuLaunchKernel within 1 us of C, and `import cubind.bindings.driver` <= 5 ms.

    python3 benchmarks/gpu_bench_bindings.py      (on a GPU machine)
"""
import ctypes
import os
import subprocess
import sys
import tempfile
import timeit

from cubind.bindings import driver as cb
from cubind.bindings import nvrtc

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = r"""
extern "C" __global__ void k0() {}
extern "C" __global__ void k4(int a, int b, int c, int d) {}
extern "C" __global__ void k16(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7,
                               int a8, int a9, int a10, int a11, int a12, int a13, int a14, int a15) {}
"""


def ok(result):
    status = result[0]
    if int(status) != 0:
        raise RuntimeError(f"call failed: {status!r}")
    return result[1] if len(result) == 2 else result[1:]


def compile_cubin(arch):
    prog = ok(nvrtc.nvrtcCreateProgram(KERNELS.encode(), b"k.cu", 0, [], []))
    opts = [f"-arch=sm_{arch}".encode()]
    status, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if int(status) != 0:
        raise RuntimeError(ok(nvrtc.nvrtcGetProgramLog(prog)).decode())
    return ok(nvrtc.nvrtcGetCUBIN(prog))


def per_call_ns(fn, number=200000):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e9


def import_ms(module):
    code = f"import time; t = time.perf_counter(); import {module}; print((time.perf_counter() - t) * 1e3)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(7)]
    return min(runs)


def main():
    have_cuda_bindings = True
    try:
        from cuda.bindings import driver as nd
    except ImportError:
        have_cuda_bindings = False

    ok(cb.cuInit(0))
    dev = ok(cb.cuDeviceGet(0))
    major = ok(cb.cuDeviceGetAttribute(cb.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    minor = ok(cb.cuDeviceGetAttribute(cb.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    ctx = ok(cb.cuDevicePrimaryCtxRetain(dev))
    ok(cb.cuCtxSetCurrent(ctx) + (None,))
    cubin = compile_cubin(f"{major}{minor}")
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        cubin_path = f.name

    # The C floor.
    floor = {}
    exe = os.path.join(tempfile.gettempdir(), "cubind_driver_floor")
    cuda_inc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
    subprocess.run(["g++", "-O2", "-std=c++17", "-I", cuda_inc, os.path.join(HERE, "driver_floor.cpp"),
                    "-o", exe, "-ldl"], check=True)
    out = subprocess.run([exe, cubin_path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        name, value = line.split()
        floor[name] = float(value)

    module = ok(cb.cuModuleLoadData(cubin))
    k = {n: ok(cb.cuModuleGetFunction(module, f"k{n}".encode())) for n in (0, 4, 16)}
    dptr = ok(cb.cuMemAlloc(1 << 20))
    stream = ok(cb.cuStreamCreate(1))
    event = ok(cb.cuEventCreate(2))
    attr = cb.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    memtype = cb.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE

    def calls(lib, fn, dev, dptr, stream, event, attr, memtype):
        return {
            "cuCtxGetCurrent": lambda: lib.cuCtxGetCurrent(),
            "cuDeviceGet": lambda: lib.cuDeviceGet(0),
            "cuDeviceGetAttribute": lambda: lib.cuDeviceGetAttribute(attr, dev),
            "cuPointerGetAttribute": lambda: lib.cuPointerGetAttribute(memtype, dptr),
            "cuEventRecord": lambda: lib.cuEventRecord(event, stream),
            "cuStreamQuery": lambda: lib.cuStreamQuery(stream),
        }

    def launches_ns(lib, fn, stream, nargs):
        # As the C floor: bursts of 256 launches, then a synchronize. The loop
        # is compiled once, so the Python-side cost is the call itself.
        params = None if nargs == 0 else (tuple(range(nargs)), (ctypes.c_int,) * nargs)
        env = {"launch": lib.cuLaunchKernel, "sync": lib.cuStreamSynchronize, "f": fn[nargs], "s": stream,
               "p": params, "r": range(256)}
        stmt = "for _ in r: launch(f, 1, 1, 1, 1, 1, 1, 0, s, p, 0)\nsync(s)"
        exec(compile(stmt, "<bench>", "exec"), env)
        best = min(timeit.repeat(stmt, globals=env, number=40, repeat=5))
        return best / (40 * 256) * 1e9

    results = {"cubind": {}, "cuda.bindings": {}}
    for name, call in calls(cb, k, dev, dptr, stream, event, attr, memtype).items():
        results["cubind"][name] = per_call_ns(call)
        cb.cuStreamSynchronize(stream)
    for n in (0, 4, 16):
        results["cubind"][f"cuLaunchKernel_{n}"] = launches_ns(cb, k, stream, n)
    if have_cuda_bindings:
        nfn = {n: nd.CUfunction(int(k[n])) for n in k}
        ncalls = calls(nd, nfn, nd.CUdevice(int(dev)), nd.CUdeviceptr(int(dptr)), nd.CUstream(int(stream)),
                       nd.CUevent(int(event)), nd.CUdevice_attribute(int(attr)), nd.CUpointer_attribute(int(memtype)))
        for name, call in ncalls.items():
            results["cuda.bindings"][name] = per_call_ns(call)
            nd.cuStreamSynchronize(nd.CUstream(int(stream)))
        for n in (0, 4, 16):
            results["cuda.bindings"][f"cuLaunchKernel_{n}"] = launches_ns(nd, nfn, nd.CUstream(int(stream)), n)

    print("| call | C ns | cubind ns | cuda.bindings ns | cubind overhead | cuda.bindings overhead | ratio (goal <= 0.5) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for name in results["cubind"]:
        c = floor[name]
        ours = results["cubind"][name]
        theirs = results["cuda.bindings"].get(name)
        o_ours = ours - c
        if theirs is not None:
            o_theirs = theirs - c
            ratio = o_ours / o_theirs if o_theirs > 0 else float("inf")
            worst = max(worst, ratio) if not name.startswith("cuLaunchKernel") else worst
            print(f"| {name} | {c:.0f} | {ours:.0f} | {theirs:.0f} | {o_ours:.0f} | {o_theirs:.0f} | {ratio:.2f} |")
        else:
            print(f"| {name} | {c:.0f} | {ours:.0f} | - | {o_ours:.0f} | - | - |")
    print()
    print("| import | cubind ms | cuda.bindings ms |")
    print("|---|---:|---:|")
    for mod in ("driver", "runtime", "nvrtc", "nvjitlink"):
        ours = import_ms(f"cubind.bindings.{mod}")
        theirs = import_ms(f"cuda.bindings.{mod}") if have_cuda_bindings else float("nan")
        print(f"| {mod} | {ours:.1f} | {theirs:.1f} |")
    print()
    l16 = results["cubind"]["cuLaunchKernel_16"] - floor["cuLaunchKernel_16"]
    print(f"16-argument cuLaunchKernel over C: {l16:.0f} ns (goal <= 1000)")
    print(f"worst simple-call overhead ratio cubind/cuda.bindings: {worst:.2f} (goal <= 0.5)")
    os.unlink(cubin_path)


if __name__ == "__main__":
    main()
