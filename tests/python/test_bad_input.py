"""Bad arguments never crash the interpreter.

Every public function of driver, runtime, nvrtc, nvjitlink, nvvm, nvfatbin and cudla is called with bad
values built from its signature (see _bad_input_sweep.py): None, a str, lists,
an object(), a float, -1, 2**64, malformed tuples, and short lists where a
sequence and its count are expected. Each call must return or raise a Python
exception. The sweep runs in a child process per module; a crash (negative or
nonzero exit without the final line) is reported with the call that was running,
and the sweep resumes after that function so that one run finds every crash.

Without a GPU, driver calls raise RuntimeError naming libcuda.so.1 once their
arguments convert. The GPU variant initialises the driver and makes the primary
context of device 0 current first; _bad_input_sweep.GPU_SKIP lists what it does
not call and why.
"""
import ctypes
import os
import subprocess
import sys
import tempfile

import pytest
from conftest import DRIVER_PRESENT

HERE = os.path.dirname(os.path.abspath(__file__))
SWEEP = os.path.join(HERE, "_bad_input_sweep.py")
CORE_SWEEP = os.path.join(HERE, "_core_bad_input_sweep.py")
# cufile is left out: a call whose arguments convert reaches libcufile, which on a machine
# without a CUDA driver never returns from opening its driver (test_cufile.py checks its
# argument errors instead).
MODULES = ("driver", "runtime", "nvrtc", "nvjitlink", "nvvm", "nvfatbin", "cudla")




def run_sweep(module, gpu=False, timeout=300, max_restarts=60, structs=False, script=SWEEP, env=None,
              unnamed=None):
    """Runs the sweep (script: _bad_input_sweep.py, or _core_bad_input_sweep.py
    for cubind.core) to the end, restarting after each crash or hang; env is
    the child's environment. Exceptions whose message names neither the
    parameter nor the value's type ("U" lines) are appended to unnamed.

    Returns (calls, crashes, suspicious, skipped, runtime_errors)."""
    start = 0
    calls = 0
    crashes, suspicious, skipped, runtime_errors = [], [], [], []
    for _ in range(max_restarts):
        with tempfile.TemporaryFile(mode="w+") as out:
            cmd = [sys.executable, script, module, str(start)] + (["--gpu"] if gpu else []) + \
                (["--structs"] if structs else [])
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=HERE, env=env)
            try:
                rc = proc.wait(timeout=timeout)
                hung = False
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
                hung = True
            out.seek(0)
            lines = out.read().splitlines()
        last_call = None
        done = False
        for line in lines:
            if line.startswith("@ "):
                last_call = line[2:]
            elif line.startswith("! "):
                suspicious.append(line[2:])
            elif line.startswith("- "):
                skipped.append(line[2:])
            elif line.startswith("R "):
                runtime_errors.append(line[2:])
            elif line.startswith("U ") and unnamed is not None:
                unnamed.append(line[2:])
            elif line.startswith("# done"):
                calls += int(line.split()[2])
                done = True
        if done:
            if rc != 0:
                crashes.append(f"the interpreter exited with status {rc} after the sweep finished "
                               f"(at exit: a callback registered by the sweep, or teardown)")
            return calls, crashes, suspicious, skipped, runtime_errors
        calls += sum(1 for line in lines if line.startswith("@ "))
        if last_call is None:
            tail = "\n".join(lines[-15:])
            pytest.fail(f"the {module} sweep failed before its first call (exit {rc}):\n{tail}")
        index, fname, param, label = last_call.split(" ", 3)
        how = "hung" if hung else f"exit status {rc}"
        fatal = [line for line in lines if line.startswith("Fatal Python error")]
        crashes.append(f"{fname}({param}={label}): {how}" + (f" [{fatal[-1][:120]}]" if fatal else ""))
        start = int(index) + 1
    pytest.fail(f"the {module} sweep crashed more than {max_restarts} times: {crashes}")


# Calls known to crash the interpreter, with the reason (none at present: a new
# entry is a bug to fix, reported as xfail so the sweep still runs in CI).
KNOWN_CRASHES = {}


