"""Calls every public function of one cubind.bindings module with bad arguments.

    python _bad_input_sweep.py MODULE START [--gpu]

For each function (sorted by name, from index START), each positional parameter
in turn gets each bad value while the others hold a neutral value chosen from
the .pyi annotation; then, where the function takes a sequence, a short list with
its count parameters set above the list's length. Each call must return or raise
a Python exception. Before each call the script prints (and flushes) a line
`@ INDEX NAME PARAM LABEL`, so a parent process can name the call that crashed
the interpreter and resume after it. Exceptions of unexpected types are printed
as `! ...` lines. The last line is `# done CALLS`.

With --gpu the driver is initialised and the primary context of device 0 made
current first (and again after every function), and GPU_SKIP lists functions
that are not called because, with the neutral arguments, they would spoil the
state the rest of the sweep runs in.
"""
import faulthandler
import os
import re
import sys
import traceback

faulthandler.enable()

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _signatures as sig  # noqa: E402

ALLOWED = (TypeError, ValueError, OverflowError, RuntimeError, MemoryError)

_FAULTS = ("enqueues a device-side read or write of the address it is given (0 with neutral arguments); "
           "the fault is sticky and would spoil the context for every later call")
GPU_SKIP = {
    "cuCtxDestroy": "destroys the context it is given; with None the driver may act on the current (primary) context",
    "cuCtxPopCurrent": "pops the sweep's current context",
    "cuDevicePrimaryCtxReset": "resets the primary context the sweep runs in",
    "cuDevicePrimaryCtxRelease": "drops a reference on the primary context the sweep runs in",
    "cudaDeviceReset": "destroys the primary context the sweep runs in",
    "cuStreamWaitValue32": _FAULTS,
    "cuStreamWaitValue64": _FAULTS,
    "cuStreamWriteValue32": _FAULTS,
    "cuStreamWriteValue64": _FAULTS,
    "cuStreamBatchMemOp": _FAULTS,
    "cuCheckpointProcessLock": "acts on a whole process chosen by pid",
    "cuCheckpointProcessCheckpoint": "acts on a whole process chosen by pid",
    "cuCheckpointProcessRestore": "acts on a whole process chosen by pid",
    "cuCheckpointProcessUnlock": "acts on a whole process chosen by pid",
}


class Opaque:
    def __repr__(self):
        return "object()"


BAD_VALUES = [
    ("None", None),
    ("str", "not-a-valid-value"),
    ("empty-list", []),
    # Lists of wrong items. (Not of small ints: an element may be a handle, and a
    # C library dereferences any non-NULL handle it is given, as with cuda.bindings.)
    ("str-list", ["x", "y"]),
    ("object", Opaque()),
    # Not integral, and truncated to 0 where cuda.bindings truncates (an integer
    # or a value such as CUmemGenericAllocationHandle), so it never becomes a bogus handle.
    ("float", 0.5),
    ("minus-one", -1),
    ("2**64", 2**64),
    ("bad-tuple", ((1,), (None,))),
]


def _callback(*args):
    return None


# Live handles used as the neutral value of handle parameters where making one
# needs no GPU, so that the other arguments reach the library's own checks.
_LIVE = {}


def _live_nvrtc_program():
    from cubind.bindings import nvrtc
    status, prog = nvrtc.nvrtcCreateProgram(b'extern "C" __global__ void k(int* p) { *p = 1; }',
                                            b"sweep.cu", 0, None, None)
    assert status == 0
    assert nvrtc.nvrtcAddNameExpression(prog, b"k")[0] == 0
    assert nvrtc.nvrtcCompileProgram(prog, 1, [b"-arch=sm_80"])[0] == 0
    return prog


def _live_nvjitlink_handle():
    from cubind.bindings import nvjitlink, nvrtc
    status, prog = nvrtc.nvrtcCreateProgram(b'extern "C" __global__ void k(int* p) { *p = 1; }',
                                            b"sweep.cu", 0, None, None)
    assert nvrtc.nvrtcCompileProgram(prog, 1, [b"-arch=sm_80"])[0] == 0
    ptx = nvrtc.nvrtcGetPTX(prog)[1]
    nvrtc.nvrtcDestroyProgram(prog)
    handle = nvjitlink.create(1, ["-arch=sm_80"])
    nvjitlink.add_data(handle, nvjitlink.InputType.NVJITLINK_INPUT_PTX, ptx, len(ptx), "sweep.ptx")
    nvjitlink.complete(handle)
    return handle


