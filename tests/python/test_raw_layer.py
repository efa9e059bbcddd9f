"""The raw Cython layer (cubind.bindings.cy*), used the way a Cython user does."""
import ctypes
import importlib.util
import os
import subprocess
import textwrap

import pytest

import cubind
import cubind.bindings
from conftest import run_python


def load(path):
    spec = importlib.util.spec_from_file_location("raw_layer_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def raw(raw_module_path):
    return load(raw_module_path)


def in_fresh_process(raw_module_path, body, env=None):
    code = textwrap.dedent(
        f"""
        import importlib.util, json
        spec = importlib.util.spec_from_file_location("raw_layer_check", {raw_module_path!r})
        raw = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(raw)
        """
    ) + textwrap.dedent(body)
    return run_python(code, env)


def cuda_major():
    return int(cubind.bindings.__version__.split(".")[0])


def test_nvrtc_version_matches_the_library_it_loaded(raw):
    status, major, minor = raw.nvrtc_version()
    assert status == 0
    path = cubind.library_status("nvrtc")["path"]
    assert path and os.path.exists(path)
    # Ask the same file directly, without cubind.
    lib = ctypes.CDLL(path)
    cmajor, cminor = ctypes.c_int(), ctypes.c_int()
    assert lib.nvrtcVersion(ctypes.byref(cmajor), ctypes.byref(cminor)) == 0
    assert (major, minor) == (cmajor.value, cminor.value)
    assert major == cuda_major()


def test_nvrtc_error_string_comes_from_the_library(raw):
    code = raw.constants()["NVRTC_ERROR_INVALID_INPUT"]
    lib = ctypes.CDLL(cubind.library_status("nvrtc")["path"])
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    assert raw.nvrtc_error_string(code) == lib.nvrtcGetErrorString(code).decode()
    assert "INVALID_INPUT" in raw.nvrtc_error_string(code)


def test_nvjitlink_version_matches_the_library_it_loaded(raw):
    status, major, minor = raw.nvjitlink_version()
    assert status == 0
    path = cubind.library_status("nvjitlink")["path"]
    lib = ctypes.CDLL(path)
    cmajor, cminor = ctypes.c_uint(), ctypes.c_uint()
    assert lib.nvJitLinkVersion(ctypes.byref(cmajor), ctypes.byref(cminor)) == 0
    assert (major, minor) == (cmajor.value, cminor.value)
    assert major == cuda_major()


def test_runtime_version_matches_the_library_it_loaded(raw):
    status, version = raw.runtime_version()
    assert status == 0
    lib = ctypes.CDLL(cubind.library_status("runtime")["path"])
    expected = ctypes.c_int()
    assert lib.cudaRuntimeGetVersion(ctypes.byref(expected)) == 0
    assert version == expected.value
    assert version // 1000 == cuda_major()


def test_constants_are_the_header_values(raw):
    c = raw.constants()
    assert c["CUDA_VERSION"] // 1000 == cuda_major()
    assert c["CU_LAUNCH_PARAM_END"] == 0
    assert c["CU_STREAM_LEGACY"] == 1
    assert c["CU_STREAM_PER_THREAD"] == 2
    assert c["CUDA_SUCCESS"] == 0


def test_structs_with_anonymous_unions_are_usable(raw):
    size3d, size_desc, fd, x = raw.struct_sizes()
    assert (fd, x) == (7, 3)
    # Sizes are the C compiler's: at least the fields cimport users can touch.
    assert size3d >= 8 * 16 and size_desc >= 16


def test_the_module_links_libcubind_raw_and_no_cuda_library(raw_module_path):
    out = subprocess.run(["readelf", "-d", raw_module_path], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    assert "libcubind_raw.so" in needed
    assert "libcubind.so" not in needed, "the raw layer needs nothing of the core"
    for lib in needed:
        assert not lib.startswith(("libcuda", "libnvrtc", "libnvJitLink", "libcudart")), needed


def test_importing_loads_no_cuda_library():
    result = run_python(
        "import cubind, cubind.bindings, cubind._libraries, json\n"
        "print(','.join(str(cubind.library_status(n)['attempted']) for n in "
        "('driver', 'runtime', 'nvrtc', 'nvjitlink')))\n"
        "print(open('/proc/self/maps').read().count('libnvrtc') + open('/proc/self/maps').read().count('libcuda.so'))"
    )
    assert result.returncode == 0, result.stderr
    attempted, mapped = result.stdout.split()
    assert attempted == "False,False,False,False"
    assert mapped == "0"


def test_override_to_missing_file_names_it_and_does_not_fall_back(raw_module_path):
    result = in_fresh_process(
        raw_module_path,
        """
        try:
            raw.nvrtc_version()
        except RuntimeError as e:
            print(e)
        else:
            print("no error")
        """,
        {"CUBIND_NVRTC_LIBRARY": "/nonexistent/libnvrtc.so.13"},
    )
    assert result.returncode == 0, result.stderr
    assert "/nonexistent/libnvrtc.so.13" in result.stdout
    assert "CUBIND_NVRTC_LIBRARY" in result.stdout


def test_missing_entry_point_names_function_and_library(raw_module_path):
    # libnvrtc has no nvJitLinkVersion: loading it as nvJitLink succeeds, the call does not.
    nvrtc = cubind.load_library("nvrtc")["path"]
    result = in_fresh_process(
        raw_module_path,
        """
        try:
            raw.nvjitlink_version()
        except RuntimeError as e:
            print(e)
        """,
        {"CUBIND_NVJITLINK_LIBRARY": nvrtc},
    )
    assert result.returncode == 0, result.stderr
    assert "nvJitLinkVersion is not available" in result.stdout
    assert nvrtc in result.stdout


def test_per_thread_default_stream_variants_resolve(raw_module_path):
    result = in_fresh_process(
        raw_module_path,
        """
        print(raw.runtime_stream_query_default())
        """,
        {"CUBIND_PER_THREAD_DEFAULT_STREAM": "1"},
    )
    # A status code, not a RuntimeError about a missing cudaStreamQuery_ptsz.
    assert result.returncode == 0, result.stderr
    int(result.stdout.strip())


def driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.mark.skipif(driver_present(), reason="a CUDA driver is installed here")
def test_first_driver_call_without_a_driver_raises_naming_libcuda(raw_module_path):
    result = in_fresh_process(
        raw_module_path,
        """
        try:
            raw.driver_version()
        except RuntimeError as e:
            print("RuntimeError:", e)
        """,
    )
    assert result.returncode == 0, result.stderr
    assert "RuntimeError:" in result.stdout
    assert "libcuda.so.1" in result.stdout


@pytest.mark.gpu
def test_driver_version_matches_libcuda(raw):
    status, version = raw.driver_version()
    assert status == 0
    expected = ctypes.c_int()
    assert ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(expected)) == 0
    assert version == expected.value


@pytest.mark.gpu
def test_device_count_and_names_match_libcuda(raw):
    status, count = raw.device_count()
    assert status == 0
    cuda = ctypes.CDLL("libcuda.so.1")
    expected = ctypes.c_int()
    assert cuda.cuDeviceGetCount(ctypes.byref(expected)) == 0
    assert count == expected.value > 0
    for ordinal in range(count):
        dev = ctypes.c_int()
        assert cuda.cuDeviceGet(ctypes.byref(dev), ordinal) == 0
        buf = ctypes.create_string_buffer(256)
        assert cuda.cuDeviceGetName(buf, 256, dev) == 0
        assert raw.device_name(ordinal) == (0, buf.value.decode())


@pytest.mark.gpu
def test_per_thread_default_stream_on_a_gpu(raw_module_path):
    result = in_fresh_process(
        raw_module_path,
        """
        print(raw.device_count()[0], raw.runtime_stream_query_default())
        """,
        {"CUBIND_PER_THREAD_DEFAULT_STREAM": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "0"]


def test_python_m_cubind_reports_versions_and_libraries():
    result = run_python("import runpy; runpy.run_module('cubind', run_name='__main__')")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"cubind.bindings         {cubind.bindings.__version__}" in out
    nvrtc_path = cubind.load_library("nvrtc")["path"]
    assert f"from {nvrtc_path}" in out
    assert ("driver API" in out) or ("libcuda.so.1" in out)
