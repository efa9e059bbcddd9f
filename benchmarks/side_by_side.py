"""cubind against NVIDIA's packages, side by side in one process: launches with
every argument kind, object life cycles, cubind.bindings' simple calls and
launches, and imports, each row with its goal (benchmarks/README.md) and
whether it is met.

Per row, each side is one statement (what a user writes), compiled into a
loop of its own with everything in locals, and timed in batches: the sides
of a row in rotating order, ROUNDS rounds (LAUNCH_ROUNDS for the launch
rows, whose driver time varies most from batch to batch), the rows of a
group (launches, objects, bindings) taking turns of LAUNCH_TURN or TURN
rounds until each has its rounds, best batch per side (launch batches
start from an idle stream, synchronized outside the timing), the process
held on one CPU. What a side adds over another (a launch over its Python floor, a simple call over its floor, a
cubind.bindings launch over the C floor) is the median of the two sides'
differences round by round: the sides of a round run back to back, so a
round slow for the GPU or the CPU is slow for both. The
sides: cubind; NVIDIA's cuda.core 1.2 / cuda.bindings; CuPy where it has the
operation; the Python floor (benchmarks/call_floor.pyx: a Python call of the
same shape that releases the GIL around the same driver calls and converts
nothing), for launches the converting floor (the same, with each
argument's value read the cheapest way for its kind), for allocate + close
the holding floor (the same, on a resource object, returning an object that
holds its resource and stream as a Buffer must); the C floor
(benchmarks/driver_floor.cpp: the same driver calls from C, loaded into this
process). A package that is not installed is a
column that says so; a side that fails says how, and the run goes on.

    python3 benchmarks/side_by_side.py [--rounds N] [--only TEXT] [--json FILE]

Without a GPU, `--standin` runs every row once against the stand-in driver
(tests/python/fake_driver, LD_LIBRARY_PATH set by the caller) to check the
rows themselves; benchmarks/instruction_counts.py counts the cubind and
floor sides of the same rows under callgrind there.
"""
import argparse
import ctypes
import json
import os
import random
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA_INCLUDE = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
ROUNDS = 15
# Eight times the others: a launch row's goal is 60 ns over its floor, and its
# batches vary by 30% from round to round. At 135 rounds the 95% intervals
# spanned 50 ns (the median row), at 360 rounds 30 (benchmarks/README.md, runs A to C).
LAUNCH_ROUNDS = 120
# The rows of a group take turns of this many rounds (measure_rows): at
# `--rounds 45` the launch rows go over eight times, the others three.
LAUNCH_TURN = 45
TURN = 15
LAUNCH_BATCH = 256          # launches per batch, from an idle stream
BATCH_SECONDS = 0.002       # other rows: as many calls as take about this long
ALLOC_BYTES = 4096

# ---------------------------------------------------------------- argument kinds
# name -> (C type of the kernel parameter, its size, how a value is made).
# The kernels are empty, so only a parameter's size and alignment matter.


class Pair(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _np(name):
    return lambda w, i: getattr(w.np, name)(i % 100)


def _ct(name):
    return lambda w, i: getattr(ctypes, name)(i % 100)


def _np_struct(w, i):
    np = w.np
    dtype = np.dtype([("a", "<i4"), ("b", "<f8")], align=True)
    return np.array([(i, 0.5)], dtype=dtype)[0]


KINDS = {
    "int": ("int", 4, lambda w, i: i),
    "float": ("double", 8, lambda w, i: i + 0.5),
    "pointer as int": ("void*", 8, lambda w, i: w.address),
    "Buffer": ("void*", 8, lambda w, i: w.buffer),
    "np.bool_": ("bool", 1, lambda w, i: w.np.bool_(i % 2)),
    "np.int8": ("signed char", 1, _np("int8")),
    "np.uint8": ("unsigned char", 1, _np("uint8")),
    "np.int16": ("short", 2, _np("int16")),
    "np.uint16": ("unsigned short", 2, _np("uint16")),
    "np.int32": ("int", 4, _np("int32")),
    "np.uint32": ("unsigned int", 4, _np("uint32")),
    "np.int64": ("long long", 8, _np("int64")),
    "np.uint64": ("unsigned long long", 8, _np("uint64")),
    "np.float16": ("unsigned short", 2, _np("float16")),
    "np.float32": ("float", 4, _np("float32")),
    "np.float64": ("double", 8, _np("float64")),
    "np.complex64": ("float2", 8, _np("complex64")),
    "np.complex128": ("double2", 16, _np("complex128")),
    "np struct": ("Pair", 16, _np_struct),
    "c_bool": ("bool", 1, lambda w, i: ctypes.c_bool(i % 2)),
    "c_int8": ("signed char", 1, _ct("c_int8")),
    "c_uint8": ("unsigned char", 1, _ct("c_uint8")),
    "c_int16": ("short", 2, _ct("c_int16")),
    "c_uint16": ("unsigned short", 2, _ct("c_uint16")),
    "c_int32": ("int", 4, _ct("c_int32")),
    "c_uint32": ("unsigned int", 4, _ct("c_uint32")),
    "c_int64": ("long long", 8, _ct("c_int64")),
    "c_uint64": ("unsigned long long", 8, _ct("c_uint64")),
    "c_float": ("float", 4, _ct("c_float")),
    "c_double": ("double", 8, _ct("c_double")),
    "c_void_p": ("void*", 8, lambda w, i: ctypes.c_void_p(w.address)),
    "ctypes Structure": ("Pair", 16, lambda w, i: Pair(i, 0.5)),
}
# How call_floor.launch_converting reads each kind: an int, a float, a NumPy
# numeric scalar's value of 1 to 16 bytes, a buffer export, or for free.
CONVERSIONS = {kind: ord({"int": "i", "pointer as int": "i", "float": "f", "Buffer": "-", "np struct": "b"}.get(
    kind, "b" if kind.startswith("c_") or kind == "ctypes Structure" else
    {1: "1", 2: "2", 4: "4", 8: "8", 16: "g"}[size])) for kind, (_, size, _) in KINDS.items()}
# A mix of the argument kinds of cuda.core's examples (Buffers, NumPy scalars,
# Python numbers), cycled to the count.
MIXED = ["Buffer", "np.int32", "np.float32", "Buffer", "np.float64", "np.int64", "int", "float"]
KERNEL_PRELUDE = "struct Pair { int a; double b; };\n"


def launch_shapes():
    """(row label, kinds of its arguments) of every launch row."""
    shapes = [("0 arguments", ())]
    for kind in KINDS:
        counts = (1, 4, 16, 64) if kind in ("int", "np.int32") else (1, 16)
        for n in counts:
            shapes.append((f"{n} x {kind}", (kind,) * n))
    for n in (4, 16, 64):
        shapes.append((f"{n} mixed (Buffer, NumPy, int, float)", tuple(MIXED[i % len(MIXED)] for i in range(n))))
    return shapes


# ---------------------------------------------------------------- building the floors


def _compile_pyx(name):
    out = tempfile.mkdtemp(prefix=f"cubind_{name}_")
    c_file = os.path.join(out, f"{name}.c")
    subprocess.run([sys.executable, "-m", "cython", "-3", os.path.join(HERE, f"{name}.pyx"), "-o", c_file],
                   check=True)
    so = os.path.join(out, name + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run([os.environ.get("CC", "gcc"), "-O2", "-shared", "-fPIC", "-I", sysconfig.get_paths()["include"],
                    "-I", CUDA_INCLUDE, c_file, "-o", so], check=True)
    return so


def build_call_floor(so=None):
    """benchmarks/call_floor.pyx, compiled (unless `so` is given) and imported."""
    import importlib.util
    so = so or _compile_pyx("call_floor")
    spec = importlib.util.spec_from_file_location("call_floor", so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_c_floor():
    """benchmarks/driver_floor.cpp as a shared library loaded into this
    process, or the reason it cannot be."""
    out = tempfile.mkdtemp(prefix="cubind_driver_floor_")
    so = os.path.join(out, "libcubind_driver_floor.so")
    subprocess.run(["g++", "-O2", "-std=c++17", "-shared", "-fPIC", "-I", CUDA_INCLUDE,
                    os.path.join(HERE, "driver_floor.cpp"), "-o", so, "-ldl"], check=True)
    lib = ctypes.CDLL(so)
    lib.floor_open.restype = ctypes.c_char_p
    lib.floor_call_ns.restype = ctypes.c_double
    lib.floor_call_ns.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_int, ctypes.c_int, ctypes.c_uint64,
                                  ctypes.c_uint64, ctypes.c_uint64]
    lib.floor_symbol.restype = ctypes.c_void_p
    lib.floor_symbol.argtypes = [ctypes.c_char_p]
    lib.floor_launch_ns.restype = ctypes.c_double
    lib.floor_launch_ns.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.floor_compile_ns.restype = ctypes.c_double
    lib.floor_compile_ns.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                     ctypes.c_long]
    lib.floor_op_ns.restype = ctypes.c_double
    lib.floor_op_ns.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                                ctypes.c_size_t]
    missing = lib.floor_open()
    if missing is not None:
        return f"libcuda.so.1 lacks {missing.decode()}"
    return lib