LIVE_FACTORIES = {"nvrtcProgram": _live_nvrtc_program, "nvJitLinkHandle": _live_nvjitlink_handle}


def neutral(module, annotation):
    """A harmless value for a parameter of this annotation."""
    a = annotation.strip()
    m = re.fullmatch(r"(\w+) \| int \| None", a)
    if m and m.group(1) in LIVE_FACTORIES:
        if m.group(1) not in _LIVE:
            _LIVE[m.group(1)] = LIVE_FACTORIES[m.group(1)]()
        return _LIVE[m.group(1)]
    if "Callable" in a:
        return _callback
    if a.startswith("Sequence["):
        return None
    m = re.fullmatch(r"Optional\[(\w+)\]", a)
    if m:
        return getattr(module, m.group(1))()
    if a in ("bytes | str | None",):
        return b""
    if a == "float":
        return 0.0
    if a == "int":
        return 0
    if a in ("Any", "int | None", "Buffer | None", "int | Buffer | None") or a.endswith("| None"):
        return None
    if a.endswith("| int"):
        return 0
    if re.fullmatch(r"\w+", a):
        cls = getattr(module, a, None)
        if isinstance(cls, type):
            return cls()
    return None


def _is_count(name, annotation):
    return annotation == "int" and (name.lower().startswith("num") or "count" in name.lower()
                                    or name in ("n", "N", "size", "len"))


def calls(module, fname, params):
    """(param, label, args) for every bad call of one function."""
    base = [neutral(module, ann) for _, ann, _ in params]
    for i, (pname, _, _) in enumerate(params):
        for label, bad in BAD_VALUES:
            args = list(base)
            args[i] = bad
            yield pname, label, args
    seqs = [i for i, (_, ann, _) in enumerate(params) if ann.startswith("Sequence[")]
    counts = [i for i, (pname, ann, _) in enumerate(params) if _is_count(pname, ann)]
    for i in seqs:
        args = list(base)
        args[i] = []
        for c in counts:
            args[c] = 2
        yield params[i][0], "short-list", args
        args = list(base)
        args[i] = [None]
        for c in counts:
            args[c] = 3
        yield params[i][0], "short-list-1", args


def gpu_setup(module_name):
    from cubind.bindings import driver
    status, = driver.cuInit(0)
    assert status == 0, status
    status, dev = driver.cuDeviceGet(0)
    assert status == 0, status
    status, ctx = driver.cuDevicePrimaryCtxRetain(dev)
    assert status == 0, status

    def restore(final=False):
        driver.cuCtxSetCurrent(ctx)
        if module_name == "runtime":
            from cubind.bindings import runtime
            runtime.cudaSetDevice(0)
        if final:
            # Host functions and callbacks the sweep enqueued run before the interpreter exits.
            driver.cuCtxSynchronize()

    restore()
    return restore


