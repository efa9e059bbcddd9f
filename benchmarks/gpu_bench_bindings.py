"""cubind.bindings against cuda.bindings and a C floor, side by side in one run.

Per call: the time of the same driver call made from C (benchmarks/driver_floor.cpp,
entry points from libcuda.so.1, loaded into this process), through
cubind.bindings.driver and through cuda.bindings.driver, all on the same
context, stream, event and kernels. Overhead = Python time - C time; the goal
is cubind's overhead <= 0.5 x cuda.bindings' on every simple call, a
16-argument cuLaunchKernel within 1 us of C, and `import cubind.bindings.driver`
<= 5 ms. Simple calls are timed directly in a compiled loop, best of rounds.
Launches are timed in bursts from an idle stream (the synchronization outside
the timing), C and both bindings in the same rounds in rotating order, and the
overhead is the median over rounds of each burst's time less C's. Beside them,
the Python floor (benchmarks/call_floor.pyx): the least any binding that
releases the GIL can spend on a call of that shape.

    python3 benchmarks/gpu_bench_bindings.py      (on a GPU machine)
"""
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit

from cubind.bindings import driver as cb
from cubind.bindings import nvrtc

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHES_PER_BURST = 256
LAUNCH_ROUNDS = 300
LAUNCH_WARMUP_ROUNDS = 10
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


def per_call_ns(fn, args, number=2000):
    """Best of 7 runs of `number` x 100 direct calls fn(*args), in ns per call."""
    names = [f"a{i}" for i in range(len(args))]
    env = dict(zip(names, args), f=fn, r=range(100))
    stmt = f"for _ in r: f({', '.join(names)})"
    exec(compile(stmt, "<bench>", "exec"), env)
    return min(timeit.repeat(stmt, globals=env, number=number, repeat=7)) / (number * 100) * 1e9


def build_call_floor():
    """benchmarks/call_floor.pyx, compiled into a temporary directory and imported."""
    import importlib.util
    import sysconfig
    out = tempfile.mkdtemp(prefix="cubind_floor_")
    c_file = os.path.join(out, "call_floor.c")
    subprocess.run([sys.executable, "-m", "cython", "-3", os.path.join(HERE, "call_floor.pyx"), "-o", c_file],
                   check=True)
    so = os.path.join(out, "call_floor" + sysconfig.get_config_var("EXT_SUFFIX"))
    cuda_inc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-I", sysconfig.get_paths()["include"], "-I", cuda_inc, c_file,
                    "-o", so], check=True)
    spec = importlib.util.spec_from_file_location("call_floor", so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_cpp_floor(name):
    """benchmarks/<name>.cpp compiled as a shared library and loaded into this process."""
    out = tempfile.mkdtemp(prefix=f"cubind_{name}_")
    so = os.path.join(out, f"libcubind_{name}.so")
    cuda_inc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
    subprocess.run(["g++", "-O2", "-std=c++17", "-shared", "-fPIC", "-I", cuda_inc,
                    os.path.join(HERE, f"{name}.cpp"), "-o", so, "-ldl"], check=True)
    return ctypes.CDLL(so)


def build_c_floor():
    """benchmarks/driver_floor.cpp as a shared library, loaded into this process."""
    lib = load_cpp_floor("driver_floor")
    lib.floor_open.restype = ctypes.c_char_p
    lib.floor_call_ns.restype = ctypes.c_double
    lib.floor_call_ns.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_int, ctypes.c_int, ctypes.c_uint64,
                                  ctypes.c_uint64, ctypes.c_uint64]
    lib.floor_symbol.restype = ctypes.c_void_p
    lib.floor_symbol.argtypes = [ctypes.c_char_p]
    lib.floor_launch_ns.restype = ctypes.c_double
    lib.floor_launch_ns.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    missing = lib.floor_open()
    if missing is not None:
        raise RuntimeError(f"driver floor: libcuda.so.1 lacks {missing.decode()}")
    return lib


def checked(ns, what):
    if ns < 0:
        raise RuntimeError(f"driver floor: {what} failed")
    return ns


_BURST = """
def burst(launch, f, s, p, r, clock):
    start = clock()
    for _ in r:
        launch(f, 1, 1, 1, 1, 1, 1, 0, s, p, 0)
    return clock() - start
"""


