import ctypes
import ctypes.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

import pytest

# The CUDA headers extensions compile against (cubind.get_cuda_include()) must be
# at least the release the bindings were generated from: in a checkout, the
# pinned ones of scripts/cuda_headers.py, unless the caller chose others.
_PINNED_HEADERS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                               ".cuda-headers", "include")
if "CUBIND_CUDA_INCLUDE" not in os.environ and os.path.isfile(os.path.join(_PINNED_HEADERS, "cuda.h")):
    os.environ["CUBIND_CUDA_INCLUDE"] = _PINNED_HEADERS


# The reference the compatibility tests and the differential suite compare with is
# NVIDIA's cuda-bindings for the CUDA release of the pinned headers (13.5). Where the
# environment's own cuda-bindings is another release (a venv made for 13.0), the one
# scripts/setup.sh installs apart in .cuda-bindings-new takes its place, in this
# process (first on sys.path, before anything imports cuda.bindings) and in the
# processes tests start (PYTHONPATH), provided it was built for this Python.
def _reference_cuda_bindings():
    import glob
    import importlib.metadata
    import json

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    folder = os.path.join(root, ".cuda-bindings-new")
    try:
        with open(os.path.join(root, "scripts", "cuda-headers.lock.json"), encoding="utf-8") as f:
            pinned = json.load(f)["cuda"]
    except (OSError, ValueError, KeyError):
        return
    try:
        installed = importlib.metadata.version("cuda-bindings")
    except importlib.metadata.PackageNotFoundError:
        installed = ""
    if installed.split(".")[:2] == pinned.split(".")[:2]:
        return
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    if not glob.glob(os.path.join(folder, "cuda", "bindings", "*" + suffix)):
        return
    if not glob.glob(os.path.join(folder, f"cuda_bindings-{pinned}.*dist-info")):
        return
    sys.path.insert(0, folder)
    os.environ["PYTHONPATH"] = os.pathsep.join([folder] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])


_reference_cuda_bindings()


