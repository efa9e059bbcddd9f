"""A driver or library older than the headers cubind was generated from.

cubind.bindings is generated from the pinned CUDA 13.5 headers and runs on every
13.x driver and library: what an older one has works, and a function it lacks
raises on its first call, naming the function, the CUDA release that introduced
it and the driver's version (or the library's file); `python -m cubind` and
cubind.library_status() list those functions. Here against the stand-in driver
(fake_driver/, which reports CUDA 13.0) and stand-ins of the 13.0 NVRTC,
nvJitLink and runtime (standin_13_0/); the GPU-marked test does it on the
machine's real driver when that is older than the headers.

Each case runs in a child interpreter: a library loads once per process.
"""
import json
import os
import subprocess
import sys

import pytest
from test_loader_faults import _driver_dir, _with_driver, child, compile_c

HERE = os.path.dirname(os.path.abspath(__file__))
STANDINS = os.path.join(HERE, "standin_13_0")


def _library(tmp_path, source, soname):
    """The stand-in built as <soname>.0.0, and a link <soname> to it (as a toolkit installs them)."""
    real = compile_c(os.path.join(STANDINS, source), tmp_path / (soname + ".0.0"), f"-Wl,-soname,{soname}")
    link = tmp_path / soname
    link.symlink_to(real)
    return str(link), real


def test_the_bindings_say_which_cuda_they_bind():
    import cubind.bindings

    major_minor = ".".join(cubind.bindings.__version__.split(".")[:2])
    assert major_minor == cubind.bindings._cuda_version
    assert tuple(int(x) for x in major_minor.split(".")) >= (13, 5)


# ---------------------------------------------------------------------------
# The driver (the stand-in reports CUDA 13.0)

def test_driver_function_newer_than_the_driver_names_its_cuda_version(tmp_path):
    folder = _driver_dir(tmp_path)
    child("""
        from cubind.bindings import driver
        assert driver.cuDriverGetVersion() == (driver.CUresult.CUDA_SUCCESS, 13000)
        # CUDA 13.5: the stand-in has no entry point of that name.
        got = message_of(lambda: driver.cuTensorMapSetAllocationClass(
            driver.CUtensorMap(), driver.CUtensorMapAllocClass(0)))
        assert got.startswith("cuTensorMapSetAllocationClass is not available in the CUDA driver loaded from "), got
        assert got.endswith("libcuda.so.1 (driver API 13.0): it was introduced in CUDA 13.5; "
                            "install a newer NVIDIA driver"), got
        # CUDA 13.2, the same way; the functions of 13.0 keep working after both.
        got = message_of(lambda: driver.cuFuncGetParamCount(driver.CUfunction(0)))
        assert "cuFuncGetParamCount is not available" in got and "introduced in CUDA 13.2" in got, got
        assert driver.cuDeviceGetCount() == (driver.CUresult.CUDA_SUCCESS, 1)
        import cubind
        missing = dict(cubind.library_status("driver")["missing"])
        assert missing["cuTensorMapSetAllocationClass"] == "13.5", missing
        assert missing["cuFuncGetParamCount"] == "13.2", missing
        assert "cuDeviceGetCount" not in missing
    """, env=_with_driver(folder))


def test_a_newer_abi_of_a_function_is_not_asked_for_by_its_older_name():
    # cuGraphAddNode (#defined to cuGraphAddNode_v2) and cuGraphAddNode_v3 have PFN
    # typedefs of the same parameters (CUDA 12.3 and 13.4): each is asked for with
    # its own version, so an older declaration never gets the newer ABI.
    from cubind.bindings import driver  # noqa: F401  (the table is in the raw library)
    root = os.path.dirname(os.path.dirname(HERE))
    with open(os.path.join(root, "bindings", "src", "driver.cpp"), encoding="utf-8") as f:
        table = f.read()
    assert '{"cuGraphAddNode", "cuGraphAddNode", "12.3", 12030, false}' in table
    assert '{"cuGraphAddNode_v3", "cuGraphAddNode", "13.4", 13040, false}' in table
    assert '{"cuGraphNodeSetParams", "cuGraphNodeSetParams", "12.2", 12020, false}' in table
    assert '{"cuGraphNodeSetParams_v2", "cuGraphNodeSetParams", "13.4", 13040, false}' in table


