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