def _gpu_count():
    """Devices the driver reports, asked directly through libcuda.so.1 (not cubind)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    if cuda.cuInit(0) != 0:
        return 0
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


GPU_COUNT = _gpu_count()


def _driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


# Whether libcuda.so.1 loads at all (a machine may have the driver and no GPU).
DRIVER_PRESENT = _driver_present()


def _no_gpu_reason():
    """Why a gpu-marked test skips, saying what was found: no driver library
    at all, or a driver that reports no device (or fails to initialise)."""
    if not DRIVER_PRESENT:
        return "no CUDA GPU: no NVIDIA driver on this machine (libcuda.so.1 not found by the system loader)"
    cuda = ctypes.CDLL("libcuda.so.1")
    status = cuda.cuInit(0)
    if status != 0:
        return f"no CUDA GPU: the NVIDIA driver (libcuda.so.1) is installed but cuInit failed with CUresult {status}"
    return "no CUDA GPU: the NVIDIA driver (libcuda.so.1) reports no device"


NO_GPU_REASON = _no_gpu_reason() if GPU_COUNT < 1 else ""


def _same_cuda_reference():
    """Why NVIDIA's cuda.bindings cannot serve as the reference here, or None.
    Name-by-name comparisons only hold against the release for the same CUDA
    version as the headers cubind.bindings was generated from."""
    try:
        import cuda.bindings as reference
    except ImportError:
        return "cuda-bindings is not installed"
    import cubind.bindings as ours
    if reference.__version__.split(".")[:2] != ours.__version__.split(".")[:2]:
        return (f"cuda-bindings {reference.__version__} is for another CUDA version than "
                f"cubind.bindings {ours.__version__}")
    return None


NO_SAME_CUDA_REFERENCE = _same_cuda_reference()
# Marks a test that compares with cuda.bindings: it skips, saying why, without one of the same CUDA version.
needs_same_cuda_reference = pytest.mark.skipif(NO_SAME_CUDA_REFERENCE is not None,
                                               reason=NO_SAME_CUDA_REFERENCE or "")


def pytest_collection_modifyitems(config, items):
    no_gpu = pytest.mark.skip(reason=NO_GPU_REASON)
    one_gpu = pytest.mark.skip(reason=f"needs two CUDA GPUs; this machine has {GPU_COUNT}")
    for item in items:
        if "multi_gpu" in item.keywords and GPU_COUNT < 2:
            item.add_marker(one_gpu)
        elif "gpu" in item.keywords and GPU_COUNT < 1:
            item.add_marker(no_gpu)


def build_cython_module(pyx_path, workdir):
    """Builds a user's Cython module against the installed cubind, as its
    documentation says: cimport the .pxd files, compile as C++, link libcubind_raw."""
    import cubind

    name = os.path.splitext(os.path.basename(pyx_path))[0]
    cpp = os.path.join(workdir, name + ".cpp")
    subprocess.run(
        [sys.executable, "-m", "cython", "--cplus", "-3", "-o", cpp, pyx_path],
        check=True,
        capture_output=True,
        text=True,
    )
    out = os.path.join(workdir, name + sysconfig.get_config_var("EXT_SUFFIX"))
    cxx = os.environ.get("CXX", "g++")
    cmd = [cxx, "-shared", "-fPIC", "-std=c++17", "-O1", "-w",
           "-I", sysconfig.get_paths()["include"],
           "-I", cubind.get_include(),
           "-I", cubind.get_cuda_include(),
           cpp, "-o", out,
           "-L", cubind.get_library_dir(), "-lcubind_raw",
           f"-Wl,-rpath,{cubind.get_library_dir()}"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"building {name} failed:\n{' '.join(cmd)}\n{result.stderr[-4000:]}")
    return out


@pytest.fixture(scope="session")
def raw_module_path():
    workdir = tempfile.mkdtemp(prefix="cubind-raw-")
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        yield build_cython_module(os.path.join(here, "raw_layer_check.pyx"), workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def outputs_of(result, success):
    """Asserts that a (status, *outputs) tuple carries `success` and returns its
    outputs: None, the one output, or a tuple of them."""
    assert isinstance(result, tuple), result
    assert result[0] is success, f"{result[0]!r}"
    outputs = result[1:]
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else outputs


def run_python(code, env=None):
    """Runs code in a fresh interpreter (each CUDA library loads once per process)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env)


# The cuda-bindings 13.5 that scripts/setup.sh installs apart (pip --target): put first
# on a child's sys.path where a test runs NVIDIA's package in a process of its own.
NEWER_CUDA_BINDINGS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                    ".cuda-bindings-new"))


def newer_cuda_bindings_env():
    """A child's environment whose sys.path puts NEWER_CUDA_BINDINGS first."""
    path = [NEWER_CUDA_BINDINGS] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"PYTHONPATH": os.pathsep.join(path)}


_newer_reason = []


def newer_cuda_bindings_missing():
    """Why NEWER_CUDA_BINDINGS cannot serve here, or None: absent, or built for another
    Python than this one (a folder carried to a machine of another version)."""
    if not _newer_reason:
        if not os.path.isdir(os.path.join(NEWER_CUDA_BINDINGS, "cuda", "bindings")):
            _newer_reason.append(f"no cuda-bindings in {NEWER_CUDA_BINDINGS}: scripts/setup.sh installs it there")
        else:
            result = run_python("import cuda.bindings.nvfatbin", env=newer_cuda_bindings_env())
            _newer_reason.append(None if result.returncode == 0 else
                                 f"the cuda-bindings in {NEWER_CUDA_BINDINGS} does not import with Python "
                                 f"{sys.version.split()[0]}: {result.stderr.strip().splitlines()[-1:]}")
    return _newer_reason[0]