def driver_address(name):
    """The address of a driver entry point of the libcuda.so.1 this process
    loaded (its _v2 where the header renames it), or 0."""
    lib = ctypes.CDLL("libcuda.so.1")
    for candidate in (name + "_v2", name):
        try:
            return ctypes.cast(getattr(lib, candidate), ctypes.c_void_p).value
        except AttributeError:
            continue
    return 0


# ---------------------------------------------------------------- the world


class Missing(Exception):
    """A side that cannot run here: the package is not installed, or it has
    no such operation; the text says which."""


class _NoFloor:
    """In place of call_floor when it cannot be built: every use is Missing."""

    def __init__(self, why):
        self.why = why

    def __getattr__(self, name):
        raise Missing(self.why)


class World:
    """Everything the rows use, made once: cubind.core's device, stream,
    buffer and kernels, NVIDIA's and CuPy's counterparts where installed,
    the floors. `standin`: against the stand-in driver (no NVRTC, kernels
    named by their parameter sizes, no NVIDIA or CuPy side)."""

    def __init__(self, standin, call_floor_so=None, with_c_floor=True):
        import cubind.core as cc
        from cubind.bindings import driver as cbd

        self.standin = standin
        self.np = _numpy()
        self.cc, self.cbd = cc, cbd
        self.device = cc.Device(0)
        self.device.set_current()
        self.stream = self.device.create_stream()
        self.buffer = self.device.allocate(1 << 16, stream=self.stream)
        self.address = int(self.buffer.handle)
        self.shapes = launch_shapes()
        self.signatures = {}
        for _, kinds in self.shapes:
            self.signatures.setdefault(tuple(KINDS[k][0] for k in kinds), f"k_{len(self.signatures)}")
        if standin:
            self.cubin = b"stand-in cubin"
        else:
            self.cubin = self._compile()
        self.code = cc.ObjectCode.from_cubin(self.cubin, name="side_by_side")
        self.attr = cbd.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        self.context = int(cbd.cuCtxGetCurrent()[1])
        self.floor = self._floor(call_floor_so)
        if standin or not with_c_floor:
            self.c_floor = "not run on the stand-in driver"
        else:
            try:
                self.c_floor = build_c_floor()
            except Exception as e:  # a missing compiler: the column says so
                self.c_floor = f"not built: {type(e).__name__}: {e}"[:120]
        self._kernels = {}
        self.nvidia = self._nvidia()
        self.cupy = self._cupy()

    def _floor(self, so):
        """call_floor with its entry points set, or a stand-in whose every
        use says why there is none."""
        try:
            floor = build_call_floor(so)
        except Exception as e:
            return _NoFloor(f"not built: {type(e).__name__}: {e}"[:120])
        floor.set_entry_points(driver_address("cuLaunchKernelEx"), driver_address("cuMemAllocFromPoolAsync"),
                               driver_address("cuMemFreeAsync"), int(self.device.memory_resource.handle),
                               driver_address("cuStreamIsCapturing"))
        floor.set_simple_entry_points(driver_address("cuCtxGetCurrent"), driver_address("cuDeviceGet"),
                                      driver_address("cuDeviceGetAttribute"), int(self.attr), 0)
        floor.set_life_cycle_entry_points(
            driver_address("cuCtxSetCurrent"), self.context, driver_address("cuStreamCreateWithPriority"),
            driver_address("cuStreamDestroy"), driver_address("cuEventCreate"), driver_address("cuEventDestroy"),
            driver_address("cuEventRecord"), driver_address("cuLaunchKernel"))
        self.floor_event = int(self.cbd.cuEventCreate(2)[1])  # CU_EVENT_DISABLE_TIMING
        floor.set_handle_entry_points(
            driver_address("cuStreamQuery"), driver_address("cuEventRecord"), driver_address("cuPointerGetAttribute"),
            int(self.stream.handle), self.floor_event, self.address,
            int(self.cbd.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE))
        return floor

    def _compile(self):
        cc = self.cc
        source = KERNEL_PRELUDE + "".join(
            f'extern "C" __global__ void {name}('
            + ", ".join(f"{t} a{i}" for i, t in enumerate(signature)) + ") {}\n"
            for signature, name in self.signatures.items())
        options = cc.ProgramOptions(arch=f"sm_{self.device.arch}")
        return cc.Program(source, "c++", options).compile("cubin").code

    def kernel_name(self, kinds):
        if self.standin:
            return "k" + "_".join(str(KINDS[k][1]) for k in kinds)
        return self.signatures[tuple(KINDS[k][0] for k in kinds)]

    def kernel(self, kinds):
        name = self.kernel_name(kinds)
        if name not in self._kernels:
            self._kernels[name] = self.code.get_kernel(name)
        return self._kernels[name]

    def _nvidia(self):
        """cuda.core's and cuda.bindings' objects over the same device,
        stream and cubin, or the reason there are none."""
        if self.standin:
            return "not run on the stand-in driver"
        out = {}
        try:
            from cuda.bindings import driver as nd
        except ImportError:
            out["bindings"] = "cuda.bindings not installed"
        except Exception as e:
            out["bindings"] = f"cuda.bindings failed to import: {type(e).__name__}: {e}"[:120]
        else:
            out["bindings"] = nd
        try:
            import cuda.core as ncc
        except ImportError:
            out["core"] = "cuda.core not installed"
        except Exception as e:
            out["core"] = f"cuda.core failed to import: {type(e).__name__}: {e}"[:120]
        else:
            try:
                out["device"] = ncc.Device(0)
                out["device"].set_current()
                out["stream"] = ncc.Stream.from_handle(int(self.stream.handle))
                out["code"] = ncc.ObjectCode.from_cubin(self.cubin)
                out["buffer"] = out["device"].allocate(1 << 16, stream=out["stream"])
                out["kernels"] = {}
                out["core"] = ncc
            except Exception as e:
                out["core"] = f"cuda.core failed to set up: {type(e).__name__}: {e}"[:120]
            self.device.set_current()
        return out

    def _cupy(self):
        if self.standin:
            return "not run on the stand-in driver"
        try:
            import cupy
            cupy.cuda.Device(0).use()
        except ImportError:
            return "CuPy not installed"
        except Exception as e:
            return f"CuPy failed to set up: {type(e).__name__}: {e}"[:120]
        return cupy

    def close(self):
        """Frees NVIDIA's buffer while cubind's stream, which it was allocated
        on (Stream.from_handle), still lives, then cubind's: left to the
        interpreter's teardown, cuda.core's Buffer may free into a stream
        destroyed before it, and the driver crashes the process at exit."""
        if isinstance(self.nvidia, dict) and not isinstance(self.nvidia.get("buffer", ""), str):
            self.nvidia["buffer"].close()
            self.nvidia["stream"].sync()
            self.nvidia.pop("buffer")
        self.buffer.close()
        self.stream.sync()

    def nvidia_part(self, key):
        if isinstance(self.nvidia, str):
            raise Missing(self.nvidia)
        value = self.nvidia.get(key)
        if isinstance(value, str):
            raise Missing(value)
        return value

    def nvidia_kernel(self, kinds):
        ncc = self.nvidia_part("core")
        name = self.kernel_name(kinds)
        kernels = self.nvidia["kernels"]
        if name not in kernels:
            kernels[name] = self.nvidia["code"].get_kernel(name)
        return ncc, kernels[name]

    def value(self, kind, i, nvidia=False):
        """Argument i of `kind`; for cuda.core a Buffer is its own Buffer."""
        if kind == "Buffer" and nvidia:
            return self.nvidia_part("buffer")
        if self.np is None and (kind.startswith("np.") or kind == "np struct"):
            raise Missing("NumPy not installed")
        return KINDS[kind][2](self, i)