def _report(what, result, unnamed=None):
    calls, crashes = result[0], result[1]
    line = f"\n{what}: {calls} calls, {len(crashes)} crashes or hangs"
    if unnamed is not None:
        line += f", {len(unnamed)} errors that name neither the parameter nor the value's type"
    print(line)


def _assert_clean(module, result):
    calls, crashes, suspicious, skipped, runtime_errors = result
    assert calls > 100, f"only {calls} calls: the sweep did not get far"
    known = [c for c in crashes if c.split(":", 1)[0] in KNOWN_CRASHES]
    crashes = [c for c in crashes if c not in known]
    message = []
    if crashes:
        message.append(f"{len(crashes)} call(s) crashed or hung the interpreter:\n  " + "\n  ".join(crashes))
    if suspicious:
        message.append(f"{len(suspicious)} call(s) raised an unexpected exception type "
                       "(not TypeError/ValueError/OverflowError/RuntimeError/MemoryError):\n  "
                       + "\n  ".join(suspicious[:40]))
    assert not message, f"cubind.{'core' if module == 'core' else 'bindings.' + module}: " + "\n".join(message)
    if known:
        pytest.xfail("known crashes: " + "; ".join(f"{c}: {KNOWN_CRASHES[c.split(':', 1)[0]]}" for c in known))


@pytest.mark.parametrize("module", MODULES)
def test_bad_input_sweep(module):
    result = run_sweep(module)
    _report(f"cubind.bindings.{module} sweep", result)
    _assert_clean(module, result)
    runtime_errors = result[4]
    if module == "driver" and not DRIVER_PRESENT:
        # Every driver call that got past its argument checks failed to load the driver.
        assert runtime_errors, "no driver call reached the loader"
        for line in runtime_errors:
            assert "libcuda.so.1" in line, line


@pytest.mark.parametrize("module", ["driver", "runtime"])
def test_struct_fields_sweep(module):
    """Every field of every struct set to each bad value, then read back and repr()."""
    result = run_sweep(module, structs=True)
    _report(f"cubind.bindings.{module} struct fields sweep", result)
    _assert_clean(module, result)


@pytest.mark.gpu
@pytest.mark.parametrize("module", ["driver", "runtime"])
def test_bad_input_sweep_gpu(module):
    result = run_sweep(module, gpu=True, timeout=45, max_restarts=40)
    _report(f"cubind.bindings.{module} sweep, GPU", result)
    _assert_clean(module, result)
    sys.path.insert(0, HERE)
    from _bad_input_sweep import GPU_SKIP
    for line in result[3]:
        assert line.split()[1] in GPU_SKIP, line


def test_driver_without_libcuda_raises_runtime_error():
    if DRIVER_PRESENT:
        pytest.skip("libcuda.so.1 is present on this machine")
    code = (
        "from cubind.bindings import driver\n"
        "for call in (lambda: driver.cuInit(0), lambda: driver.cuDeviceGetCount(), lambda: driver.cuMemAlloc(16)):\n"
        "    try:\n"
        "        call()\n"
        "    except RuntimeError as e:\n"
        "        assert 'libcuda.so.1' in str(e), str(e)\n"
        "    else:\n"
        "        raise SystemExit('no RuntimeError')\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


# ---------------------------------------------------------------------------
# Targeted cases the generic sweep does not build


def test_count_larger_than_sequence():
    from cubind.bindings import driver, nvjitlink, nvrtc
    with pytest.raises(ValueError, match="numOptions"):
        nvrtc.nvrtcCompileProgram(None, 5, ["-arch=sm_80"])
    with pytest.raises(ValueError):
        nvjitlink.create(4, ["-arch=sm_80"])
    with pytest.raises(ValueError):
        driver.cuGraphAddKernelNode(None, [None], 3, driver.CUDA_KERNEL_NODE_PARAMS())
    with pytest.raises(ValueError):
        driver.cuPointerGetAttributes(2, [driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT], 0)
    with pytest.raises(ValueError):
        driver.cuModuleLoadDataEx(b"", 2, [0], [0, 0])


def test_kernel_params_malformed():
    from cubind.bindings import driver
    f = driver.CUfunction()
    bad = [
        ((1, 2), (ctypes.c_int,)),            # fewer types than values
        ((1,), (None,)),                      # None type needs a cubind object
        (("x",), (ctypes.c_int,)),            # does not convert
        ((2**40,), (ctypes.c_int,)),          # out of range
        ((1,), ("int",)),                     # not a ctypes type
        (5,),                                 # a 1-tuple
        "params",
        [1, 2],
        -1,
        2**64,
        object(),
    ]
    for params in bad:
        with pytest.raises((TypeError, ValueError, OverflowError)):
            driver.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, params, None)


