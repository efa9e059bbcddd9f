"""cubind.core.system end to end over the stand-in libnvidia-ml.so.1
(tests/python/fake_nvml): the real bindings, the real library loader, a
library that answers as NVML does (two GPUs). What the stand-in answers is
checked value by value; a query of an entry point it lacks raises NVML's
FunctionNotFoundError, as with a driver older than the header; without
devices, the lookups raise NVML's errors. Every member's conversion is
checked over the scripted module of test_core_system_cpu.py."""
import textwrap

import pytest

from conftest import run_with_fake_nvml


def _run(fake_nvml_dir, code, **env):
    return run_with_fake_nvml(fake_nvml_dir, textwrap.dedent(code), env_extra=env or None)


def test_versions_count_and_lookups(fake_nvml_dir):
    _run(fake_nvml_dir, """
        from cubind.core import system
        assert system.get_user_mode_driver_version() == (13, 5)
        assert system.get_kernel_mode_driver_version() == (999, 99, 99)
        assert system.get_nvml_version() == (13, 999, 99)
        assert system.get_num_devices() == system.Device.get_device_count() == 2
        a, b = list(system.Device.get_all_devices())
        assert (a.index, b.index) == (0, 1)
        assert a.name == "NVIDIA Stand-in GPU A" and b.name == "NVIDIA Stand-in GPU B"
        assert a.uuid == "GPU-00000000-1111-2222-3333-444444444444"
        assert a.uuid_without_prefix == "00000000-1111-2222-3333-444444444444"
        assert system.Device(uuid=b.uuid)._handle == b._handle
        assert system.Device(uuid=b.uuid.encode())._handle == b._handle
        assert system.Device(pci_bus_id="00000000:2B:00.0")._handle == b._handle
        assert a.cuda_compute_capability == (9, 0)
        memory = a.memory_info
        assert (memory.total, memory.used, memory.reserved) == (80 << 30, 1 << 30, 512 << 20)
        assert memory.free == (80 << 30) - (1 << 30) - (512 << 20)
        try:
            a.serial
        except system.NotSupportedError:
            pass
        else:
            raise AssertionError("the stand-in has no serial number to give")
    """)


def test_two_gpus_and_processes(fake_nvml_dir):
    _run(fake_nvml_dir, """
        from cubind.core import system
        from cubind.core.system.typing import GpuP2PStatus, GpuTopologyLevel
        a, b = system.Device(index=0), system.Device(index=1)
        assert system.get_p2p_status(a, b, "read") is GpuP2PStatus.OK
        assert system.get_p2p_status(a, b, "write") is GpuP2PStatus.OK
        assert system.get_p2p_status(a, b, "nvlink") is GpuP2PStatus.NOT_SUPPORTED
        assert system.get_p2p_status(a, a, "read") is GpuP2PStatus.NOT_SUPPORTED
        assert system.get_topology_common_ancestor(a, b) is GpuTopologyLevel.HOSTBRIDGE
        assert system.get_topology_common_ancestor(b, b) is GpuTopologyLevel.INTERNAL
        processes = a.compute_running_processes
        assert [p.pid for p in processes] == [1000, 1001, 1002]
        assert b.compute_running_processes == []
    """)


def test_what_the_library_lacks_and_bad_lookups_raise_nvml_errors(fake_nvml_dir):
    _run(fake_nvml_dir, """
        from cubind.core import system
        a = system.Device(index=0)
        try:
            a.numa_node_id
        except system.FunctionNotFoundError as error:
            assert "nvmlDeviceGetNumaNodeId" in str(error), error
        else:
            raise AssertionError("a query the library lacks answered")
        for lookup, error in ((lambda: system.Device(index=2), system.InvalidArgumentError),
                              (lambda: system.Device(uuid="GPU-ffffffff-0000-0000-0000-000000000000"),
                               system.NotFoundError)):
            try:
                lookup()
            except error:
                pass
            else:
                raise AssertionError("a lookup of no device answered")
    """)


def test_no_devices(fake_nvml_dir):
    _run(fake_nvml_dir, """
        from cubind.core import system
        from cubind.core.system import _nvml_context
        assert system.get_num_devices() == 0
        assert list(system.Device.get_all_devices()) == []
        try:
            _nvml_context.validate()
        except system.GpuNotFoundError:
            pass
        else:
            raise AssertionError("validate() passed without a GPU")
    """, FAKE_NVML_DEVICES="0")


def test_queries_whose_nvml_struct_takes_arguments(fake_nvml_dir):
    # Each of these NVML calls reads a versioned struct the bindings fill from their
    # arguments; the stand-in refuses a struct of another version, as NVML does.
    _run(fake_nvml_dir, """
        import ctypes
        from cubind.core import system
        from cubind.core.system.typing import SystemEventType
        fake = ctypes.CDLL("libnvidia-ml.so.1")
        assert system.get_driver_branch() == "r999_00"
        a, b = system.Device(index=0), system.Device(index=1)
        assert a.pci_bus_id == "00000000:1A:00.0" and b.pci_info.bus == 0x2B
        assert system.Device(pci_bus_id=b.pci_bus_id)._handle == b._handle
        assert (a.temperature.get_sensor(), b.temperature.get_sensor()) == (41, 42)
        assert a.num_fans == 1 and a.get_fan(0).speed_rpm == 1200
        offsets = a.get_clock("sm").get_offsets(4)
        assert (offsets.clock_offset_mhz, offsets.min_offset_mhz, offsets.max_offset_mhz) == (20, -100, 250)
        assert a.supported_pstates == [0, 2, 8]
        assert a.get_nvlink_count() == 4
        values = a.get_field_values([91, (91, 3), 1, 5])
        assert len(values) == 4 and [v.scope_id for v in values] == [0, 3, 0, 0]
        assert values[1].value == 7 and values[2].value == 1.5
        try:
            values.validate()
        except system.NotSupportedError:
            pass
        else:
            raise AssertionError("field 5 is not supported by the stand-in")
        assert len(a.get_field_values([])) == 0
        a.clear_field_values([(91, 1), 1])
        assert list((ctypes.c_uint * 8).in_dll(fake, "fake_nvml_cleared")[:2]) == [91, 1]
        events = system.register_events([SystemEventType.BIND, "unbind"])
        assert ctypes.c_ulonglong.in_dll(fake, "fake_nvml_last_mask").value == 3
        got = events.wait(timeout_ms=5, buffer_size=2)
        assert len(got) == 1 and got[0].event_type is SystemEventType.BIND and got[0].gpu_id == 0x1A00
        assert got[0].device._handle == a._handle
        del events
    """)