# ---------------------------------------------------------------- rows


class Side:
    """A statement and its names; `sync` runs outside the timing after each
    batch; `batch` fixes the calls per batch."""

    def __init__(self, stmt, names, sync=None, batch=None):
        self.stmt, self.names, self.sync, self.batch = stmt, names, sync, batch


class CSide:
    """A C floor: `run(count)` gives ns per operation."""

    def __init__(self, run, batch):
        self.run, self.batch = run, batch


class Row:
    """name; group; goal text; `judge(times)` -> True/False/None (None when a
    side it needs is missing); sides: name -> function(world) giving a Side
    or CSide, or raising Missing."""

    def __init__(self, group, name, goal, judge, sides):
        self.group, self.name, self.goal, self.judge, self.sides = group, name, goal, judge, sides


NVIDIA = {"core": "cuda.core", "bindings": "cuda.bindings"}


def _need(times, *sides):
    return all(s in times for s in sides)


# A goal is a list of parts; each part compares one value of a row with a
# bound, both read from the row's times. Where a part is not met, the floors
# measured in the same run say whether it could be: a floor is the least any
# binding can take, so a floor above the bound means no binding meets it.
FLOORS = ("Python floor", "converting floor", "holding floor", "C floor")


class Times(dict):
    """{side: best ns per call} of a row, and in `rounds` {side: [ns per
    call in each round]}, the rounds in the order they were timed."""

    def __init__(self, best=(), rounds=None):
        super().__init__(best)
        self.rounds = rounds or {}


def over(t, side, reference):
    """What `side` takes over `reference`, in ns: the median over the rounds
    of the two sides' difference in the same round, where both have rounds
    (the sides of a round run back to back, so a slow round, on the GPU or
    the CPU, is slow on both and cancels); else the difference of their best
    times."""
    rounds = getattr(t, "rounds", {})
    a, b = rounds.get(side), rounds.get(reference)
    if a and b and len(a) == len(b):
        return statistics.median(x - y for x, y in zip(a, b))
    return t[side] - t[reference]


def over_interval(t, side, reference, resamples=200):
    """A 95% interval of over(t, side, reference) (None without rounds): the
    median of the rounds' differences, resampled with replacement (a
    bootstrap, seeded so that a table is the same from the same times)."""
    rounds = getattr(t, "rounds", {})
    a, b = rounds.get(side), rounds.get(reference)
    if not a or not b or len(a) != len(b) or len(a) < 5:
        return None
    differences = [x - y for x, y in zip(a, b)]
    pick = random.Random(0).choices
    medians = sorted(statistics.median(pick(differences, k=len(differences))) for _ in range(resamples))
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


class Part:
    def __init__(self, text, value, bound, floors=FLOORS, needs=()):
        # value(t), bound(t): ns; floors: the sides whose times bound `value` from below.
        self.text, self.value, self.bound, self.floors, self.needs = text, value, bound, floors, needs

    def verdict(self, t):
        """True (met), False (not met), a str (not met, and why it cannot
        be: the floor above the bound) or None (a side is missing)."""
        if not _need(t, *self.needs):
            return None
        bound = self.bound(t)
        if self.value(t) <= bound:
            return True
        least = [(self.value_of_floor(f, t), f) for f in self.floors if f in t]
        if least:
            floor_value, name = max(least)
            if floor_value > bound:
                return f"{self.text}: {name} {self.show(floor_value)} > {self.show(bound)}"
        return False

    def value_of_floor(self, floor, t):
        """What `value` would be, were cubind as fast as the side `floor`."""
        return t[floor]

    def show(self, ns):
        return fmt(ns)


class OverPart(Part):
    """A part on what a side adds over a reference side (over(): paired by
    round): the reference's own addition for a floor bounds it from below."""

    def __init__(self, text, side, reference, bound, floors=FLOORS, needs=()):
        super().__init__(text, lambda t: over(t, side, reference), bound, floors,
                         needs=(side, reference) + tuple(needs))
        self.reference = reference

    def value_of_floor(self, floor, t):
        return over(t, floor, self.reference)

    def show(self, ns):
        return f"+{fmt(ns)}" if ns >= 0 else f"-{fmt(-ns)}"


