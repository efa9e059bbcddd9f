"""cubind.bindings.nvml without a GPU: the module imports without loading
libnvidia-ml, its enums, structs and exception classes, NVML's error where no
driver is installed, and the conversions of the Python layer (str outputs,
struct outputs with their version set, queried arrays, errors per status)
against the stand-in libnvidia-ml.so.1 of fake_nvml/; and the module and its
structs without NumPy (the NumPy layer itself: test_nvml_numpy.py).
"""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import STAND_IN_CHECKS, run_with_fake_nvml


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


def run_checked(fake_nvml_dir, body):
    """run_fake with the stand-in loaded as `fake` and conftest's raises() and fake_int()."""
    return run_with_fake_nvml(fake_nvml_dir, PRELUDE + STAND_IN_CHECKS + textwrap.dedent(body))


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
        # The count query succeeds with the count set (no INSUFFICIENT_SIZE):
        # the binding asks again with an array of that many handles.
        assert nvml.device_get_topology_nearest_gpus(a, nvml.GpuTopologyLevel.TOPOLOGY_SYSTEM) == [b]
        assert nvml.device_get_topology_nearest_gpus(b, nvml.GpuTopologyLevel.TOPOLOGY_HOSTBRIDGE) == [a]
        assert nvml.device_get_topology_nearest_gpus(a, nvml.GpuTopologyLevel.TOPOLOGY_INTERNAL) == []
    """)


def test_encoder_stats_are_three_scalars(fake_nvml_dir):
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        a, b = nvml.device_get_handle_by_index_v2(0), nvml.device_get_handle_by_index_v2(1)
        assert nvml.device_get_encoder_stats(a) == (2, 60, 1500)
        assert nvml.device_get_encoder_stats(b) == (0, 0, 0)
    """)


def test_arrays_of_a_profile_and_of_process_samples(fake_nvml_dir):
    # Each returns its list alone, as cuda.bindings.nvml does: placements
    # asked for their count first (NVML answers that with success), instances
    # into an array with room for all of them, samples asked again while the
    # array is too small.
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        a, b = nvml.device_get_handle_by_index_v2(0), nvml.device_get_handle_by_index_v2(1)
        placements = nvml.device_get_gpu_instance_possible_placements_v2(a, 1)
        assert [(p.start, p.size_) for p in placements] == [(1, 4), (5, 4)]
        instances = nvml.device_get_gpu_instances(a, 1)
        assert instances == [0x1000, 0x1010]
        compute = nvml.gpu_instance_get_compute_instance_possible_placements(instances[0], 2)
        assert [(p.start, p.size_) for p in compute] == [(0, 3), (1, 3), (2, 3)]
        assert nvml.gpu_instance_get_compute_instances(instances[0], 2) == [0x2000, 0x2010]
        samples = nvml.device_get_process_utilization(a, 100)
        assert [(s.pid, s.time_stamp, s.sm_util) for s in samples] == [(2000, 101, 10), (2001, 102, 20)]
        assert nvml.device_get_process_utilization(b, 0) == []
    """)


def test_vgpu_metadata_is_the_struct_alone(fake_nvml_dir):
    # The buffer size goes in as the struct's size: NVML fills the struct,
    # which comes back alone, as cuda.bindings.nvml returns it.
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        b = nvml.device_get_handle_by_index_v2(1)
        pgpu = nvml.device_get_vgpu_metadata(b)
        assert isinstance(pgpu, nvml.VgpuPgpuMetadata), type(pgpu)
        assert (pgpu.version, pgpu.revision, pgpu.host_driver_version) == (1, 3, "580.95.05")
        vgpu = nvml.vgpu_instance_get_metadata(7)
        assert isinstance(vgpu, nvml.VgpuMetadata), type(vgpu)
        assert (vgpu.guest_vgpu_version, vgpu.guest_driver_version) == (7, "580.95.05")
    """)


