"""cubind.bindings.nvml without a GPU: the module imports without loading
libnvidia-ml, its enums, structs and exception classes, NVML's error where no
driver is installed, and the conversions of the Python layer (str outputs,
struct outputs with their version set, queried arrays, errors per status)
against the stand-in libnvidia-ml.so.1 of fake_nvml/.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import run_with_fake_nvml


def run_child(code, env_extra=None):
    env = dict(os.environ)
    env.pop("CUBIND_NVML_LIBRARY", None)
    env.update(env_extra or {})
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code) + "\nprint('ok')\n"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert result.stdout.strip().endswith("ok"), result.stdout
    return result


def test_import_loads_no_library():
    run_child("""
        import cubind
        from cubind.bindings import nvml
        assert cubind.library_status("nvml")["attempted"] is False, cubind.library_status("nvml")
        assert nvml.Return.ERROR_UNINITIALIZED == 1
    """)


def test_enums_and_constants():
    from cubind.bindings import nvml
    assert nvml.Return.SUCCESS == 0
    assert nvml.Return.ERROR_LIBRARY_NOT_FOUND == 12
    assert nvml.Return.ERROR_INSUFFICIENT_SIZE == 7
    assert nvml.GpuP2PCapsIndex.P2P_CAPS_INDEX_READ == 0
    assert nvml.GpuP2PStatus.P2P_STATUS_OK == 0
    assert int(nvml.GpuTopologyLevel.TOPOLOGY_HOSTBRIDGE) == 30
    assert isinstance(nvml.Return.SUCCESS, int)
    assert nvml.NVLINK_MAX_LINKS == 36
    assert nvml.MAX_GPU_UTILIZATIONS == 8
    assert nvml.GRID_LICENSE_FEATURE_MAX_COUNT == 3


def test_structs_have_snake_case_fields():
    from cubind.bindings import nvml
    m = nvml.Memory_v2()
    assert (m.version, m.total, m.free, m.used, m.reserved) == (0, 0, 0, 0, 0)
    m.total = 1 << 40
    assert m.total == 1 << 40
    p = nvml.PciInfo()
    assert p.bus_id == "" and p.pci_device_id == 0
    p.bus_id = "00000000:1A:00.0"
    assert p.bus_id == "00000000:1A:00.0"
    assert hasattr(p, "device_") and hasattr(p, "pci_sub_system_id")
    v = nvml.Value()
    v.ull_val = 2**64 - 1
    assert v.ull_val == 2**64 - 1


def test_exception_classes():
    from cubind.bindings import nvml
    assert issubclass(nvml.UninitializedError, nvml.NvmlError)
    assert issubclass(nvml.LibraryNotFoundError, nvml.NvmlError)
    assert nvml.MemoryError is nvml.NvmlMemoryError and nvml.MemoryError is not MemoryError
    assert nvml.TimeoutError is nvml.NvmlTimeoutError
    e = nvml.NvmlError(3)
    assert e.status == nvml.Return.ERROR_NOT_SUPPORTED and "ERROR_NOT_SUPPORTED" in str(e)
    assert nvml.check_status(0) == 0
    with pytest.raises(nvml.InvalidArgumentError):
        nvml.check_status(2)
    with pytest.raises(nvml.GpuIsLostError):
        nvml.check_status(int(nvml.Return.ERROR_GPU_IS_LOST))
    assert nvml.check_status_size(int(nvml.Return.ERROR_INSUFFICIENT_SIZE)) == 0
    with pytest.raises(nvml.InsufficientSizeError):
        nvml.check_status(int(nvml.Return.ERROR_INSUFFICIENT_SIZE))
    # A code no header knows still raises the base class.
    with pytest.raises(nvml.NvmlError):
        nvml.check_status(12345)


def test_no_driver_raises_library_not_found(tmp_path):
    # No libnvidia-ml where the override points: NVML's own status, naming the places tried.
    run_child(f"""
        from cubind.bindings import nvml
        try:
            nvml.init_v2()
        except nvml.LibraryNotFoundError as e:
            assert e.status == nvml.Return.ERROR_LIBRARY_NOT_FOUND, e.status
            assert "libnvidia-ml.so.1" in str(e) and "CUBIND_NVML_LIBRARY" in str(e), str(e)
        else:
            raise AssertionError("init_v2 did not raise")
    """, {"CUBIND_NVML_LIBRARY": str(tmp_path / "missing" / "libnvidia-ml.so.1")})


def test_bad_handle_argument_is_a_type_error():
    from cubind.bindings import nvml
    with pytest.raises(TypeError, match="device"):
        nvml.device_get_name("GPU 0")


PRELUDE = """
import ctypes
from cubind.bindings import nvml
import cubind
fake = ctypes.CDLL(cubind.library_status("nvml")["path"] or "libnvidia-ml.so.1")
"""


def run_fake(fake_nvml_dir, body, env_extra=None):
    return run_with_fake_nvml(fake_nvml_dir, textwrap.dedent(body), env_extra)


def test_uninitialized_raises_its_subclass(fake_nvml_dir):
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        try:
            nvml.device_get_count_v2()
        except nvml.UninitializedError as e:
            assert e.status == nvml.Return.ERROR_UNINITIALIZED
        else:
            raise AssertionError("no UninitializedError")
    """)