def judge_parts(*parts):
    """A row's judge: True when every part is met; a str (why no binding can
    meet it) when every part not met has a floor above its bound; False when
    one not met could be, even where another part cannot be judged (NVIDIA's
    package refusing the row's arguments leaves the bound over the floor to
    judge); None when a part cannot be judged and none is False."""
    def judge(t):
        verdicts = [p.verdict(t) for p in parts]
        if any(v is False for v in verdicts):
            return False
        if any(v is None for v in verdicts):
            return None
        unmet = [v for v in verdicts if v is not True]
        if not unmet:
            return True
        if all(isinstance(v, str) for v in unmet):
            return "; ".join(unmet)
        return False
    return judge


def part_vs_nvidia(nvidia="cuda.core", factor=0.7):
    return Part(f"<= {factor} x {nvidia}", lambda t: t["cubind"], lambda t: factor * t[nvidia],
                needs=("cubind", nvidia))


def part_vs_cupy():
    # Judged only where CuPy has the operation and is installed.
    return Part("<= CuPy", lambda t: t["cubind"], lambda t: t.get("CuPy", float("inf")), needs=("cubind",))


def core_goal(*extra, extra_text=""):
    """cubind <= 0.7 x cuda.core, <= CuPy where CuPy has the operation, and the `extra` parts."""
    return ("<= 0.7 x cuda.core, <= CuPy where it has it" + extra_text,
            judge_parts(part_vs_nvidia(), part_vs_cupy(), *extra))


def _launch_sides(kinds, per_call_config=False):
    n = len(kinds)
    names_args = [f"a{i}" for i in range(n)]
    arglist = "".join(", " + a for a in names_args)
    config = "LaunchConfig(grid=1, block=1)" if per_call_config else "config"
    # The floors of a config made per call make the same call, of a function
    # that takes the keywords and returns None (call_floor.config).
    floor_config = "config(grid=1, block=1)" if per_call_config else "None"
    converting_config = "config(grid=1, block=1) or kinds" if per_call_config else "kinds"

    def cubind(w):
        names = {f"a{i}": w.value(k, i) for i, k in enumerate(kinds)}
        names.update(launch=w.cc.launch, s=w.stream, k=w.kernel(kinds), LaunchConfig=w.cc.LaunchConfig,
                     config=w.cc.LaunchConfig(grid=1, block=1))
        return Side(f"launch(s, {config}, k{arglist})", names, sync=w.stream.sync, batch=LAUNCH_BATCH)

    def nvidia(w):
        ncc, kernel = w.nvidia_kernel(kinds)
        names = {f"a{i}": w.value(k, i, nvidia=True) for i, k in enumerate(kinds)}
        stream = w.nvidia["stream"]
        names.update(launch=ncc.launch, s=stream, k=kernel, LaunchConfig=ncc.LaunchConfig,
                     config=ncc.LaunchConfig(grid=1, block=1))
        return Side(f"launch(s, {config}, k{arglist})", names, sync=stream.sync, batch=LAUNCH_BATCH)

    def floor(w):
        names = {f"a{i}": w.value(k, i) for i, k in enumerate(kinds)}
        names.update(launch=w.floor.launch, s=int(w.stream.handle), k=int(w.kernel(kinds).handle),
                     config=w.floor.config)
        return Side(f"launch(s, {floor_config}, k{arglist})", names, sync=w.stream.sync, batch=LAUNCH_BATCH)

    def converting_floor(w):
        names = {f"a{i}": w.value(k, i) for i, k in enumerate(kinds)}
        names.update(launch=w.floor.launch_converting, s=int(w.stream.handle), k=int(w.kernel(kinds).handle),
                     kinds=bytes(CONVERSIONS[k] for k in kinds), config=w.floor.config)
        return Side(f"launch(s, {converting_config}, k{arglist})", names, sync=w.stream.sync, batch=LAUNCH_BATCH)

    def c_floor(w):
        lib = w.c_floor
        if isinstance(lib, str):
            raise Missing(lib)
        f, s = int(w.kernel(kinds).handle), int(w.stream.handle)
        return CSide(lambda count: lib.floor_launch_ns(f, s, n, count, 1), LAUNCH_BATCH)

    return {"cubind": cubind, "cuda.core": nvidia, "Python floor": floor, "converting floor": converting_floor,
            "C floor": c_floor}


def launch_rows():
    rows = []

    # What a launch adds over the floor that converts nothing is bounded from
    # below by the floor that converts the arguments the cheapest way.
    over_floor = OverPart("<= Python floor + 60 ns", "cubind", "Python floor", lambda t: 60,
                          floors=("converting floor",))
    judge_launch = judge_parts(over_floor, part_vs_nvidia())

    for label, kinds in launch_shapes():
        rows.append(Row("launch", f"launch, {label}", "<= Python floor + 60 ns, <= 0.7 x cuda.core", judge_launch,
                        _launch_sides(kinds)))
    rows.append(Row("launch", "launch, 4 x int, LaunchConfig made per call",
                    "<= Python floor + 60 ns, <= 0.7 x cuda.core", judge_launch,
                    _launch_sides(("int",) * 4, per_call_config=True)))
    return rows