def test_lists_structs_and_tuples_agree_with_cuda_bindings(fake_nvml_dir):
    # The same calls through both packages on the stand-in NVML give the same
    # values: each list item by item, each struct by its fields.
    pytest.importorskip("cuda.bindings.nvml")
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml as ours
        from cuda.bindings import nvml as theirs

        def values(mod):
            mod.init_v2()
            a, b = mod.device_get_handle_by_index_v2(0), mod.device_get_handle_by_index_v2(1)
            return [
                [(p.start, p.size_) for p in mod.device_get_gpu_instance_possible_placements_v2(a, 1)],
                [int(h) for h in mod.device_get_gpu_instances(a, 1)],
                [(p.start, p.size_) for p in mod.gpu_instance_get_compute_instance_possible_placements(0x1000, 2)],
                [int(h) for h in mod.gpu_instance_get_compute_instances(0x1000, 2)],
                [(s.pid, s.time_stamp, s.sm_util) for s in mod.device_get_process_utilization(a, 100)],
                mod.device_get_vgpu_metadata(b).host_driver_version,
                mod.vgpu_instance_get_metadata(7).guest_vgpu_version,
                tuple(mod.device_get_encoder_stats(a)),
                [int(h) == int(b) for h in mod.device_get_topology_nearest_gpus(a, 50)],
            ]

        mine, reference = values(ours), values(theirs)
        assert mine == reference, (mine, reference)
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