def test_struct_fields_bad_values():
    from cubind.bindings import driver
    m = driver.CUDA_MEMCPY2D()
    for field, value in (("srcY", None), ("srcY", "1"), ("srcY", -1), ("srcY", 2**64), ("srcHost", -1),
                         ("srcHost", "host"), ("srcHost", 2**64), ("srcArray", "array"), ("srcArray", -1),
                         ("srcDevice", "x"), ("srcDevice", -1), ("srcMemoryType", "HOST"), ("srcMemoryType", 2**64)):
        with pytest.raises((TypeError, ValueError, OverflowError)):
            setattr(m, field, value)
    # None is 0 for a value-type field, as a NULL handle is (as in cuda.bindings).
    m.srcDevice = 0x10
    m.srcDevice = None
    assert int(m.srcDevice) == 0
    uuid = driver.CUuuid()
    for value in (bytes(17), [1] * 17, [1] * 15, ["x"] * 16, None, 5):
        with pytest.raises((TypeError, ValueError)):
            uuid.bytes = value


def test_enum_arguments_bad_values():
    from cubind.bindings import driver, nvrtc
    for value in ("CUDA_SUCCESS", None, [0], object(), 1.5):
        with pytest.raises(TypeError):
            nvrtc.nvrtcGetErrorString(value)
        with pytest.raises((TypeError, RuntimeError)):
            driver.cuGetErrorName(value)
    with pytest.raises(OverflowError):
        nvrtc.nvrtcGetErrorString(2**64)


def test_typed_value_unknown_attribute():
    from cubind.bindings import driver
    with pytest.raises((ValueError, RuntimeError)):
        driver.cuPointerGetAttribute(12345, 0)
    with pytest.raises((ValueError, RuntimeError)):
        driver.cuMemPoolSetAttribute(None, 12345, 1)


def test_link_add_data_takes_bytes():
    from cubind.bindings import driver
    ptx = b".version 8.0\n.target sm_80\n.address_size 64\n"
    try:
        status, = driver.cuLinkAddData(None, driver.CUjitInputType.CU_JIT_INPUT_PTX, ptx, len(ptx),
                                       b"x.ptx", 0, None, None)
        assert status != 0  # a NULL link state
    except RuntimeError:
        assert not DRIVER_PRESENT


def test_pointer_field_pins_its_buffer():
    from cubind.bindings import driver
    m = driver.CUDA_MEMCPY2D()
    ba = bytearray(16)
    m.srcHost = ba
    try:
        ba.extend(b"x" * 100000)
    except BufferError:
        return
    now = ctypes.addressof((ctypes.c_char * len(ba)).from_buffer(ba))
    assert m.srcHost == now, "the field points at the bytearray's old, freed storage"


def test_core_bad_input_sweep(fake_driver_dir):
    """Every public method and property of cubind.core with bad arguments and on
    closed objects, against the stand-in driver (see _core_bad_input_sweep.py)."""
    env = dict(os.environ, LD_LIBRARY_PATH=fake_driver_dir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    unnamed = []
    result = run_sweep("core", script=CORE_SWEEP, env=env, unnamed=unnamed)
    _report("cubind.core sweep, stand-in driver", result, unnamed)
    _assert_clean("core", result)


@pytest.mark.gpu
def test_core_bad_input_sweep_gpu():
    """The same sweep of cubind.core on a GPU."""
    unnamed = []
    result = run_sweep("core", gpu=True, script=CORE_SWEEP, unnamed=unnamed)
    _report("cubind.core sweep, GPU", result, unnamed)
    _assert_clean("core", result)