def test_device_queries(fake_nvml_dir):
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        assert nvml.device_get_count_v2() == 2
        h0 = nvml.device_get_handle_by_index_v2(0)
        h1 = nvml.device_get_handle_by_index_v2(1)
        assert type(h0) is int and h0 != 0 and h0 != h1
        name = nvml.device_get_name(h0)
        assert name == "NVIDIA Stand-in GPU A" and type(name) is str, repr(name)
        assert nvml.device_get_uuid(h1) == "GPU-55555555-6666-7777-8888-999999999999"
        assert nvml.device_get_index(h1) == 1
        assert nvml.device_get_handle_by_uuid("GPU-55555555-6666-7777-8888-999999999999") == h1
        assert nvml.device_get_handle_by_pci_bus_id_v2("00000000:1A:00.0") == h0
        assert nvml.system_get_driver_version() == "999.99.99"
        assert nvml.system_get_cuda_driver_version_v2() == 13050
        assert nvml.device_get_cuda_compute_capability(h0) == (9, 0)
        nvml.shutdown()
    """)


def test_struct_outputs(fake_nvml_dir):
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        h = nvml.device_get_handle_by_index_v2(0)
        # The stand-in refuses a Memory_v2 whose version is not nvmlMemory_v2.
        mem = nvml.device_get_memory_info_v2(h)
        assert isinstance(mem, nvml.Memory_v2)
        assert mem.total == 80 << 30 and mem.used == 1 << 30 and mem.reserved == 512 << 20
        assert mem.free == mem.total - mem.used - mem.reserved
        assert mem.version == (40 | (2 << 24)), hex(mem.version)
        pci = nvml.device_get_pci_info_v3(h)
        assert pci.bus_id == "00000000:1A:00.0" and pci.bus == 0x1A, (pci.bus_id, pci.bus)
        assert pci.pci_device_id == 0x233010DE
    """)


def test_p2p_and_topology(fake_nvml_dir):
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        a, b = nvml.device_get_handle_by_index_v2(0), nvml.device_get_handle_by_index_v2(1)
        assert nvml.device_get_p2p_status(a, b, nvml.GpuP2PCapsIndex.P2P_CAPS_INDEX_READ) == nvml.GpuP2PStatus.P2P_STATUS_OK
        assert nvml.device_get_p2p_status(a, b, nvml.GpuP2PCapsIndex.P2P_CAPS_INDEX_ATOMICS) == \\
            nvml.GpuP2PStatus.P2P_STATUS_NOT_SUPPORTED
        assert nvml.device_get_topology_common_ancestor(a, b) == nvml.GpuTopologyLevel.TOPOLOGY_HOSTBRIDGE
    """)


def test_queried_arrays(fake_nvml_dir):
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        a, b = nvml.device_get_handle_by_index_v2(0), nvml.device_get_handle_by_index_v2(1)
        procs = nvml.device_get_compute_running_processes_v3(a)
        assert [p.pid for p in procs] == [1000, 1001, 1002]
        assert [p.used_gpu_memory for p in procs] == [1 << 20, 2 << 20, 3 << 20]
        assert nvml.device_get_compute_running_processes_v3(b) == []
        assert list(nvml.device_get_supported_memory_clocks(a)) == [2619, 1593]
        assert list(nvml.device_get_cpu_affinity(a, 2)) == [0xF, 1]
        # A string whose length the call reads and writes.
        assert nvml.vgpu_type_get_name(7) == "GRID Stand-in-4C"
    """)


def test_errors_per_status(fake_nvml_dir):
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        h = nvml.device_get_handle_by_index_v2(0)
        try:
            nvml.device_get_serial(h)
        except nvml.NotSupportedError as e:
            assert e.status == nvml.Return.ERROR_NOT_SUPPORTED
        else:
            raise AssertionError("no NotSupportedError")
        try:
            nvml.device_get_handle_by_index_v2(7)
        except nvml.InvalidArgumentError:
            pass
        else:
            raise AssertionError("no InvalidArgumentError")
        try:
            nvml.device_get_handle_by_uuid("GPU-nope")
        except nvml.NotFoundError:
            pass
        else:
            raise AssertionError("no NotFoundError")
        # A handle the library never gave out.
        try:
            nvml.device_get_name(12345)
        except nvml.InvalidArgumentError:
            pass
        else:
            raise AssertionError("no InvalidArgumentError for a made-up handle")
    """)


def test_function_the_library_lacks(fake_nvml_dir):
    # The stand-in has no nvmlDeviceGetBoardId: the first call names the function.
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        h = nvml.device_get_handle_by_index_v2(0)
        try:
            nvml.device_get_board_id(h)
        except nvml.FunctionNotFoundError as e:
            assert "nvmlDeviceGetBoardId" in str(e), str(e)
            assert e.status == nvml.Return.ERROR_FUNCTION_NOT_FOUND
        else:
            raise AssertionError("no FunctionNotFoundError")
    """)


def test_override_names_the_library(fake_nvml_dir):
    run_fake(fake_nvml_dir, """
        import cubind
        from cubind.bindings import nvml
        nvml.init_v2()
        status = cubind.library_status("nvml")
        assert status["loaded"] and status["path"].endswith("libnvidia-ml.so.1"), status
        assert nvml.device_get_count_v2() == 1
    """, {"CUBIND_NVML_LIBRARY": os.path.join(fake_nvml_dir, "libnvidia-ml.so.1"), "FAKE_NVML_DEVICES": "1"})
