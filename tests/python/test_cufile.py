"""cubind.bindings.cufile: cuFile (GPUDirect Storage) as cuda.bindings.cufile binds it.

Without a GPU: the version, the configuration getters (which need no driver), the
status text, cuFileError, and bad input refused before the library is reached.
cuFileDriverOpen itself is not called here: where libcuda.so.1 is missing (or is the
stand-in driver), libcufile 1.20 logs "running in compatible mode" and then never
returns from cuFileDriverOpen, so the driver's own error cannot be observed on such
a machine. On a GPU (marker gpu) the cufile_read_to_device sample reads a file into
device memory with the driver open in compatibility mode, or skips with the status
cuFile gave.
"""
import ctypes
import json
import os
import pickle
import subprocess
import sys

import pytest

from cubind.bindings import cufile

import cubind

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(REPO, "examples", "python")


def _library_path():
    cufile.get_version()  # loads libcufile
    path = cubind.library_status("cufile")["path"]
    assert path and os.path.basename(path) == "libcufile.so.0", path
    return path


class _Err(ctypes.Structure):
    _fields_ = [("err", ctypes.c_int), ("cu_err", ctypes.c_int)]


def test_get_version_is_the_loaded_librarys():
    lib = ctypes.CDLL(_library_path())
    lib.cuFileGetVersion.restype = _Err
    version = ctypes.c_int()
    err = lib.cuFileGetVersion(ctypes.byref(version))
    assert err.err == 0
    assert cufile.get_version() == version.value
    assert version.value >= 1150  # CUDA 13's cuFile: 1000 * major + 10 * minor


def test_size_t_parameter_and_its_range():
    param = cufile.SizeTConfigParameter.EXECUTION_MAX_IO_THREADS
    value = cufile.get_parameter_size_t(param)
    low, high = cufile.get_parameter_min_max_value(param)
    assert isinstance(value, int) and low <= value <= high


def test_bool_and_string_parameters():
    assert cufile.get_parameter_bool(cufile.BoolConfigParameter.PROPERTIES_ALLOW_COMPAT_MODE) in (True, False)
    level = cufile.get_parameter_string(cufile.StringConfigParameter.LOGGING_LEVEL, 64)
    assert isinstance(level, str) and "\0" not in level


def test_op_status_error_is_the_headers_text():
    text = cufile.op_status_error(cufile.OpError.INVALID_VALUE)
    assert isinstance(text, str) and text
    assert text != cufile.op_status_error(cufile.OpError.SUCCESS)


def test_cufile_error_carries_the_status_and_cuda_error():
    # As cuda.bindings.cufile's: cuFileError(status, cu_err=None), .status and .cuda_error,
    # the status in words (the header's cufileop_status_error) and the CUresult by name.
    e = cufile.cuFileError(cufile.OpError.CUDA_DRIVER_ERROR, 999)
    assert e.status is cufile.OpError.CUDA_DRIVER_ERROR and e.cuda_error == 999
    words = cufile.op_status_error(cufile.OpError.CUDA_DRIVER_ERROR)
    assert str(e) == f"CUDA_DRIVER_ERROR (5011): {words}; CUDA status: CUDA_ERROR_UNKNOWN (999)"
    assert str(cufile.cuFileError(5001)) == f"DRIVER_NOT_INITIALIZED (5001): {cufile.op_status_error(5001)}"
    assert cufile.cuFileError(5001).cuda_error is None
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is cufile.cuFileError and again.status == e.status and again.cuda_error == 999
    assert cufile.cuFileError.__bases__ == (Exception,)
    # An error code the headers do not know still reads, as does a CUresult no member has.
    assert int(cufile.cuFileError(5999).status) == 5999
    assert str(cufile.cuFileError(5011, 123456)).endswith("; CUDA status: CUresult_123456 (123456)")


def test_pycuresult_is_the_drivers_cuResult():
    from cubind.bindings import driver
    assert cufile.pyCUresult is driver.CUresult
    assert "pyCUresult" in dir(cufile)


def test_enums_as_cuda_bindings_names_them():
    assert int(cufile.OpError.INVALID_VALUE) == 5022
    assert int(cufile.FileHandleType.OPAQUE_FD) == 1
    assert int(cufile.Opcode.WRITE) == 1
    assert int(cufile.Status.COMPLETE) == 16


@pytest.mark.parametrize("call,param", [
    (lambda: cufile.read("fh", 0, 0, 0, 0), "fh"),
    (lambda: cufile.write(0, 0, -1, 0, 0), "size"),
    (lambda: cufile.read(0, 0, 0, "offset", 0), "file_offset"),
    (lambda: cufile.get_parameter_size_t("threads"), "param"),
    (lambda: cufile.get_parameter_string(cufile.StringConfigParameter.LOGGING_LEVEL, 0), "len"),
    (lambda: cufile.readv(0, object(), 0), "iov"),
    (lambda: cufile.readv(0, [(0, 1, 2, 3)], 0), "iov"),
    (lambda: cufile.writev(0, [(0, 16)], 0, flags=-1), "flags"),
    (lambda: cufile.buf_register(0, "n", 0), "length"),
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises((TypeError, ValueError, OverflowError)) as info:
        call()
    assert param in str(info.value)


def test_python_m_cubind_reports_cufile():
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-m", "cubind", "--json"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    lib = json.loads(result.stdout)["libraries"]["cufile"]
    version = cufile.get_version()
    assert lib["version"] == f"{version // 1000}.{version % 1000 // 10}.{version % 10}"
    assert lib["path"] == _library_path()


@pytest.mark.gpu
def test_read_into_device_memory_in_compatibility_mode():
    """cuFile's driver opens (compatibility mode where the container has no nvidia-fs),
    a file is read into cuMemAlloc'd memory and compared; skipped with cuFile's status
    where the driver cannot open or no file can be registered (a container without udev)."""
    sys.path.insert(0, EXAMPLES)
    import run_example
    result = run_example.run_sample(os.path.join(EXAMPLES, "bindings", "cufile_read_to_device.py"), "cubind",
                                    timeout=300)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    if result.returncode == 0 and lines and lines[-1].endswith("; skipped"):
        pytest.skip(lines[-1])
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines[-1].endswith("PASSED"), result.stdout
    assert sum("the same bytes" in line for line in lines) == 2, result.stdout