def _loaded_library(stem):
    """The path of a library loaded into this process whose file name starts
    with `stem`, or None."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if line.strip() else ""
                if os.path.basename(path).startswith(stem):
                    return path
    except OSError:
        pass
    return None


def _c_op(name, batch=2000, handle_of=None):
    """The C floor's operation `name`; handle_of(w): the memory pool (or the
    kernel) it works on, the device's memory resource's pool by default."""
    def make(w):
        lib = w.c_floor
        if isinstance(lib, str):
            raise Missing(lib)
        handle = int(handle_of(w) if handle_of is not None else w.device.memory_resource.handle)
        return CSide(lambda count: lib.floor_op_ns(name.encode(), count, w.context, int(w.stream.handle), handle,
                                                   ALLOC_BYTES), batch)
    return make


def _nvidia_core_side(stmt, names_of, sync=None, batch=None):
    def make(w):
        ncc = w.nvidia_part("core")
        names = names_of(w, ncc)
        return Side(stmt, names, sync=sync(w) if sync else None, batch=batch)
    return make


def _cupy_side(stmt, names_of):
    def make(w):
        if isinstance(w.cupy, str):
            raise Missing(w.cupy)
        return Side(stmt, names_of(w, w.cupy))
    return make


def _nothing(why):
    def make(w):
        raise Missing(why)
    return make


def life_cycle_rows():
    rows = []
    d = lambda w: {"Device": w.cc.Device}  # noqa: E731

    judge_device = judge_parts(Part("<= 100 ns", lambda t: t["cubind"], lambda t: 100, needs=("cubind",)),
                               part_vs_nvidia(), part_vs_cupy())

    rows.append(Row("objects", "Device(0)", "<= 100 ns, <= 0.7 x cuda.core", judge_device, {
        "cubind": lambda w: Side("Device(0)", d(w)),
        "cuda.core": _nvidia_core_side("Device(0)", lambda w, n: {"Device": n.Device}),
        "CuPy": _cupy_side("Device(0)", lambda w, cp: {"Device": cp.cuda.Device}),
        "Python floor": lambda w: Side("lookup(0)", {"lookup": w.floor.lookup}),
    }))
    goal, judge = core_goal()
    rows.append(Row("objects", "Device.set_current()", goal, judge, {
        "cubind": lambda w: Side("device.set_current()", {"device": w.device}),
        "cuda.core": _nvidia_core_side("device.set_current()", lambda w, n: {"device": w.nvidia["device"]}),
        "CuPy": _cupy_side("device.use()", lambda w, cp: {"device": cp.cuda.Device(0)}),
        "Python floor": lambda w: Side("set_current()", {"set_current": w.floor.set_current}),
        "C floor": _c_op("set_current"),
    }))

    within_c = Part("<= 1.15 x C floor", lambda t: t["cubind"], lambda t: 1.15 * t["C floor"],
                    floors=("Python floor",), needs=("cubind", "C floor"))
    goal, judge = core_goal(within_c, extra_text=", <= 1.15 x C floor")
    rows.append(Row("objects", "create_stream().close()", goal, judge, {
        "cubind": lambda w: Side("device.create_stream().close()", {"device": w.device}),
        "cuda.core": _nvidia_core_side("device.create_stream().close()", lambda w, n: {"device": w.nvidia["device"]}),
        "CuPy": _cupy_side("Stream(non_blocking=True)", lambda w, cp: {"Stream": cp.cuda.Stream}),
        "Python floor": lambda w: Side("create_stream().close()", {"create_stream": w.floor.create_stream}),
        "C floor": _c_op("stream"),
    }))
    rows.append(Row("objects", "create_event().close()", goal, judge, {
        "cubind": lambda w: Side("device.create_event().close()", {"device": w.device}),
        "cuda.core": _nvidia_core_side("device.create_event().close()", lambda w, n: {"device": w.nvidia["device"]}),
        "CuPy": _cupy_side("Event(disable_timing=True)", lambda w, cp: {"Event": cp.cuda.Event}),
        "Python floor": lambda w: Side("create_event().close()", {"create_event": w.floor.create_event}),
        "C floor": _c_op("event"),
    }))
    goal, judge = core_goal()
    rows.append(Row("objects", "Stream.record()", goal, judge, {
        "cubind": lambda w: Side("s.record()", {"s": w.stream}),
        "cuda.core": _nvidia_core_side("s.record()", lambda w, n: {"s": w.nvidia["stream"]}),
        "CuPy": _cupy_side("s.record()", lambda w, cp: {"s": cp.cuda.Stream(non_blocking=True)}),
        "Python floor": lambda w: Side("record(s)", {"record": w.floor.record, "s": int(w.stream.handle)}),
        "C floor": _c_op("record"),
    }))
    timing = ("a = s.record(options=timed); b = s.record(options=timed); b.sync(); b - a")
    rows.append(Row("objects", "event timing (two timed records, sync, subtract)", goal, judge, {
        "cubind": lambda w: Side(timing, {"s": w.stream, "timed": w.cc.EventOptions(timing_enabled=True)}),
        "cuda.core": _nvidia_core_side(timing, lambda w, n: {"s": w.nvidia["stream"],
                                                             "timed": n.EventOptions(timing_enabled=True)}),
        "CuPy": _cupy_side("a = s.record(); b = s.record(); b.synchronize(); elapsed(a, b)",
                           lambda w, cp: {"s": cp.cuda.Stream(non_blocking=True),
                                          "elapsed": cp.cuda.get_elapsed_time}),
        "C floor": _c_op("timing", batch=200),
    }))

    def allocate_row(label, ours, theirs, cupy=None, c_floor=False, c_op=None, batch=None, pool_of=None):
        # batch: allocations per timed batch, the same on every side (the C
        # floor's too), where a pool's cost per batch (pinning host memory
        # again after the synchronisation between batches) is spread over it.
        # pool_of(w): the pool of a resource other than the device's, which
        # the Python floor allocates from.
        sides = {
            "cubind": lambda w: Side("mr.allocate(4096, stream=s).close()", {"mr": ours(w), "s": w.stream},
                                     sync=w.stream.sync, batch=batch),
            "cuda.core": _nvidia_core_side("mr.allocate(4096, stream=s).close()",
                                           lambda w, n: {"mr": theirs(w, n), "s": w.nvidia["stream"]},
                                           sync=lambda w: w.nvidia["stream"].sync, batch=batch),
        }
        if cupy is not None:
            sides["CuPy"] = _cupy_side(cupy[0], cupy[1])
        if c_floor:
            sides["Python floor"] = lambda w: Side("allocate(4096, stream=s).close()",
                                                   {"allocate": w.floor.allocate, "s": int(w.stream.handle)},
                                                   sync=w.stream.sync)
            sides["C floor"] = _c_op("allocate")
        elif c_op is not None:
            # The driver's calls of the same resource, from C.
            sides["C floor"] = c_op
        if pool_of is not None:
            sides["Python floor"] = lambda w: Side("allocate(4096, stream=s, pool=p).close()",
                                                   {"allocate": w.floor.allocate_from, "s": int(w.stream.handle),
                                                    "p": int(pool_of(w))}, sync=w.stream.sync, batch=batch)
        if c_floor or pool_of is not None:
            # cubind's statement on an object that holds what a Buffer must
            # (call_floor.HoldingResource), of the same pool.
            pool = pool_of or (lambda w: w.device.memory_resource.handle)
            sides["holding floor"] = lambda w: Side(
                "mr.allocate(4096, stream=s).close()",
                {"mr": w.floor.HoldingResource(int(pool(w)), int(w.stream.handle)), "s": w.stream},
                sync=w.stream.sync, batch=batch)
        goal, judge = core_goal()
        return Row("objects", f"allocate(4096).close(), {label}", goal, judge, sides)

    rows.append(allocate_row(
        "DeviceMemoryResource", lambda w: w.device.memory_resource,
        lambda w, n: w.nvidia["device"].memory_resource,
        cupy=("alloc(4096)", lambda w, cp: {"alloc": cp.cuda.MemoryAsyncPool().malloc}),
        c_floor=True))
    def kept(attr, make):
        # One resource per world, shared by the cubind side and its C floor.
        def get(w):
            if not hasattr(w, attr):
                setattr(w, attr, make(w))
            return getattr(w, attr)
        return get
    pinned = kept("_pinned_mr", lambda w: w.cc.PinnedMemoryResource())
    managed = kept("_managed_mr", lambda w: w.cc.ManagedMemoryResource())
    rows.append(allocate_row("PinnedMemoryResource", pinned, lambda w, n: n.PinnedMemoryResource(),
                             c_op=_c_op("allocate", batch=20, handle_of=lambda w: pinned(w).handle), batch=20,
                             pool_of=lambda w: pinned(w).handle))
    rows.append(allocate_row("ManagedMemoryResource", managed, lambda w, n: n.ManagedMemoryResource(),
                             c_op=_c_op("allocate", handle_of=lambda w: managed(w).handle),
                             pool_of=lambda w: managed(w).handle))
    rows.append(allocate_row("LegacyPinnedMemoryResource", lambda w: w.cc.LegacyPinnedMemoryResource(),
                             lambda w, n: n.LegacyPinnedMemoryResource(), c_op=_c_op("host_alloc", batch=20),
                             batch=20))

    source = 'extern "C" __global__ void small(float* x) { x[threadIdx.x] *= 2.0f; }'
    compile_stmt = "Program(source, 'c++', options).compile('cubin')"
    def compile_floor(w):
        # NVRTC from C with the options cubind passes, through the library it loaded.
        lib = w.c_floor
        if isinstance(lib, str):
            raise Missing(lib)
        options = w.cc.ProgramOptions(arch=f"sm_{w.device.arch}")
        w.cc.Program(source, "c++", options).compile("cubin")   # loads NVRTC
        path = _loaded_library("libnvrtc.so")
        if path is None:
            raise Missing("libnvrtc is not loaded in this process")
        args = [o if isinstance(o, bytes) else str(o).encode() for o in options.as_bytes("nvrtc")]
        array = (ctypes.c_char_p * len(args))(*args)
        return CSide(lambda count: lib.floor_compile_ns(path.encode(), source.encode(), array, len(args), count), 3)
    rows.append(Row("objects", "Program.compile('cubin'), one small kernel", goal, judge, {
        "cubind": lambda w: _needs_gpu(w) or Side(compile_stmt, {
            "Program": w.cc.Program, "source": source,
            "options": w.cc.ProgramOptions(arch=f"sm_{w.device.arch}")}, batch=3),
        "cuda.core": _nvidia_core_side(compile_stmt, lambda w, n: {
            "Program": n.Program, "source": source, "options": n.ProgramOptions(arch=f"sm_{w.device.arch}")},
            batch=3),
        "C floor": lambda w: _needs_gpu(w) or compile_floor(w),
    }))
    rows.append(Row("objects", "ObjectCode.get_kernel", goal, judge, {
        "cubind": lambda w: Side("code.get_kernel(name)", {"code": w.code, "name": w.kernel_name(())}),
        "cuda.core": _nvidia_core_side("code.get_kernel(name)", lambda w, n: {"code": w.nvidia["code"],
                                                                             "name": w.kernel_name(())}),
    }))
    rows.append(Row("objects", "Kernel.attributes.max_threads_per_block", goal, judge, {
        "cubind": lambda w: Side("k.attributes.max_threads_per_block", {"k": w.kernel(())}),
        "cuda.core": _nvidia_core_side("k.attributes.max_threads_per_block",
                                       lambda w, n: {"k": w.nvidia_kernel(())[1]}),
        "C floor": _c_op("kernel_attribute", handle_of=lambda w: w.kernel(()).handle),
    }))
    def graph_side(module_of, device_of, kernel_of, stream_of):
        def make(w):
            mod, device, kernel, stream = module_of(w), device_of(w), kernel_of(w), stream_of(w)
            builder = device.create_graph_builder()
            builder.begin_building()
            config = mod.LaunchConfig(grid=1, block=1)
            for _ in range(100):
                mod.launch(builder, config, kernel)
            builder.end_building()
            graph = builder.complete()
            builder.close()
            graph.upload(stream)
            return Side("graph.launch(s)", {"graph": graph, "s": stream}, sync=stream.sync, batch=64)
        return make

    rows.append(Row("objects", "Graph.launch of a captured graph of 100 kernel launches", goal, judge, {
        "cubind": graph_side(lambda w: w.cc, lambda w: w.device, lambda w: w.kernel(()), lambda w: w.stream),
        "cuda.core": graph_side(lambda w: w.nvidia_part("core"), lambda w: w.nvidia["device"],
                                lambda w: w.nvidia_kernel(())[1], lambda w: w.nvidia["stream"]),
    }))
    view = "v = View.from_any_interface(x, -1); v.ptr, v.shape, v.strides, v.dtype"

    def view_row(label, array_of):
        def ours(w):
            from cubind.core.utils import StridedMemoryView
            return Side(view, {"View": StridedMemoryView, "x": array_of(w)})

        def theirs(w):
            w.nvidia_part("core")
            from cuda.core.utils import StridedMemoryView
            return Side(view, {"View": StridedMemoryView, "x": array_of(w)})
        return Row("objects", f"StridedMemoryView of {label}", goal, judge, {"cubind": ours, "cuda.core": theirs})

    def numpy_array(w):
        if w.np is None:
            raise Missing("NumPy not installed")
        return w.np.zeros((64, 64), dtype=w.np.float32)

    def cupy_array(w):
        if isinstance(w.cupy, str):
            raise Missing(w.cupy)
        return w.cupy.zeros((64, 64), dtype=w.cupy.float32)

    def torch_tensor(w):
        if w.standin:
            raise Missing("not run on the stand-in driver")
        try:
            import torch
        except ImportError:
            raise Missing("PyTorch not installed") from None
        if not torch.cuda.is_available():
            raise Missing("PyTorch sees no GPU")
        return torch.zeros((64, 64), dtype=torch.float32, device="cuda")

    rows.append(view_row("a NumPy array", numpy_array))
    rows.append(view_row("a CuPy array", cupy_array))
    rows.append(view_row("a PyTorch tensor", torch_tensor))
    return rows


def _needs_gpu(w):
    if w.standin:
        raise Missing("needs NVRTC and a GPU")
    return None


def bindings_rows():
    rows = []

    judge_simple = judge_parts(OverPart("<= Python floor + 15 ns", "cubind", "Python floor", lambda t: 15,
                                        floors=()))

    def simple(name, args_of, floor_name, floor_args_of):
        def ours(w):
            names, argtext = args_of(w, w.cbd)
            return Side(f"f({argtext})", dict(names, f=getattr(w.cbd, name)))

        def theirs(w):
            nd = w.nvidia_part("bindings")
            names, argtext = args_of(w, nd)
            return Side(f"f({argtext})", dict(names, f=getattr(nd, name)))

        def floor(w):
            names, argtext = floor_args_of(w)
            return Side(f"f({argtext})", dict(names, f=getattr(w.floor, floor_name)))
        return Row("bindings", name, "<= Python floor + 15 ns", judge_simple,
                   {"cubind": ours, "cuda.bindings": theirs, "Python floor": floor})

    def attr_of(w, lib):
        return ({"a": lib.CUdevice_attribute(int(w.attr)), "d": lib.CUdevice(0)}, "a, d")

    def pointer_of(w, lib):
        return ({"a": lib.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "p": lib.CUdeviceptr(w.address)},
                "a, p")

    def stream_of(w, lib):
        return {"s": lib.CUstream(int(w.stream.handle))}, "s"

    rows.append(simple("cuCtxGetCurrent", lambda w, lib: ({}, ""), "cuCtxGetCurrent", lambda w: ({}, "")))
    rows.append(simple("cuDeviceGet", lambda w, lib: ({}, "0"), "cuDeviceGet", lambda w: ({}, "0")))
    rows.append(simple("cuDeviceGetAttribute", attr_of, "cuDeviceGetAttribute",
                       lambda w: ({"a": int(w.attr), "d": 0}, "a, d")))
    rows.append(simple("cuPointerGetAttribute", pointer_of, "cuPointerGetAttribute",
                       lambda w: ({"a": 1, "p": w.address}, "a, p")))
    rows.append(simple("cuStreamQuery", stream_of, "cuStreamQuery", lambda w: ({"s": 1}, "s")))

    def event_of(w, lib):
        if not hasattr(w, "_event"):
            w._event = int(w.cbd.cuEventCreate(2)[1])
        return {"e": lib.CUevent(w._event), "s": lib.CUstream(int(w.stream.handle))}, "e, s"
    rows.append(simple("cuEventRecord", event_of, "cuEventRecord", lambda w: ({"e": 1, "s": 1}, "e, s")))

    judge_launch = judge_parts(OverPart(
        "over C floor <= 0.5 x cuda.bindings'", "cubind", "C floor",
        lambda t: 0.5 * over(t, "cuda.bindings", "C floor"), floors=("Python floor",), needs=("cuda.bindings",)))

    def launch(label, n, form):
        def params_of(lib, w):
            if form == "None":
                return None
            if form == "ctypes-typed tuple":
                return (tuple(range(n)), (ctypes.c_int,) * n)
            if form == "int address":
                return w._params_address(n)
            if form == "NumPy array of addresses":
                return w._params_array(n)
            raise ValueError(form)

        stmt = "f(k, 1, 1, 1, 1, 1, 1, 0, s, p, 0)"

        def ours(w):
            return Side(stmt, {"f": w.cbd.cuLaunchKernel, "k": _function(w, w.cbd, n),
                               "s": w.cbd.CUstream(int(w.stream.handle)), "p": params_of(w.cbd, w)},
                        sync=w.stream.sync, batch=LAUNCH_BATCH)

        def theirs(w):
            nd = w.nvidia_part("bindings")
            return Side(stmt, {"f": nd.cuLaunchKernel, "k": _function(w, nd, n),
                               "s": nd.CUstream(int(w.stream.handle)), "p": params_of(nd, w)},
                        sync=w.stream.sync, batch=LAUNCH_BATCH)

        def floor(w):
            return Side(stmt, {"f": w.floor.cu_launch, "k": int(_function(w, w.cbd, n)), "s": int(w.stream.handle),
                               "p": None if n == 0 else ()}, sync=w.stream.sync, batch=LAUNCH_BATCH)

        def c_floor(w):
            lib = w.c_floor
            if isinstance(lib, str):
                raise Missing(lib)
            f, s = int(_function(w, w.cbd, n)), int(w.stream.handle)
            return CSide(lambda count: lib.floor_launch_ns(f, s, n, count, 0), LAUNCH_BATCH)
        return Row("bindings", f"cuLaunchKernel, {label}", "cubind over C floor <= 0.5 x cuda.bindings over C floor",
                   judge_launch, {"cubind": ours, "cuda.bindings": theirs, "Python floor": floor, "C floor": c_floor})

    rows.append(launch("0 arguments, None", 0, "None"))
    for n in (1, 4, 16, 64):
        rows.append(launch(f"{n} arguments, ctypes-typed tuple", n, "ctypes-typed tuple"))
    for n in (4, 16):
        rows.append(launch(f"{n} arguments, int address of the pointer array", n, "int address"))
        rows.append(launch(f"{n} arguments, NumPy array of addresses", n, "NumPy array of addresses"))
    return rows


def _function(w, lib, n):
    """The CUfunction (of lib's type) of the kernel of n int parameters."""
    return lib.CUfunction(w.cc_function(("int",) * n))


def _cc_function(self, kinds):
    # The kernel's CUfunction in the current context (cuKernelGetFunction).
    kernel = self.kernel(kinds)
    return int(self.cbd.cuKernelGetFunction(self.cbd.CUkernel(int(kernel.handle)))[1])


def _params_keep(self, n):
    # The int parameters of a launch kept alive: 64 ints and the array of their addresses.
    if not hasattr(self, "_kept"):
        self._kept_values = (ctypes.c_int * 64)(*range(64))
        self._kept = (ctypes.c_void_p * 64)(*[ctypes.addressof(self._kept_values) + 4 * i for i in range(64)])
    return self._kept


World.cc_function = _cc_function
World._params_address = lambda self, n: ctypes.addressof(_params_keep(self, n))


def _params_array(self, n):
    if self.np is None:
        raise Missing("NumPy not installed")
    kept = _params_keep(self, n)
    return self.np.array([kept[i] for i in range(n)], dtype=self.np.uint64)


World._params_array = _params_array


def all_rows():
    return launch_rows() + life_cycle_rows() + bindings_rows()


# ---------------------------------------------------------------- timing


def compile_loop(side):
    """A function running side's statement `count` times, its names as locals."""
    names = sorted(side.names)
    source = (f"def loop(_r, {', '.join(names)}):\n" if names else "def loop(_r):\n") + \
        f"    for _ in _r:\n        {side.stmt}\n"
    env = {}
    exec(compile(source, "<side>", "exec"), env)
    loop = env["loop"]
    values = [side.names[n] for n in names]
    return lambda count: loop(range(count), *values)


def batch_timer(side):
    """A function timing one batch of side, in ns per call."""
    if isinstance(side, CSide):
        def timed():
            ns = side.run(side.batch)
            if ns < 0:
                raise RuntimeError(f"the C floor failed ({ns})")
            return ns
        return timed
    loop = compile_loop(side)
    loop(3)
    if side.sync is not None:
        side.sync()
    batch = side.batch
    if batch is None:
        start = time.perf_counter()
        loop(20)
        per_call = (time.perf_counter() - start) / 20
        batch = max(10, min(100000, int(BATCH_SECONDS / max(per_call, 1e-9))))
    clock, sync = time.perf_counter_ns, side.sync

    def timed():
        if sync is not None:
            sync()
        start = clock()
        loop(batch)
        ns = clock() - start
        if sync is not None:
            sync()
        return ns / batch
    return timed


def measure(world, row, rounds):
    """Times ({side: best ns}, with each round's ns) and {side: why it did not run}."""
    return measure_rows(world, [row], rounds)[0]


def measure_rows(world, rows, rounds, pass_rounds=None):
    """measure() of each of rows, the rows taking turns: each row is timed
    for pass_rounds rounds (all of them by default), then the next, and the
    group is gone over again until every row has its rounds. A stretch of
    the run in which the machine is slower (another tenant's work, a change
    of clock) then falls on a part of every row's rounds rather than on all
    the rounds of the rows timed during it. A turn's first round follows
    another row (another kernel, other objects), which its first side pays
    for; turns of many rounds keep that to a small share of the rounds."""
    timers, missing = [], []
    for row in rows:
        row_timers, row_missing = {}, {}
        for name, make in row.sides.items():
            try:
                row_timers[name] = batch_timer(make(world))
            except Missing as e:
                row_missing[name] = str(e)
            except Exception as e:  # a side that fails says how; the run goes on
                row_missing[name] = f"failed: {type(e).__name__}: {e}"[:120]
        timers.append(row_timers)
        missing.append(row_missing)
    each = [{name: [] for name in row_timers} for row_timers in timers]
    step = max(1, pass_rounds or rounds)
    for first in range(0, rounds, step):
        for row_timers, row_missing, row_each in zip(timers, missing, each):
            order = list(row_timers)
            for r in range(first, min(first + step, rounds)):
                shift = r % max(1, len(order))
                for name in order[shift:] + order[:shift]:
                    if name in row_missing:
                        continue
                    try:
                        row_each[name].append(row_timers[name]())
                    except Exception as e:
                        row_missing[name] = f"failed: {type(e).__name__}: {e}"[:120]
    results = []
    for row_missing, row_each in zip(missing, each):
        row_each = {k: v for k, v in row_each.items() if k not in row_missing and v}
        results.append((Times({k: min(v) for k, v in row_each.items()}, row_each), row_missing))
    return results


def import_rows():
    """(module, goal ms, cubind ms, NVIDIA's ms or why none): best of 7
    fresh interpreters each."""
    def best_ms(module):
        code = f"import time; t = time.perf_counter(); import {module}; print((time.perf_counter() - t) * 1e3)"
        runs = []
        for _ in range(7):
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            if out.returncode != 0:
                return None
            runs.append(float(out.stdout))
        return min(runs)

    rows = []
    for ours, theirs, goal in (("cubind.bindings.driver", "cuda.bindings.driver", 5.0),
                               ("cubind.core", "cuda.core", 20.0)):
        rows.append((ours, theirs, goal, best_ms(ours), best_ms(theirs)))
    return rows


# ---------------------------------------------------------------- the table

COLUMNS = ["cubind", "cuda.core", "cuda.bindings", "CuPy", "Python floor", "C floor"]


def fmt(ns):
    if ns >= 10000:
        return f"{ns / 1000:.1f} us"
    if ns >= 1000:
        return f"{ns / 1000:.2f} us"
    return f"{ns:.0f} ns"


def verdict_text(verdict):
    """The goal column's text, and the summary's key."""
    if verdict is True:
        return "met", "met"
    if verdict is False:
        return "**NOT met**", "not met"
    if verdict is None:
        return "not judged (a side is missing)", "not judged"
    return f"cannot be met: {verdict}", "cannot be met"


def table(results, imports):
    lines = ["| row | goal | cubind | NVIDIA | CuPy | Python floor | converting or holding floor | C floor "
             "| cubind / NVIDIA "
             "| cubind - Python floor (median of the rounds' differences, its 95% interval) | goal met |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    summary = {"met": 0, "not met": 0, "cannot be met": 0, "not judged": 0}
    for row, times, missing in results:
        def cell(side):
            if side in times:
                return fmt(times[side])
            why = missing.get(side)
            return why if why else "-"
        nvidia = "cuda.core" if "cuda.core" in row.sides else "cuda.bindings"
        ratio = f"{times['cubind'] / times[nvidia]:.2f}" if _need(times, "cubind", nvidia) else "-"
        gap = "-"
        if _need(times, "cubind", "Python floor"):
            gap = f"{over(times, 'cubind', 'Python floor'):.0f} ns"
            interval = over_interval(times, "cubind", "Python floor")
            if interval is not None:
                gap += f" ({interval[0]:.0f} to {interval[1]:.0f})"
        text, key = verdict_text(row.judge(times))
        summary[key] += 1
        lines.append(f"| {row.name} | {row.goal} | {cell('cubind')} | {cell(nvidia)} "
                     f"| {cell('CuPy') if 'CuPy' in row.sides else '-'} | {cell('Python floor')} "
                     f"| {next((cell(f) for f in ('converting floor', 'holding floor') if f in row.sides), '-')} "
                     f"| {cell('C floor')} | {ratio} | {gap} | {text} |")
    if imports:
        lines += ["", "| import | goal | cubind | NVIDIA's | goal met |", "|---|---|---:|---:|---|"]
        for ours, theirs, goal, ms, theirs_ms in imports:
            met = None if ms is None else ms <= goal
            summary[verdict_text(met)[1]] += 1
            lines.append(f"| import {ours} | <= {goal:.0f} ms | {'failed' if ms is None else f'{ms:.1f} ms'} "
                         f"| {f'{theirs_ms:.1f} ms' if theirs_ms is not None else theirs + ' not installed'} "
                         f"| {'met' if met else ('**NOT met**' if met is False else 'not judged')} |")
    lines += ["", f"goals: {summary['met']} met, {summary['not met']} not met, {summary['cannot be met']} cannot be "
              f"met by any binding (a floor measured above is over the goal), {summary['not judged']} not judged"]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--only", default="", help="only the rows whose name contains this text")
    parser.add_argument("--standin", action="store_true", help="check the rows against the stand-in driver, once each")
    parser.add_argument("--json", help="write the times here too")
    args = parser.parse_args(argv)
    world = World(standin=args.standin)
    rounds = 1 if args.standin else args.rounds
    # One CPU for the whole run: a launch's time changes with the core it
    # is made from, and sides compared at 60 ns must not move between them.
    if hasattr(os, "sched_setaffinity") and not args.standin:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    results = []
    # The rows of a group (launches, objects, bindings) take turns (measure_rows).
    groups = {}
    for row in all_rows():
        if not args.only or args.only in row.name:
            groups.setdefault(row.group, []).append(row)
    for group, rows in groups.items():
        group_rounds = rounds * LAUNCH_ROUNDS // ROUNDS if group == "launch" else rounds
        turn = LAUNCH_TURN if group == "launch" else TURN
        for row, (times, missing) in zip(rows, measure_rows(world, rows, group_rounds, turn)):
            results.append((row, times, missing))
            print(f"  {row.name}: " + ", ".join(f"{k} {fmt(v)}" for k, v in times.items()), file=sys.stderr,
                  flush=True)
    world.close()
    imports = [] if args.standin or args.only else import_rows()
    out = table(results, imports)
    print(out)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": [{"row": r.name, "goal": r.goal, "times_ns": t, "rounds_ns": t.rounds, "missing": m,
                                 "met": r.judge(t)}
                                for r, t, m in results],
                       "imports": [{"module": i[0], "goal_ms": i[2], "cubind_ms": i[3], "nvidia_ms": i[4]}
                                   for i in imports]}, f, indent=1)
    # A cubind side that cannot run here (no GPU, a package missing) is a
    # cell that says so; one that fails is an error of the run.
    failed = [f"{r.name}: cubind {m['cubind']}" for r, t, m in results if m.get("cubind", "").startswith("failed")]
    if failed:
        print("\ncubind sides that failed:\n  " + "\n  ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