def test_versioned_structs_carry_the_header_version(fake_nvml_dir):
    # The stand-in, as NVML, answers ERROR_ARGUMENT_VERSION_MISMATCH to a struct whose
    # version field is not nvml.h's NVML_STRUCT_VERSION of it (0 included).
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        h = nvml.device_get_handle_by_index_v2(1)
        pci = nvml.device_get_pci_info_ext(h)
        assert type(pci) is nvml.PciInfoExt_v1
        assert pci.version == (64 | (1 << 24)), hex(pci.version)
        assert pci.bus_id == "00000000:2B:00.0" and (pci.base_class, pci.sub_class) == (3, 2)
    """)


def test_struct_fields_as_arguments(fake_nvml_dir):
    run_checked(fake_nvml_dir, """
        nvml.init_v2()
        a, b = nvml.device_get_handle_by_index_v2(0), nvml.device_get_handle_by_index_v2(1)
        branch = nvml.system_get_driver_branch()
        assert branch == "r999_00" and type(branch) is str, repr(branch)
        assert fake_int("fake_nvml_last_length", ctypes.c_uint) == 80  # NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
        gpu = nvml.TemperatureSensors.TEMPERATURE_GPU
        assert nvml.device_get_temperature_v(a, gpu) == 41 and nvml.device_get_temperature_v(b, 0) == 42
        raises(nvml.InvalidArgumentError, "", nvml.device_get_temperature_v, a, 1)
        raises(TypeError, "sensorType", nvml.device_get_temperature_v, a, "gpu")
        assert nvml.device_get_fan_speed_rpm(a, 0) == 1200
        raises(OverflowError, "fan", nvml.device_get_fan_speed_rpm, a, -1)
        offsets = nvml.device_get_clock_offsets(a, nvml.ClockType.CLOCK_SM, nvml.Pstates.PSTATE_2)
        assert isinstance(offsets, nvml.ClockOffset_v1)
        assert (offsets.type, offsets.pstate) == (nvml.ClockType.CLOCK_SM, nvml.Pstates.PSTATE_2)
        assert (offsets.clock_offset_m_hz, offsets.min_clock_offset_m_hz, offsets.max_clock_offset_m_hz) == (10, -100, 250)
        raises(TypeError, "clock_type", nvml.device_get_clock_offsets, a, None, 0)
        assert nvml.device_set_temperature_threshold(a, nvml.TemperatureThresholds.TEMPERATURE_THRESHOLD_SHUTDOWN, 85) is None
        assert fake_int("fake_nvml_last_int") == 85
        raises(TypeError, "temp", nvml.device_set_temperature_threshold, a, 0, "85")
        assert nvml.device_set_power_management_limit_v2(a, 1, 300000) is None
        assert (fake_int("fake_nvml_last_int"), fake_int("fake_nvml_last_length", ctypes.c_uint)) == (1, 300000)
        # Room for NVML_MAX_GPU_PERF_PSTATES, padded by NVML with PSTATE_UNKNOWN.
        states = nvml.device_get_supported_performance_states(a)
        assert fake_int("fake_nvml_last_length", ctypes.c_uint) == 16 * 4
        assert states[:3] == [0, 2, 8] and states[3:] == [nvml.Pstates.PSTATE_UNKNOWN] * 13, states
    """)


def test_field_values(fake_nvml_dir):
    run_checked(fake_nvml_dir, """
        nvml.init_v2()
        h = nvml.device_get_handle_by_index_v2(0)
        UINT, DOUBLE = nvml.ValueType.UNSIGNED_INT, nvml.ValueType.DOUBLE
        values = nvml.device_get_field_values(h, [91, (91, 2), 1, 5])
        assert [type(v) for v in values] == [nvml.FieldValue] * 4
        assert [(v.field_id, v.scope_id) for v in values] == [(91, 0), (91, 2), (1, 0), (5, 0)]
        assert [v.value_type for v in values[:3]] == [UINT, UINT, DOUBLE]
        assert (values[0].value.ui_val, values[1].value.ui_val, values[2].value.d_val) == (4, 6, 1.5)
        assert [v.nvml_return for v in values] == [0, 0, 0, nvml.Return.ERROR_NOT_SUPPORTED]
        assert values[0].latency_usec == 7 and values[3].timestamp == 1700000000000003
        # FieldValue objects are read, and filled in place too.
        given = nvml.FieldValue(field_id=91, scope_id=1)
        out = nvml.device_get_field_values(h, [given, 1])
        assert given.value.ui_val == 5 and out[0].value.ui_val == 5 and out[1].value.d_val == 1.5
        assert nvml.device_get_field_values(h, given)[0].value.ui_val == 5
        assert nvml.device_get_field_values(h, []) == []
        # FieldValue(3) is an array of three, as in cuda.bindings.nvml: filled in place.
        array = nvml.FieldValue(3)
        array.field_id = [91, 1, 5]
        out = nvml.device_get_field_values(h, array)
        got = (len(out), array[0].value.ui_val, array[1].value.d_val, array.nvml_return.tolist())
        assert got == (3, 4, 1.5, [0, 0, int(nvml.Return.ERROR_NOT_SUPPORTED)]), got
        # Another struct class still refuses a count where its address goes.
        raises(ValueError, "not a count", nvml.PciInfo, 3)
        raises(ValueError, "item 1 is 'x'", nvml.device_get_field_values, h, [91, "x"])
        raises(ValueError, "item 0 is (1, 2, 3)", nvml.device_get_field_values, h, [(1, 2, 3)])
        raises(TypeError, "values", nvml.device_get_field_values, h, 91)
        raises(OverflowError, "values", nvml.device_get_field_values, h, [-1])
        assert nvml.device_clear_field_values(h, [91, (1, 0)])[1].nvml_return == 0
        cleared = (ctypes.c_uint * 8).in_dll(fake, "fake_nvml_cleared")
        assert fake_int("fake_nvml_last_length", ctypes.c_uint) == 2 and list(cleared[:2]) == [91, 1]
    """)


def test_system_events(fake_nvml_dir):
    run_checked(fake_nvml_dir, """
        nvml.init_v2()
        event_set = nvml.system_event_set_create()
        assert nvml.system_register_events(3, event_set) is None
        assert ctypes.c_ulonglong.in_dll(fake, "fake_nvml_last_mask").value == 3
        events = nvml.system_event_set_wait(event_set, 250, 4)
        assert fake_int("fake_nvml_last_length", ctypes.c_uint) == 4 and fake_int("fake_nvml_last_int") == 250
        assert len(events) == 1 and isinstance(events[0], nvml.SystemEventData_v1)
        assert (events[0].event_type, events[0].gpu_id) == (2, 0x1A00)
        raises(nvml.InvalidArgumentError, "", nvml.system_event_set_wait, event_set, 0, 0)
        raises(nvml.InvalidArgumentError, "", nvml.system_event_set_free, event_set + 8)
        assert nvml.system_event_set_free(event_set) is None
    """)


def test_struct_array_asked_for_by_size(fake_nvml_dir):
    # The count field is asked with 0 first, then with room for what NVML reported.
    run_checked(fake_nvml_dir, """
        nvml.init_v2()
        a, b = nvml.device_get_handle_by_index_v2(0), nvml.device_get_handle_by_index_v2(1)
        details = nvml.device_get_running_process_detail_list(a, nvml.ProcessMode.COMPUTE)
        assert len(details.proc_array) == 2 and details.mode == 0
        assert [(p.pid, p.used_gpu_memory) for p in details.proc_array] == [(2000, 2 << 20), (2001, 4 << 20)]
        empty = nvml.device_get_running_process_detail_list(b, 0)
        assert empty.proc_array == []
        raises(nvml.InvalidArgumentError, "", nvml.device_get_running_process_detail_list, a, 7)
    """)


def test_placement_ids_come_back_in_the_struct(fake_nvml_dir):
    # As cuda.bindings.nvml: (device, vgpu_type_id, mode), the ids asked for by count.
    run_checked(fake_nvml_dir, """
        nvml.init_v2()
        a, b = nvml.device_get_handle_by_index_v2(0), nvml.device_get_handle_by_index_v2(1)
        got = nvml.device_get_vgpu_type_creatable_placements(a, 5, 1)
        assert list(got.placement_ids) == [1, 3, 5] and got.placement_size == 2 and got.mode == 1
        assert nvml.device_get_vgpu_type_creatable_placements(b, 5, 0).placement_ids == []
        raises(nvml.InvalidArgumentError, "", nvml.device_get_vgpu_type_creatable_placements, a, 5, 7)
    """)


def test_prm_register_access_takes_bytes_and_returns_status_and_bytes(fake_nvml_dir):
    # As cuda.bindings.nvml: the TLV input as bytes, dataSize its length; the
    # stand-in reverses it into outData and reports 0x40 + its length as status.
    run_checked(fake_nvml_dir, """
        nvml.init_v2()
        d = nvml.device_get_handle_by_index_v2(0)
        status, out = nvml.device_read_write_prm_v1(d, b"\\x01\\x02\\x03")
        assert (status, out) == (0x43, b"\\x03\\x02\\x01"), (status, out)
        assert nvml.device_read_write_prm_v1(d, b"") == (0x40, b"")
        full = bytes(range(200)) + bytes(range(200)) + bytes(96)
        assert nvml.device_read_write_prm_v1(d, full) == (0x40 + 496, full[::-1])
        raises(ValueError, "in_data: at most 496 bytes, got 497", nvml.device_read_write_prm_v1, d, full + b"x")
        raises(TypeError, "in_data: expected bytes or str, got int", nvml.device_read_write_prm_v1, d, 5)
        raises(nvml.InvalidArgumentError, "", nvml.device_read_write_prm_v1, 0, b"x")
    """)


def test_prm_counters_fill_the_callers_array_in_place(fake_nvml_dir):
    # As cuda.bindings.nvml: the PRMCounter_v1 array given comes back, filled;
    # the stand-in's value is 10 * id + port, and id 0 is NOT_SUPPORTED.
    run_checked(fake_nvml_dir, """
        nvml.init_v2()
        d = nvml.device_get_handle_by_index_v2(0)
        c = nvml.PRMCounter_v1(3)
        c.counter_id = [0, 101, 1001]
        c[2].in_data.local_port = 7
        assert nvml.device_read_prm_counters_v1(d, c) is c
        assert list(c.counter_value.status) == [nvml.Return.ERROR_NOT_SUPPORTED, 0, 0]
        assert c[1].counter_value.output_type == nvml.ValueType.UNSIGNED_LONG_LONG
        assert [c[i].counter_value.output_value.ull_val for i in (1, 2)] == [1010, 10017]
        one = nvml.PRMCounter_v1(counter_id=5)
        assert nvml.device_read_prm_counters_v1(d, one).counter_value.output_value.ull_val == 50
        assert len(nvml.device_read_prm_counters_v1(d, nvml.PRMCounter_v1(0))) == 0
        raises(TypeError, "counters: expected PRMCounter_v1, got list", nvml.device_read_prm_counters_v1, d, [c])
        frozen = nvml.PRMCounter_v1.from_ptr(c.ptr, 3, readonly=True)
        raises(ValueError, "counters: the PRMCounter_v1 is read-only", nvml.device_read_prm_counters_v1, d, frozen)
    """)


def test_import_and_fields_work_without_numpy():
    code = textwrap.dedent("""
        import sys

        class NoNumpy:
            def find_spec(self, name, path=None, target=None):
                if name == "numpy" or name.startswith("numpy."):
                    raise ImportError("numpy is blocked")

        sys.meta_path.insert(0, NoNumpy())
        from cubind.bindings import nvml
        assert "numpy" not in sys.modules
        p = nvml.PciInfo()
        p.domain = 3
        assert p.domain == 3 and p.ptr != 0
        copy = nvml.PciInfo.from_ptr(p.ptr)
        assert copy.domain == 3
        assert nvml.PciInfo.from_buffer(bytearray(68)).domain == 0
        assert len(nvml.FieldValue(2)) == 2
        assert "pci_info_dtype" in dir(nvml)
        try:
            nvml.pci_info_dtype
        except ImportError as e:
            assert "NumPy" in str(e), e
        else:
            raise AssertionError("no ImportError")
        print("ok")
    """)
    run_child(code.replace('print("ok")\n', ""))


def test_enums_from_define_groups():
    # Built from nvml.h's groups of #defines, as cuda.bindings.nvml builds them.
    from cubind.bindings import nvml
    assert type(nvml.FieldId) is type(nvml.Return)
    assert nvml.FieldId.DEV_ECC_CURRENT == 1 and isinstance(nvml.FieldId.DEV_ECC_CURRENT, int)
    assert nvml.FieldId(1) is nvml.FieldId.DEV_ECC_CURRENT and nvml.FieldId(1).name == "DEV_ECC_CURRENT"
    assert "MAX" not in nvml.FieldId.__members__
    # CamelCase constants in UPPER_SNAKE; a member named from another constant.
    assert nvml.EventType.PSTATE == 4 and nvml.EventType.SINGLE_BIT_ECC_ERROR == 1
    assert nvml.EventType.MIG_CONFIG_CHANGE == 0x100 and "ALL" not in nvml.EventType.__members__
    # The deprecated throttle names of nvml.h are left out; those it has no other name for stay.
    reasons = nvml.ClocksEventReasons.__members__
    assert reasons["EVENT_REASON_GPU_IDLE"] == 1 and reasons["THROTTLE_REASON_HW_SLOWDOWN"] == 8
    assert "THROTTLE_REASON_GPU_IDLE" not in reasons and "EVENT_REASON_ALL" not in reasons
    assert nvml.FanControlPolicy.TEMPERATURE_CONTINUOUS_SW == 0 and nvml.FanControlPolicy.MANUAL == 1
    assert nvml.NvlinkPowerState.LOW_SPEED == 1 and "LOW" not in nvml.NvlinkPowerState.__members__
    assert nvml.PcieLinkMaxSpeed.SPEED_2500MBPS == 1 and nvml.GpuInstanceProfile.PROFILE_1_SLICE == 0
    assert nvml.PcieAtomicsCap.MAX == 7 and nvml.VgpuPgpu.__members__.keys() == {"HETEROGENEOUS_MODE",
                                                                               "HOMOGENEOUS_MODE"}
    # An unsigned constant keeps its value; an enum of the header by its short names.
    assert nvml.RUSD.POLL_ALL == 2**64 - 1 and nvml.DeviceArch.UNKNOWN == 0xFFFFFFFF
    assert nvml.EncoderQuery.H264 == 0 and "ENCODER_QUERY_H264" not in nvml.EncoderQuery.__members__
    assert nvml.NvlinkLowPowerThreshold.DEFAULT == nvml.NvlinkLowPowerThreshold.RESET == 0xFFFFFFFF


def test_enum_member_names():
    from cubind.bindings import nvml
    # Members named after their enum (NVML_CLOCK_ID_*) go by the short name only...
    assert nvml.ClockId.CURRENT == 0 and "CLOCK_ID_CURRENT" not in nvml.ClockId.__members__
    assert nvml.ClockId(0).name == "CURRENT"
    assert nvml.CoolerTarget.GPU == 2 and "THERMAL_COOLER_TARGET_GPU" not in nvml.CoolerTarget.__members__
    # ...others by both (NVML_P2P_STATUS_OK of GpuP2PStatus).
    assert nvml.GpuP2PStatus.P2P_STATUS_OK is nvml.GpuP2PStatus.OK
    # A prefix whose rest would begin with a digit is cut back a word, or dropped.
    assert nvml.NvlinkVersion.VERSION_1_0 is nvml.NvlinkVersion.NVLINK_VERSION_1_0
    assert "INVALID" not in nvml.NvlinkVersion.__members__
    assert nvml.Pstates.PSTATE_0 == 0 and "UNKNOWN" not in nvml.Pstates.__members__
    # The names cuda.bindings.nvml adds by hand.
    assert nvml.CoolerTarget.THERMAL_GPU is nvml.CoolerTarget.GPU
    assert nvml.EccCounterType.COUNT is nvml.EccCounterType.ECC_COUNTER_TYPE_COUNT
    assert nvml.EventDataType.EVENT is nvml.EventDataType.NVML_EVENT


def test_struct_classes_named_after_their_typedef():
    # typedef struct {...} nvmlPciInfoExt_v1_t: the class is PciInfoExt_v1, as in cuda.bindings.nvml.
    from cubind.bindings import nvml
    assert nvml.PciInfoExt_v1().version == 0
    assert nvml.VgpuTypeIdInfo_v1 and nvml.NvLinkInfo_v2 and nvml.GpuFabricInfo_v3
    for old in ("PciInfoExt", "VgpuTypeIdInfo", "NvLinkInfo", "GpuFabricInfoV"):
        assert not hasattr(nvml, old), old
    # A tagged struct keeps its unversioned typedef's name (struct nvmlProcessInfo_v2_st: ProcessInfo).
    assert nvml.ProcessInfo and not hasattr(nvml, "ProcessInfo_v2")


def test_gsp_firmware_version(fake_nvml_dir):
    run_fake(fake_nvml_dir, """
        from cubind.bindings import nvml
        nvml.init_v2()
        a, b = nvml.device_get_handle_by_index_v2(0), nvml.device_get_handle_by_index_v2(1)
        # The stand-in fills NVML_GSP_FIRMWARE_VERSION_BUF_SIZE (64) bytes, its NUL last.
        assert nvml.device_get_gsp_firmware_version(a) == "a" * 63
        assert nvml.device_get_gsp_firmware_version(b) == "b" * 63
        try:
            nvml.device_get_gsp_firmware_version(12345)
        except nvml.InvalidArgumentError:
            pass
        else:
            raise AssertionError("no InvalidArgumentError")
    """)


def test_event_context_data_is_returned_as_bytes(fake_nvml_dir):
    run_checked(fake_nvml_dir, """
        nvml.init_v2()
        # Asked first for the size, then with a buffer of that many bytes; the NUL inside stays.
        assert nvml.event_set_get_context_data_v1(1, 0) == b"ctx\\0payload-0"
        assert fake_int("fake_nvml_context_calls", ctypes.c_uint) == 2
        # An empty payload: one call, no buffer.
        assert nvml.event_set_get_context_data_v1(1, 1) == b""
        assert fake_int("fake_nvml_context_calls", ctypes.c_uint) == 3
        raises(nvml.InvalidArgumentError, "", nvml.event_set_get_context_data_v1, 1, 5)
        raises(OverflowError, "index", nvml.event_set_get_context_data_v1, 1, -1)
    """)


def test_handle_by_uuid_in_either_form(fake_nvml_dir):
    run_checked(fake_nvml_dir, """
        nvml.init_v2()
        b = nvml.device_get_handle_by_index_v2(1)
        ascii_uuid = "GPU-55555555-6666-7777-8888-999999999999"
        assert nvml.device_get_handle_by_uuidv(nvml.UUIDType.ASCII, ascii_uuid) == b
        assert nvml.device_get_handle_by_uuidv(nvml.UUIDType.ASCII, ascii_uuid.encode()) == b
        assert nvml.device_get_handle_by_uuidv(nvml.UUIDType.BINARY, bytes([0x20] * 16)) == b
        raises(nvml.NotFoundError, "", nvml.device_get_handle_by_uuidv, nvml.UUIDType.BINARY, bytes(16))
        raises(TypeError, "uuid: expected bytes or str, got int", nvml.device_get_handle_by_uuidv,
               nvml.UUIDType.ASCII, 5)
        raises(ValueError, "uuid: at most 41 bytes, got 42", nvml.device_get_handle_by_uuidv,
               nvml.UUIDType.ASCII, "x" * 42)
    """)