def pytest_terminal_summary(terminalreporter):
    """One line counting the tests marked gpu or multi_gpu, for scripts/gpu_suite.sh."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for outcome in counts:
        for report in terminalreporter.stats.get(outcome, []):
            keywords = getattr(report, "keywords", {})
            if "gpu" in keywords or "multi_gpu" in keywords:
                if outcome == "passed" and report.when != "call":
                    continue
                counts[outcome] += 1
    terminalreporter.write_line(
        f"gpu-marked tests: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")


FAKE_DRIVER_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_driver", "fake_libcuda.c")
FAKE_DRIVER_GRAPHS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_driver", "fake_graphs.c")
FAKE_DRIVER_INTEROP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_driver", "fake_interop.c")
FAKE_DRIVER_TEXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_driver", "fake_texture.c")


@pytest.fixture(scope="session")
def fake_driver_dir():
    """A folder holding the stand-in libcuda.so.1 of fake_driver/, built once per session."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in driver")
    workdir = tempfile.mkdtemp(prefix="cubind-fake-driver-")
    out = os.path.join(workdir, "libcuda.so.1")
    # The graph-building and texture parts are C over cuda.h's types
    # (fake_graphs.c, fake_texture.c).
    import cubind
    result = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-I", cubind.get_cuda_include(), "-o", out,
                             FAKE_DRIVER_SOURCE, FAKE_DRIVER_GRAPHS, FAKE_DRIVER_INTEROP, FAKE_DRIVER_TEXTURE, "-lpthread"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(f"building the stand-in driver failed:\n{result.stderr}")
    yield workdir
    shutil.rmtree(workdir, ignore_errors=True)


FAKE_NVML_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_nvml", "fake_libnvidia_ml.c")


@pytest.fixture(scope="session")
def fake_nvml_dir():
    """A folder holding the stand-in libnvidia-ml.so.1 of fake_nvml/, built once
    per session against the nvml.h cubind installs (cubind.get_include())."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in NVML")
    workdir = tempfile.mkdtemp(prefix="cubind-fake-nvml-")
    import cubind
    result = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-I", cubind.get_include(), "-o",
                             os.path.join(workdir, "libnvidia-ml.so.1"), FAKE_NVML_SOURCE],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(f"building the stand-in NVML failed:\n{result.stderr}")
    yield workdir
    shutil.rmtree(workdir, ignore_errors=True)


def run_with_fake_nvml(fake_nvml_dir, code, env_extra=None):
    """Runs code in a child interpreter whose loader finds the stand-in NVML
    first (as run_with_fake_driver does for libcuda); it ends by printing 'ok'."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = fake_nvml_dir + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    env.pop("CUBIND_NVML_LIBRARY", None)
    env.update(env_extra or {})
    code = code + "\nprint('ok')\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, (f"child exit {result.returncode}\nstdout:\n{result.stdout[-2000:]}\n"
                                    f"stderr:\n{result.stderr[-4000:]}")
    assert result.stdout.strip().endswith("ok"), result.stdout
    return result


# Checks for child code run on the stand-in driver (prepend to it): raises()
# asserts an exception whose message holds a text; fake_int() reads an int the
# stand-in exports (it needs `fake`, the stand-in loaded with ctypes).
STAND_IN_CHECKS = """
import ctypes


def raises(exc, text, f, *args, **kwargs):
    try:
        f(*args, **kwargs)
    except exc as error:
        assert text in str(error), (text, str(error))
    else:
        raise AssertionError(f"{f} did not raise {exc.__name__}")


def fake_int(name, kind=ctypes.c_int):
    return kind.in_dll(fake, name).value
"""


def run_with_fake_driver(fake_driver_dir, code):
    """Runs code in a child interpreter whose loader finds the stand-in driver
    first; it must print nothing after its last line, which adds 'ok'."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = fake_driver_dir + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    code = code + "\nprint('ok')\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, (f"child exit {result.returncode}\nstdout:\n{result.stdout[-2000:]}\n"
                                    f"stderr:\n{result.stderr[-4000:]}")
    assert result.stdout.strip().endswith("ok"), result.stdout
    return result


# The cubind.core GPU tests' device and stream (tests/python/core/*_gpu.py);
# a test file that defines its own of either name uses its own.
@pytest.fixture(scope="module")
def device():
    """Device 0 of cubind.core, made current for the test module."""
    from cubind.core import Device

    dev = Device(0)
    dev.set_current()
    return dev


@pytest.fixture
def stream(device):
    """A stream of its own for the test, synchronized and closed after it."""
    s = device.create_stream()
    yield s
    s.sync()
    s.close()