def test_python_m_cubind_lists_what_the_driver_lacks(tmp_path):
    folder = _driver_dir(tmp_path)
    env = {k: v for k, v in os.environ.items()}
    env.update(_with_driver(folder))
    result = subprocess.run([sys.executable, "-m", "cubind", "--json"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    missing = {m["function"]: m["introduced"] for m in json.loads(result.stdout)["driver"]["missing"]}
    assert missing["cuTensorMapSetAllocationClass"] == "13.5"
    assert missing["cuStreamGetDevResource"] == "13.1"
    text = subprocess.run([sys.executable, "-m", "cubind"], capture_output=True, text=True, env=env,
                          timeout=120).stdout
    assert "driver lacks" in text and "CUDA 13.5: " in text and "cuTensorMapSetAllocationClass" in text, text



def test_a_missing_function_of_no_recorded_release_is_listed_as_newer_than_the_library(capsys):
    # NVML's functions have no CUDA release in scripts/cuda_api_diff.py's table.
    from cubind.__main__ import _lacks
    _lacks("nvml", [{"function": "nvmlDeviceGetGpuUptime_v1", "introduced": None},
                    {"function": "cuStreamGetDevResource", "introduced": "13.1"}])
    text = capsys.readouterr().out
    assert "CUDA 13.1: cuStreamGetDevResource" in text, text
    assert "newer than this library (release not recorded): nvmlDeviceGetGpuUptime_v1" in text, text
    assert "CUDA ?" not in text

# ---------------------------------------------------------------------------
# NVRTC, nvJitLink and the runtime of CUDA 13.0

def test_nvrtc_function_newer_than_the_library(tmp_path):
    link, real = _library(tmp_path, "nvrtc_13_0.c", "libnvrtc.so.13")
    child(f"""
        from cubind.bindings import nvrtc
        import cubind
        assert nvrtc.nvrtcVersion() == (nvrtc.nvrtcResult.NVRTC_SUCCESS, 13, 0)
        got = message_of(lambda: nvrtc.nvrtcGetTileIRSize(0))
        assert got == ("nvrtcGetTileIRSize is not available in NVRTC loaded from {link}: it was introduced in "
                       "CUDA 13.2 (the library loaded is {real}); install a newer NVRTC or point "
                       "CUBIND_NVRTC_LIBRARY at one"), got
        assert nvrtc.nvrtcGetNumSupportedArchs() == (nvrtc.nvrtcResult.NVRTC_SUCCESS, 1)
        missing = dict(cubind.library_status("nvrtc")["missing"])
        assert missing["nvrtcGetTileIR"] == "13.2" and missing["nvrtcInstallBundledHeaders"] == "13.3", missing
    """, env={"CUBIND_NVRTC_LIBRARY": link})


def test_nvjitlink_older_library_resolves_its_own_versioned_symbols(tmp_path):
    link, real = _library(tmp_path, "nvjitlink_13_0.c", "libnvJitLink.so.13")
    child(f"""
        from cubind.bindings import nvjitlink
        import cubind
        assert nvjitlink.version() == (13, 0)
        # The 13.5 header's __nvJitLinkCreate_13_5 is absent: the 13.0 symbol serves.
        handle = nvjitlink.create(0, [])
        assert handle != 0
        nvjitlink.destroy(handle)
        got = message_of(lambda: nvjitlink.get_linked_ltoir_size(handle))
        assert got.startswith("nvJitLinkGetLinkedLTOIRSize is not available in nvJitLink loaded from {link}: "
                              "it was introduced in CUDA 13.3 (the library loaded is {real})"), got
        missing = dict(cubind.library_status("nvjitlink")["missing"])
        assert missing == {{"nvJitLinkGetLinkedLTOIRSize": "13.3", "nvJitLinkGetLinkedLTOIR": "13.3",
                            **{{k: v for k, v in missing.items() if v is None}}}}, missing
        assert "nvJitLinkCreate" not in missing and "nvJitLinkDestroy" not in missing
    """, env={"CUBIND_NVJITLINK_LIBRARY": link})


def test_runtime_function_newer_than_the_library(tmp_path):
    link, real = _library(tmp_path, "cudart_13_0.c", "libcudart.so.13")
    child(f"""
        from cubind.bindings import runtime
        assert runtime.cudaRuntimeGetVersion() == (runtime.cudaError_t.cudaSuccess, 13000)
        got = message_of(lambda: runtime.cudaExecutionCtxGetId(0))
        assert got.startswith("cudaExecutionCtxGetId is not available in the CUDA runtime loaded from {link}: "
                              "it was introduced in CUDA 13.1"), got
    """, env={"CUBIND_CUDART_LIBRARY": link})


# ---------------------------------------------------------------------------
# The machine's driver

@pytest.mark.gpu
def test_real_driver_older_than_the_headers_raises_for_a_newer_function():
    from cubind.bindings import driver
    import cubind.bindings

    err, version = driver.cuDriverGetVersion()
    assert err == driver.CUresult.CUDA_SUCCESS
    headers = tuple(int(x) for x in cubind.bindings._cuda_version.split("."))
    if (version // 1000, version % 1000 // 10) >= (13, 5):
        pytest.skip(f"the driver ({version}) is as new as the CUDA {cubind.bindings._cuda_version} headers")
    assert driver.cuInit(0) == (driver.CUresult.CUDA_SUCCESS,)
    with pytest.raises(RuntimeError) as info:
        driver.cuTensorMapSetAllocationClass(driver.CUtensorMap(), driver.CUtensorMapAllocClass(0))
    text = str(info.value)
    shown = f"{version // 1000}.{version % 1000 // 10}"
    assert text.startswith("cuTensorMapSetAllocationClass is not available in the CUDA driver"), text
    assert f"(driver API {shown})" in text and "introduced in CUDA 13.5" in text, text
    # What the driver has still works.
    err, count = driver.cuDeviceGetCount()
    assert err == driver.CUresult.CUDA_SUCCESS and count >= 1
    assert headers >= (13, 5)


@pytest.mark.gpu
@pytest.mark.parametrize("library, function, call", [
    ("nvrtc", "nvrtcGetTileIRSize", lambda m: m.nvrtcGetTileIRSize(0)),
    ("nvjitlink", "nvJitLinkGetLinkedLTOIRSize", lambda m: m.get_linked_ltoir_size(0)),
    ("runtime", "cudaExecutionCtxGetId", lambda m: m.cudaExecutionCtxGetId(0)),
])
def test_real_library_and_a_function_newer_than_13_0(library, function, call):
    """One post-13.0 function of each library the machine has: where the library
    loaded is older than the function, the call raises the clear error naming the
    function and the release that introduced it; where it is as new, the call
    reaches the library (a status or the library's own error for the null handle)."""
    import importlib

    import cubind

    module = importlib.import_module("cubind.bindings." + library)
    try:
        cubind.load_library(library)
    except RuntimeError as exc:
        pytest.skip(f"no {library} library on this machine: {exc}")
    missing = dict(cubind.library_status(library)["missing"])
    if function in missing:
        with pytest.raises(RuntimeError) as info:
            call(module)
        text = str(info.value)
        assert text.startswith(f"{function} is not available in "), text
        assert f"introduced in CUDA {missing[function]}" in text, text
    else:
        try:
            call(module)
        except RuntimeError as exc:
            assert "is not available in" not in str(exc), str(exc)
        except Exception:
            pass  # nvJitLink raises its own error for the null handle
