"""cubind.core as a package: its version, the cubind.bindings range it checks,
what importing it loads, and how C++ errors arrive in Python."""
import json
import subprocess
import sys
import textwrap

import pytest

import cubind.core
from cubind.core import CUDAError, NvJitLinkError, NVRTCError


def _run(code):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_version_is_its_own_semver_0x():
    parts = cubind.core.__version__.split(".")
    assert len(parts) == 3 and all(p.isdigit() for p in parts)
    assert parts[0] == "0"


def test_import_loads_no_cuda_library_and_no_numpy():
    out = _run(
        """
        import json, sys
        import cubind.core
        from cubind import _libraries
        print(json.dumps({"numpy": "numpy" in sys.modules,
                          "status": {n: _libraries.status(n) for n in _libraries.NAMES}}))
        """
    )
    seen = json.loads(out)
    assert seen["numpy"] is False
    for name, status in seen["status"].items():
        assert status["attempted"] is False, (name, status)
        assert status["loaded"] is False, (name, status)


def test_import_leaves_out_what_only_some_calls_need():
    # typing and cubind.bindings.driver come with cubind.core.typing's aliases,
    # uuid with the first IPC-enabled pool: none of them at `import cubind.core`.
    out = _run(
        """
        import json, sys
        import cubind.core
        import cubind.core.typing
        before = {n: n in sys.modules for n in ("typing", "uuid", "cubind.bindings.driver")}
        from cubind.core.typing import DevicePointerType, IsStreamType
        class Named:
            def __cuda_stream__(self):
                return (0, 0)
        print(json.dumps({"before": before,
                          "after": "cubind.bindings.driver" in sys.modules,
                          "protocol": [isinstance(Named(), IsStreamType), isinstance(object(), IsStreamType)],
                          "module": IsStreamType.__module__,
                          "alias": repr(DevicePointerType),
                          "listed": sorted(set(cubind.core.typing.__all__) - set(dir(cubind.core.typing)))}))
        """
    )
    seen = json.loads(out)
    assert seen["before"] == {"typing": False, "uuid": False, "cubind.bindings.driver": False}
    assert seen["after"] is True
    assert seen["protocol"] == [True, False]
    assert seen["module"] == "cubind.core.typing"
    assert "CUdeviceptr" in seen["alias"] and "int" in seen["alias"]
    assert seen["listed"] == []


def test_what_some_programs_use_is_imported_at_its_first_use():
    # Graphs, tensor maps and strided views, managed and virtual memory, the
    # device attribute table, textures and NVML's system view load when a program first names
    # them, each name then the same object as its module's (a subpackage's
    # name, the subpackage).
    out = _run(
        """
        import json, sys
        import cubind.core
        lazy = ["cubind.core._graph._graph_builder", "cubind.core._graph._graph_definition", "cubind.core.graph",
                "cubind.core._tensor_map", "cubind.core._memoryview", "cubind.core._memory._managed",
                "cubind.core._memory._virtual_memory", "cubind.core._memory._copy_batch",
                "cubind.core._device_properties", "cubind.core._memory_options", "cubind.core.typing",
                "cubind.core._graphics", "cubind.core.checkpoint",
                "cubind.core.texture", "cubind.core.texture._array", "cubind.core.texture._mipmapped_array",
                "cubind.core.texture._texture", "cubind.core.texture._surface", "cubind.core.texture._options",
                "cubind.core.system", "cubind.core.system._device", "cubind.core.system._system",
                "cubind.core.system._system_events", "cubind.core.system.typing", "cubind.bindings.nvml"]
        loaded = [m for m in lazy if m in sys.modules]
        names = sorted(cubind.core._LAZY)
        same = [n for n in names
                if getattr(cubind.core, n) is not (sys.modules[cubind.core._LAZY[n]]
                                                  if cubind.core._LAZY[n] == "cubind.core." + n
                                                  else getattr(sys.modules[cubind.core._LAZY[n]], n))]
        star = {}
        exec("from cubind.core import *", star)
        print(json.dumps({"loaded": loaded, "same": same, "missing": sorted(set(cubind.core.__all__) - set(star)),
                          "listed": sorted(set(names) - set(dir(cubind.core)))}))
        """
    )
    seen = json.loads(out)
    assert seen == {"loaded": [], "same": [], "missing": [], "listed": []}


def test_a_name_cubind_core_lacks_is_an_attribute_error():
    out = _run(
        """
        import cubind.core
        try:
            cubind.core.NoSuchThing
        except AttributeError as error:
            print(error)
        """
    )
    assert "no attribute 'NoSuchThing'" in out


def test_typing_names_not_there_are_attribute_errors():
    import cubind.core.typing as typing_module

    with pytest.raises(AttributeError, match="has no attribute 'NoSuchType'"):
        typing_module.NoSuchType  # noqa: B018


def test_a_bindings_version_out_of_range_is_a_clear_import_error():
    out = _run(
        """
        import cubind.bindings
        cubind.bindings.__version__ = "12.9.0"
        try:
            import cubind.core
        except ImportError as error:
            print("ImportError:", error)
        """
    )
    assert "ImportError:" in out
    assert "cubind.bindings 12.9.0" in out and ">= 13.0" in out


def test_exception_classes_have_cuda_core_bases():
    # cuda.core 1.2: CUDAError(Exception), NVRTCError(CUDAError).
    assert CUDAError.__bases__ == (Exception,)
    assert issubclass(NVRTCError, CUDAError)
    assert issubclass(NvJitLinkError, CUDAError)


def test_public_names_are_exported():
    for name in cubind.core.__all__:
        assert hasattr(cubind.core, name), name


def test_a_cpp_system_error_becomes_os_error_with_its_message(tmp_path):
    with pytest.raises(OSError, match="cannot open"):
        cubind.core.ObjectCode.from_cubin(str(tmp_path / "missing.cubin"))


def test_a_cpp_nvrtc_error_becomes_nvrtc_error_with_status():
    from cubind.core import Program, ProgramOptions

    # An option NVRTC rejects: a misuse, raised by the C++ core as NvrtcError.
    program = Program("__global__ void k() {}", "c++", ProgramOptions(arch="sm_90", std="c++1"))
    with pytest.raises(NVRTCError) as caught:
        program.compile("ptx")
    assert caught.value.status == 5  # NVRTC_ERROR_INVALID_OPTION
    assert caught.value.api_function == "nvrtcCompileProgram"
    assert caught.value.error_name == "NVRTC_ERROR_INVALID_OPTION"


def _has_driver():
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@pytest.mark.skipif(_has_driver(), reason="checks the error where no driver is installed")
def test_device_without_a_driver_is_a_clear_error():
    with pytest.raises(RuntimeError, match="libcuda"):
        cubind.core.Device()