def struct_sweep(module, start):
    """Every field of every struct class of the module set to each bad value."""
    from cubind.bindings._support import Struct
    names = sorted(n for n in dir(module) if isinstance(getattr(module, n), type)
                   and issubclass(getattr(module, n), Struct) and getattr(module, n).__name__ == n)
    made = 0
    out = sys.stdout
    for index in range(start, len(names)):
        cls = getattr(module, names[index])
        fields = sorted(n for n, v in vars(cls).items() if not n.startswith("_") and hasattr(v, "__set__"))
        for label, bad in [("construct", None)] + BAD_VALUES:
            print(f"@ {index} {names[index]} _ptr {label}", file=out, flush=True)
            made += 1
            try:
                obj = cls() if label == "construct" else cls(_ptr=bad)
                repr(obj)
            except ALLOWED:
                pass
            except BaseException as e:  # noqa: BLE001
                print(f"! {index} {names[index]} _ptr {label} {type(e).__name__}: {str(e)[:200]!r}", file=out, flush=True)
        for field in fields:
            for label, bad in BAD_VALUES:
                obj = cls()
                print(f"@ {index} {names[index]} {field} {label}", file=out, flush=True)
                made += 1
                try:
                    setattr(obj, field, bad)
                    getattr(obj, field)
                    repr(obj)
                except ALLOWED:
                    pass
                except AttributeError as e:
                    # Outputs the library fills (phGraph_out) are read-only, as in cuda.bindings;
                    # fields that share a count are set together (set_dsts_srcs), as there.
                    if "not writable" not in str(e) and "set them together" not in str(e):
                        print(f"! {index} {names[index]} {field} {label} AttributeError: {str(e)[:200]!r}",
                              file=out, flush=True)
                except BaseException as e:  # noqa: BLE001
                    print(f"! {index} {names[index]} {field} {label} {type(e).__name__}: {str(e)[:200]!r}",
                          file=out, flush=True)
        # The setters of fields that share a count: each argument bad in turn, the others empty.
        for setter in sorted(n for n in vars(cls) if n.startswith("set_")):
            arity = len(setter.split("_")) - 1
            for position in range(arity):
                for label, bad in BAD_VALUES:
                    args = [[] for _ in range(arity)]
                    args[position] = bad
                    obj = cls()
                    print(f"@ {index} {names[index]} {setter}[{position}] {label}", file=out, flush=True)
                    made += 1
                    try:
                        getattr(obj, setter)(*args)
                        repr(obj)
                    except ALLOWED:
                        pass
                    except BaseException as e:  # noqa: BLE001
                        print(f"! {index} {names[index]} {setter}[{position}] {label} {type(e).__name__}: "
                              f"{str(e)[:200]!r}", file=out, flush=True)
    print(f"# done {made}", file=out, flush=True)


def main():
    module_name = sys.argv[1]
    start = int(sys.argv[2])
    gpu = "--gpu" in sys.argv[3:]
    if "--structs" in sys.argv[3:]:
        return struct_sweep(sig.load(module_name), start)
    module = sig.load(module_name)
    stubs = sig.stub_functions(module_name)
    names = sorted(n for n in sig.public_functions(module) if n in stubs and n != "sizeof")
    restore = gpu_setup(module_name) if gpu else (lambda final=False: None)
    # The modules in cuda.bindings.nvjitlink's style raise their own error class (nvJitLinkError, nvvmError, ...).
    extra_allowed = tuple(v for n, v in vars(module).items()
                          if isinstance(v, type) and issubclass(v, Exception) and n.endswith("Error"))
    made = 0
    runtime_errors = {}
    out = sys.stdout
    for index in range(start, len(names)):
        fname = names[index]
        if gpu and fname in GPU_SKIP:
            print(f"- {index} {fname} skipped: {GPU_SKIP[fname]}", file=out, flush=True)
            continue
        func = getattr(module, fname)
        for pname, label, args in calls(module, fname, stubs[fname]):
            print(f"@ {index} {fname} {pname} {label}", file=out, flush=True)
            made += 1
            try:
                func(*args)
            except ValueError:
                # An argument error; a list shorter than its count is also a
                # RuntimeError (as cuda.bindings raises) but reached no library.
                pass
            except RuntimeError as e:
                runtime_errors.setdefault(str(e).splitlines()[0][:160], f"{fname}({pname}={label})")
            except ALLOWED + extra_allowed:
                pass
            except BaseException as e:  # noqa: BLE001 - every other type is reported
                where = traceback.extract_tb(e.__traceback__)[-1]
                print(f"! {index} {fname} {pname} {label} {type(e).__name__}: {str(e)[:200]!r} "
                      f"at {os.path.basename(where.filename)}:{where.lineno}", file=out, flush=True)
        restore()
    restore(final=True)
    for message, first in sorted(runtime_errors.items()):
        print(f"R {first}: {message}", file=out, flush=True)
    print(f"# done {made}", file=out, flush=True)


if __name__ == "__main__":
    main()