def python_burst(lib, function, stream, nargs, count):
    """A function timing `count` launches through `lib`'s cuLaunchKernel from an
    idle stream, in ns per launch; its loop is compiled once, with everything
    in locals, so the Python-side cost is the call itself."""
    env = {}
    exec(compile(_BURST, "<burst>", "exec"), env)
    burst = env["burst"]
    params = None if nargs == 0 else (tuple(range(nargs)), (ctypes.c_int,) * nargs)
    result = lib.cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, params, 0)
    if int(result[0]) != 0:
        raise RuntimeError(f"cuLaunchKernel through {lib.__name__}: {result[0]!r}")
    sync = lib.cuStreamSynchronize
    r = range(count)

    def timed():
        ok(sync(stream))
        ns = burst(lib.cuLaunchKernel, function, stream, params, r, time.perf_counter_ns)
        ok(sync(stream))
        return ns / count
    return timed


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

    c_floor = build_c_floor()
    module = ok(cb.cuModuleLoadData(cubin))
    k = {n: ok(cb.cuModuleGetFunction(module, f"k{n}".encode())) for n in (0, 4, 16)}
    dptr = ok(cb.cuMemAlloc(1 << 20))
    stream = ok(cb.cuStreamCreate(1))
    event = ok(cb.cuEventCreate(2))
    attr = cb.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    memtype = cb.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE

    # Each simple call as (function, arguments): timed as a direct call in a
    # compiled loop, so no lambda or attribute lookup is counted.
    def calls(lib, dev, dptr, stream, event, attr, memtype):
        return {
            "cuCtxGetCurrent": (lib.cuCtxGetCurrent, ()),
            "cuDeviceGet": (lib.cuDeviceGet, (0,)),
            "cuDeviceGetAttribute": (lib.cuDeviceGetAttribute, (attr, dev)),
            "cuPointerGetAttribute": (lib.cuPointerGetAttribute, (memtype, dptr)),
            "cuEventRecord": (lib.cuEventRecord, (event, stream)),
            "cuStreamQuery": (lib.cuStreamQuery, (stream,)),
        }

    floor_mod = build_call_floor()
    floor_mod.set_simple_entry_points(*(c_floor.floor_symbol(n) for n in
                                        (b"cuCtxGetCurrent", b"cuDeviceGet", b"cuDeviceGetAttribute")),
                                      int(attr), int(dev))
    floors = {
        "cuCtxGetCurrent": (floor_mod.ret2_0_nogil, ()),
        "cuDeviceGet": (floor_mod.ret2_1_nogil, (0,)),
        "cuDeviceGetAttribute": (floor_mod.ret2_2_nogil, (attr, dev)),
        "cuPointerGetAttribute": (floor_mod.ret2_2_nogil, (memtype, dptr)),
        "cuEventRecord": (floor_mod.ret1_2_nogil, (event, stream)),
        "cuStreamQuery": (floor_mod.ret1_1_nogil, (stream,)),
    }

    # The simple calls in rounds: per call, its floor, cubind and cuda.bindings
    # back to back, three rounds, the best of each kept, so a change of the
    # machine's clock during the run does not fall on one side.
    # The same floors with the driver's function inside (call_floor.pyx).
    driver_floors = {name: (getattr(floor_mod, name), args) for name, (_, args) in floors.items()
                     if hasattr(floor_mod, name)}
    results = {"C": {}, "cubind": {}, "cuda.bindings": {}, "python floor": {}, "floor with driver": {}}
    sides = {"python floor": floors, "floor with driver": driver_floors,
             "cubind": calls(cb, dev, dptr, stream, event, attr, memtype)}
    if have_cuda_bindings:
        nfn = {n: nd.CUfunction(int(k[n])) for n in k}
        sides["cuda.bindings"] = calls(nd, nd.CUdevice(int(dev)), nd.CUdeviceptr(int(dptr)), nd.CUstream(int(stream)),
                                       nd.CUevent(int(event)), nd.CUdevice_attribute(int(attr)),
                                       nd.CUpointer_attribute(int(memtype)))
    gil_held_floor = float("inf")
    for _ in range(3):
        gil_held_floor = min(gil_held_floor, per_call_ns(floor_mod.ret2_0, ()))
        for name in floors:
            t = checked(c_floor.floor_call_ns(name.encode(), 200000, 3, int(dev), int(dptr), int(stream), int(event)),
                        name)
            results["C"][name] = min(results["C"].get(name, float("inf")), t)
            for side, table in sides.items():
                if name not in table:
                    continue
                fn, args = table[name]
                t = per_call_ns(fn, args, number=700)
                results[side][name] = min(results[side].get(name, float("inf")), t)
                cb.cuStreamSynchronize(stream)

    # Launches: per round, a burst from C and from each binding, in rotating
    # order. Per side, the median burst time, and the median over rounds of
    # (burst - C's burst of the same round) as its overhead.
    launch_overhead = {"cubind": {}, "cuda.bindings": {}}
    for n in (0, 4, 16):
        name = f"cuLaunchKernel_{n}"
        bursts = {
            "C": lambda n=n: checked(c_floor.floor_launch_ns(int(k[n]), int(stream), n, LAUNCHES_PER_BURST, 0), name),
            "cubind": python_burst(cb, k[n], stream, n, LAUNCHES_PER_BURST),
        }
        if have_cuda_bindings:
            bursts["cuda.bindings"] = python_burst(nd, nfn[n], nd.CUstream(int(stream)), n, LAUNCHES_PER_BURST)
        order = list(bursts)
        times = {side: [] for side in order}
        for round_ in range(-LAUNCH_WARMUP_ROUNDS, LAUNCH_ROUNDS):
            shift = round_ % len(order)
            this_round = {side: bursts[side]() for side in order[shift:] + order[:shift]}
            if round_ >= 0:
                for side, ns in this_round.items():
                    times[side].append(ns)
        for side, values in times.items():
            results[side][name] = statistics.median(values)
            if side != "C":
                launch_overhead[side][name] = statistics.median(v - c for v, c in zip(values, times["C"]))

    # The Python floor: a call of the same arity that releases the GIL around
    # an empty C function and returns a tuple of prepared objects. No binding
    # that releases the GIL can have less overhead, so floor / cuda.bindings'
    # overhead is the best ratio reachable.
    print("| call | C ns | cubind ns | cuda.bindings ns | cubind overhead | cuda.bindings overhead "
          "| ratio (goal <= 0.5) | Python floor ns | best reachable ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for name in results["cubind"]:
        c = results["C"][name]
        ours = results["cubind"][name]
        theirs = results["cuda.bindings"].get(name)
        py_floor = results["python floor"].get(name)
        o_ours = launch_overhead["cubind"].get(name, ours - c)
        floor_text = f"{py_floor:.0f}" if py_floor is not None else "-"
        if theirs is not None:
            o_theirs = launch_overhead["cuda.bindings"].get(name, theirs - c)
            ratio = o_ours / o_theirs if o_theirs > 0 else float("inf")
            best = f"{py_floor / o_theirs:.2f}" if py_floor is not None and o_theirs > 0 else "-"
            worst = max(worst, ratio) if not name.startswith("cuLaunchKernel") else worst
            print(f"| {name} | {c:.0f} | {ours:.0f} | {theirs:.0f} | {o_ours:.0f} | {o_theirs:.0f} | {ratio:.2f} "
                  f"| {floor_text} | {best} |")
        else:
            print(f"| {name} | {c:.0f} | {ours:.0f} | - | {o_ours:.0f} | - | - | {floor_text} | - |")
    print()
    # The simple-call goal: cubind within 15 ns of the floor of a call that
    # releases the GIL, by both readings of the floor.
    print("| simple call | cubind ns | cubind overhead over C - Python floor ns | cubind - floor with the driver "
          "call ns | goal |")
    print("|---|---:|---:|---:|---|")
    for name in driver_floors:
        ours = results["cubind"][name]
        print(f"| {name} | {ours:.0f} | {ours - results['C'][name] - results['python floor'][name]:.0f} "
              f"| {ours - results['floor with driver'][name]:.0f} | <= 15 |")
    print()
    print(f"Python floor of a no-argument call returning a 2-tuple: {gil_held_floor:.0f} ns with the GIL held, "
          f"{results['python floor']['cuCtxGetCurrent']:.0f} ns releasing it")
    print()
    print("| import | cubind ms | cuda.bindings ms |")
    print("|---|---:|---:|")
    for mod in ("driver", "runtime", "nvrtc", "nvjitlink"):
        ours = import_ms(f"cubind.bindings.{mod}")
        theirs = import_ms(f"cuda.bindings.{mod}") if have_cuda_bindings else float("nan")
        print(f"| {mod} | {ours:.1f} | {theirs:.1f} |")
    print()
    l16 = launch_overhead["cubind"]["cuLaunchKernel_16"]
    print(f"Launches: {LAUNCH_ROUNDS} rounds of a burst of {LAUNCHES_PER_BURST} from C and from each binding; "
          "overhead = median over rounds of (burst - C's burst), per launch.")
    print(f"16-argument cuLaunchKernel over C: {l16:.0f} ns (goal <= 1000)")
    print(f"worst simple-call overhead ratio cubind/cuda.bindings: {worst:.2f} (goal <= 0.5)")


if __name__ == "__main__":
    main()
