"""cubind.core.system without a GPU: the subpackage imports and loads nothing;
without the NVIDIA driver the first query raises a clear error; and, over a
scripted NVML (_fake_nvml.py, two H100s), every member of Device and of what
it returns makes the NVML call it names and converts the answer as
cuda.core 1.2 does, while bad input raises an error that names the
parameter and the value before any NVML call."""
import os
import subprocess
import sys
import textwrap

import pytest

import cubind.core.system as system
from cubind.bindings import nvml as real_nvml
from cubind.core.system import _device, _nvml_context, _system_events
from cubind.core.system import _nvml_values as V
from cubind.core.system.typing import (
    AddressingMode, AffinityScope, ClockId, ClocksEventReasons, ClockType, CoolerControl, CoolerTarget, DeviceArch,
    EventType, FanControlPolicy, GpuP2PCapsIndex, GpuP2PStatus, GpuTopologyLevel, InforomObject,
    SystemEventType, TemperatureThresholds, ThermalController, ThermalTarget)

sys.path.insert(0, os.path.dirname(__file__))
import _fake_nvml  # noqa: E402


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(_nvml_context, "_state", _nvml_context.UNINITIALIZED)
    return _fake_nvml.install(monkeypatch, "cubind.core.system", real_nvml)


@pytest.fixture
def dev(fake):
    return system.Device(index=0)


def _run(code, env=None):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env or dict(os.environ), timeout=120)


def test_import_cubind_core_does_not_import_system_and_system_loads_no_library():
    result = _run("""
        import sys
        import cubind.core
        assert "cubind.core.system" not in sys.modules
        from cubind.core import system
        assert cubind.core.system is system
        maps = open("/proc/self/maps").read()
        assert "libnvidia-ml" not in maps, "importing cubind.core.system loaded NVML"
        assert "libcuda.so" not in maps
        print(len(system.__all__))
    """)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == len(system.__all__)


def _no_nvml_env():
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ""
    return env


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="the NVIDIA driver is installed here")
def test_without_the_driver_the_first_query_raises_a_clear_error_and_import_works():
    result = _run("""
        from cubind.core import system
        for call in (system.get_num_devices, lambda: system.Device(index=0), system.get_kernel_mode_driver_version,
                     lambda: system.Device(uuid="GPU-x"), system.get_driver_branch):
            try:
                call()
            except Exception as error:
                print(type(error).__name__, "|", " ".join(str(error).split()))
            else:
                raise SystemExit("an NVML query succeeded without the driver")
    """, env=_no_nvml_env())
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 5
    for line in lines:
        kind, message = line.split(" | ", 1)
        assert "nvml" in message.lower() or "nvidia-ml" in message.lower(), line
    # Every query gives the same error: a failed initialization is not remembered as success.
    assert len({line.split(" | ")[0] for line in lines}) == 1


def test_initialization_happens_once_per_process(fake):
    system.get_num_devices()
    system.Device(index=1)
    system.get_driver_branch()
    assert fake.initialized == 1
    assert _nvml_context.is_initialized()
    _nvml_context.validate()
    assert _nvml_context._get_nvml_state() == _nvml_context.INITIALIZED


def test_validate_says_what_is_missing(fake, monkeypatch):
    with pytest.raises(system.UninitializedError):
        _nvml_context.validate()
    system.get_num_devices()
    monkeypatch.setattr(fake, "device_get_count_v2", lambda: 0)
    with pytest.raises(system.GpuNotFoundError):
        _nvml_context.validate()


def test_module_functions(fake):
    assert system.get_user_mode_driver_version() == (13, 2)
    assert system.get_kernel_mode_driver_version() == (580, 65, 6)
    assert system.get_nvml_version() == (13, 580, 65, 6)
    assert system.get_driver_branch() == "r580_00"
    assert system.get_num_devices() == 2
    assert system.get_process_name(77) == "python-77"
    assert system.CUDA_BINDINGS_NVML_IS_COMPATIBLE is True


@pytest.mark.parametrize("pid, error", [("77", TypeError), (1.5, TypeError), (None, TypeError), (-1, OverflowError)])
def test_get_process_name_refuses_what_is_no_pid(fake, pid, error):
    with pytest.raises(error, match="pid"):
        system.get_process_name(pid)


def test_device_lookups(fake):
    assert system.Device(index=1)._handle == _fake_nvml.HANDLES[1]
    assert system.Device(uuid=_fake_nvml.UUIDS[1])._handle == _fake_nvml.HANDLES[1]
    assert system.Device(uuid=_fake_nvml.UUIDS[0].encode())._handle == _fake_nvml.HANDLES[0]
    assert system.Device(pci_bus_id=_fake_nvml.BUS_IDS[1])._handle == _fake_nvml.HANDLES[1]
    assert system.Device(pci_bus_id=_fake_nvml.BUS_IDS[0].encode())._handle == _fake_nvml.HANDLES[0]
    assert [d._handle for d in system.Device.get_all_devices()] == list(_fake_nvml.HANDLES)
    assert system.Device.get_device_count() == 2
    with pytest.raises(system.NotFoundError):
        system.Device(uuid="GPU-00000000-0000-0000-0000-000000000000")
    with pytest.raises(system.InvalidArgumentError):
        system.Device(index=5)


@pytest.mark.parametrize("kwargs, error, words", [
    ({}, ValueError, "either"),
    ({"index": 0, "uuid": "GPU-x"}, ValueError, "only one"),
    ({"index": 0, "pci_bus_id": "0"}, ValueError, "only one"),
    ({"index": "0"}, TypeError, "index"),
    ({"index": 0.0}, TypeError, "index"),
    ({"index": -1}, OverflowError, "index"),
    ({"uuid": 5}, TypeError, "uuid"),
    ({"pci_bus_id": ["x"]}, TypeError, "pci_bus_id"),
])
def test_device_refuses_bad_lookups_before_nvml(fake, kwargs, error, words):
    with pytest.raises(error, match=words):
        system.Device(**kwargs)
    assert fake.initialized == 0


def test_device_identity(dev, fake):
    assert dev.index == 0
    assert dev.uuid == _fake_nvml.UUIDS[0]
    assert dev.uuid_without_prefix == _fake_nvml.UUIDS[0][4:]
    assert dev.pci_bus_id == _fake_nvml.BUS_IDS[0]
    assert dev.numa_node_id == 0
    assert dev.arch is DeviceArch.HOPPER and dev.arch >= DeviceArch.AMPERE
    fake.threshold_arch = 0x7777
    assert dev.arch is DeviceArch.UNKNOWN
    assert dev.name == "NVIDIA H100 80GB HBM3"
    assert dev.brand == "NVIDIA"
    assert dev.serial == "1652322000000"
    assert dev.module_id == 1
    assert dev.minor_number == 0
    assert dev.is_c2c_enabled is True
    assert dev.is_persistence_mode_enabled is True
    dev.is_persistence_mode_enabled = False
    assert fake.persistence_set == (dev._handle, int(V.FEATURE_DISABLED))
    assert dev.cuda_compute_capability == (9, 0)
    assert dev.addressing_mode is AddressingMode.HMM
    assert "Device" in repr(dev)


def test_mig(dev, fake):
    mig = dev.mig
    assert mig.is_mig_device is False
    assert mig.mode is False and mig.pending_mode is True
    mig.mode = True
    assert fake.mig_set == (dev._handle, int(V.FEATURE_ENABLED))
    assert mig.device_count == 2
    children = list(mig.get_all_devices())  # index 1 is not found: skipped
    assert [c._handle for c in children] == [_fake_nvml.MIG_HANDLE]
    assert children[0].mig.is_mig_device is True
    assert children[0].mig.parent._handle == dev._handle
    with pytest.raises(RuntimeError, match="PCI"):
        children[0].pci_info
    with pytest.raises(OverflowError, match="index"):
        mig.get_device_by_index(-1)


def test_affinity(dev, fake):
    words = max(1, -(-os.cpu_count() // 64))
    assert dev.get_memory_affinity() == [0, 2]
    assert fake.calls[-1] == ("memory_affinity", words, V.AFFINITY_SCOPE_NODE)
    cpus = dev.get_cpu_affinity("socket")
    assert cpus[0] == 63 and cpus[1:] == [i for w in range(1, words) for i in (64 * w, 64 * w + 1)]
    assert fake.calls[-1] == ("cpu_affinity", words, V.AFFINITY_SCOPE_SOCKET)
    with pytest.raises(ValueError, match="scope.*'numa'"):
        dev.get_memory_affinity("numa")
    with pytest.raises(TypeError, match="scope"):
        dev.get_cpu_affinity(["node"])
    dev.set_cpu_affinity()
    assert fake.cpu_affinity == dev._handle
    dev.clear_cpu_affinity()
    assert fake.cpu_affinity is None
    assert [d._handle for d in system.Device.get_all_devices_with_cpu_affinity(40)] == [_fake_nvml.HANDLES[1]]
    with pytest.raises(OverflowError, match="cpu_index"):
        list(system.Device.get_all_devices_with_cpu_affinity(-3))


def test_clocks(dev):
    sm = dev.get_clock(ClockType.SM)
    nv_sm = V.CLOCK_SM
    assert sm.get_current_mhz() == 1000 + 10 * nv_sm + V.CLOCK_ID_CURRENT
    assert sm.get_current_mhz("customer_boost_max") == 1000 + 10 * nv_sm + V.CLOCK_ID_CUSTOMER_BOOST_MAX
    assert sm.get_max_mhz() == 1980 + nv_sm
    assert dev.get_clock("memory").get_max_customer_boost_mhz() == 1755 + V.CLOCK_MEM
    assert sm.get_min_max_clock_of_pstate_mhz(2) == (102, 1998)
    offsets = sm.get_offsets(0)
    assert (offsets.clock_offset_mhz, offsets.min_offset_mhz, offsets.max_offset_mhz) == (0, -200, 200)
    with pytest.raises(ValueError, match="clock_type.*'shader'"):
        dev.get_clock("shader")
    with pytest.raises(ValueError, match="clock_id"):
        sm.get_current_mhz("target")
    with pytest.raises(ValueError, match="pstate"):
        sm.get_offsets(16)
    with pytest.raises(TypeError, match="pstate"):
        sm.get_min_max_clock_of_pstate_mhz("P0")
    assert dev.is_auto_boosted_clocks_enabled == (True, False)
    assert dev.current_clock_event_reasons == [ClocksEventReasons.GPU_IDLE, ClocksEventReasons.SW_POWER_CAP]
    assert len(dev.supported_clock_event_reasons) == 9


def test_cooler_attributes_display(dev):
    cooler = dev.cooler
    assert cooler.signal_type is CoolerControl.VARIABLE
    assert cooler.target == [CoolerTarget.GPU, CoolerTarget.MEMORY]
    attributes = dev.attributes
    assert (attributes.multiprocessor_count, attributes.memory_size_mb) == (132, 81559)
    assert (attributes.shared_copy_engine_count, attributes.shared_decoder_count, attributes.shared_encoder_count,
            attributes.shared_jpeg_count, attributes.shared_ofa_count, attributes.gpu_instance_slice_count,
            attributes.compute_instance_slice_count) == (1, 7, 0, 7, 1, 7, 7)
    assert dev.is_display_connected is False
    assert dev.is_display_active is True


def test_device_events(dev, fake):
    events = dev.register_events([EventType.XID_CRITICAL_ERROR, "pstate"])
    mask = V.EVENT_XID_CRITICAL_ERROR | V.EVENT_PSTATE
    assert fake.calls[-1] == ("register", dev._handle, mask, 0xE0)
    event = events.wait(timeout_ms=10)
    assert fake.calls[-1] == ("wait", 0xE0, 10)
    assert event.event_type is EventType.XID_CRITICAL_ERROR
    assert event.device._handle == _fake_nvml.HANDLES[1]
    assert (event.event_data, event.gpu_instance_id, event.compute_instance_id) == (79, 0xFFFFFFFF, 0xFFFFFFFF)
    del events
    assert fake.freed == [0xE0]
    dev.register_events("clock")
    assert fake.calls[-1][2] == V.EVENT_CLOCK
    assert dev.get_supported_event_types() == [EventType.PSTATE, EventType.XID_CRITICAL_ERROR]
    with pytest.raises(ValueError, match="'thermal'"):
        dev.register_events(["pstate", "thermal"])
    with pytest.raises(TypeError, match="events"):
        dev.register_events(("pstate",))
    with pytest.raises(OverflowError, match="timeout_ms"):
        dev.register_events("pstate").wait(-1)


def test_non_xid_event_data_is_refused(dev, fake, monkeypatch):
    import types
    monkeypatch.setattr(fake, "event_set_wait_v2", lambda s, t: types.SimpleNamespace(
        device_=_fake_nvml.HANDLES[0], event_type=V.EVENT_PSTATE, event_data=0,
        gpu_instance_id=0, compute_instance_id=0))
    event = dev.register_events("pstate").wait()
    assert event.event_type is EventType.PSTATE
    for name in ("event_data", "gpu_instance_id", "compute_instance_id"):
        with pytest.raises(ValueError, match=name):
            getattr(event, name)


def test_system_events(fake):
    events = system.register_events([SystemEventType.BIND, "unbind"])
    mask = V.SYSTEM_EVENT_GPU_DRIVER_BIND | V.SYSTEM_EVENT_GPU_DRIVER_UNBIND
    assert fake.calls[-1] == ("system_register", mask, 0xE1)
    got = events.wait(timeout_ms=5, buffer_size=4)
    assert fake.calls[-1] == ("system_wait", 0xE1, 5, 4)
    assert len(got) == 1
    assert got[0].event_type is SystemEventType.BIND
    assert got[0].gpu_id == 0x8600
    assert got[0].device._handle == _fake_nvml.HANDLES[1]
    assert _system_events._pci_bus_id_from_gpu_id(0xABCDEF01) == "0000ABCD:EF:01.0"
    with pytest.raises(ValueError, match="buffer_size"):
        events.wait(buffer_size=0)
    with pytest.raises(ValueError, match="'rebind'"):
        system.register_events("rebind")
    del events
    assert fake.freed == [0xE1]


def test_fans(dev, fake):
    assert dev.num_fans == 2
    fan = dev.get_fan(1)
    assert (fan.speed, fan.speed_rpm, fan.target_speed, fan.min_max_speed) == (31, 1201, 41, (20, 100))
    assert fan.control_policy is FanControlPolicy.MANUAL
    assert dev.get_fan().control_policy is FanControlPolicy.TEMPERATURE_CONTROLLED
    fan.speed = 55
    assert fake.fan_speed_set == (dev._handle, 1, 55)
    fan.set_default_speed()
    assert fake.fan_speed_set == (dev._handle, 1, "default")
    with pytest.raises(ValueError, match="Fan index 2"):
        dev.get_fan(2)
    with pytest.raises(TypeError, match="fan"):
        dev.get_fan("0")


# NVML_FI_DEV_NVLINK_LINK_COUNT, NVML_FI_DEV_NVLINK_SPEED_MBPS_L0, NVML_FI_DEV_POWER_INSTANT
LINK_COUNT, SPEED_L0, POWER_INSTANT = 91, 84, 186


def test_field_values(dev, fake):
    values = dev.get_field_values([LINK_COUNT, (SPEED_L0, 3)])
    assert fake.calls[-1] == ("field_values", [LINK_COUNT, (SPEED_L0, 3)])
    assert len(values) == 2
    assert values[0].field_id == LINK_COUNT and values[0].value == 4
    assert values[1].scope_id == 3 and values[1].value == 1.5 and isinstance(values[1].value, float)
    assert (values[0].timestamp, values[0].latency_usec) == (1_700_000_000_000_000, 7)
    values.validate()
    assert values.get_all_values() == [4, 1.5]
    bad = dev.get_field_values([LINK_COUNT, POWER_INSTANT])
    assert bad[0].value == 4
    with pytest.raises(system.NotSupportedError):
        bad[1].value
    with pytest.raises(system.NotSupportedError):
        bad.validate()
    assert len(dev.get_field_values([])) == 0
    dev.clear_field_values([LINK_COUNT])
    assert fake.cleared == [LINK_COUNT]
    with pytest.raises(TypeError, match="field_ids"):
        dev.get_field_values(5)
    with pytest.raises(TypeError, match="field_ids"):
        dev.get_field_values(["power"])


def test_inforom(dev, fake):
    inforom = dev.inforom
    assert inforom.get_version(InforomObject.ECC) == f"G001.0000.{V.INFOROM_ECC:02d}.01"
    assert inforom.image_version == "G520.0200.00.05"
    assert inforom.configuration_checksum == 0xDEADBEEF
    inforom.validate()
    assert fake.calls[-1] == ("validate_inforom", dev._handle)
    assert inforom.bbx_flush_time == (1_700_000_000, 250)
    assert inforom.board_part_number == "692-2G520-0200-000"
    with pytest.raises(ValueError, match="inforom.*'pwr'"):
        inforom.get_version("pwr")


def test_memory(dev):
    memory = dev.memory_info
    assert (memory.total, memory.free, memory.used, memory.reserved) == (85520809984, 84500000000, 500000000,
                                                                          520809984)
    bar1 = dev.bar1_memory_info
    assert isinstance(bar1, system._device.MemoryInfo)
    assert (bar1.total, bar1.free, bar1.used) == (1 << 36, (1 << 36) - (1 << 25), 1 << 25)


def test_nvlink(dev, fake):
    assert dev.get_nvlink_count() == 4
    links = list(dev.get_nvlinks())
    assert len(links) == 4 and all(isinstance(link, system.NvlinkInfo) for link in links)
    assert [link.state for link in links] == [True, False, True, False]
    assert links[0].version == (4, 0)
    with pytest.raises(ValueError, match="Link index 4"):
        dev.get_nvlink(4)
    with pytest.raises(ValueError, match="Link index -1"):
        dev.get_nvlink(-1)
    with pytest.warns(DeprecationWarning, match="get_nvlink_count"):
        assert system.NvlinkInfo.max_links == real_nvml.NVLINK_MAX_LINKS
    fake.nvlink_count = 0
    assert list(dev.get_nvlinks()) == []


def test_pci(dev):
    pci = dev.pci_info
    assert (pci.bus, pci.bus_id, pci.device, pci.domain) == (0x3B, _fake_nvml.BUS_IDS[0], 0, 0)
    assert (pci.vendor_id, pci.device_id, pci.subsystem_id) == (0x10DE, 0x2330, 0x16C110DE)
    assert (pci.base_class, pci.sub_class) == (3, 2)
    assert (pci.link_generation, pci.max_link_generation, pci.max_link_width) == (5, 5, 16)
    assert (pci.current_link_generation, pci.current_link_width) == (4, 8)
    assert (pci.rx_throughput, pci.tx_throughput, pci.replay_counter) == (222, 111, 3)


def test_performance_processes_repair(fake):
    dev0, dev1 = system.Device(index=0), system.Device(index=1)
    assert dev0.performance_state == 0
    assert dev1.performance_state is None
    assert dev0.supported_pstates == [0, 2, 8]
    info = dev0.dynamic_pstates_info
    assert len(info) == real_nvml.MAX_GPU_UTILIZATIONS
    domains = [info[i] for i in range(len(info))]
    assert [d.is_present for d in domains[:3]] == [False, True, False]
    assert (domains[2].percentage, domains[2].inc_threshold, domains[2].dec_threshold) == (20, 62, 32)
    with pytest.raises(IndexError):
        info[len(info)]
    processes = dev0.compute_running_processes
    assert [(p.pid, p.used_gpu_memory) for p in processes] == [(4242, 1 << 30), (4343, 1 << 29)]
    with pytest.raises(system.NotSupportedError):
        processes[0].gpu_instance_id  # not a MIG device
    with pytest.raises(system.NotSupportedError):
        processes[1].compute_instance_id
    mig_processes = dev0.mig.get_device_by_index(0).compute_running_processes
    assert [(p.gpu_instance_id, p.compute_instance_id) for p in mig_processes] == [(0xFFFFFFFF, 0xFFFFFFFF), (1, 0)]
    repair = dev0.repair_status
    assert (repair.channel_repair_pending, repair.tpc_repair_pending) == (False, True)
    assert dev0.utilization.gpu == 87 and dev0.utilization.memory == 42


def test_temperature(dev, fake):
    temperature = dev.temperature
    assert temperature.get_sensor() == 34
    assert temperature.margin == 51
    with pytest.warns(DeprecationWarning, match="Ada"):
        assert temperature.get_threshold("slowdown") == 80 + V.TEMPERATURE_THRESHOLD_SLOWDOWN
    assert temperature.get_threshold(TemperatureThresholds.ACOUSTIC_MAX) == 80 + V.TEMPERATURE_THRESHOLD_ACOUSTIC_MAX
    with pytest.raises(ValueError, match="threshold_type.*'hot'"):
        temperature.get_threshold("hot")
    settings = temperature.get_thermal_settings(ThermalTarget.ALL)
    assert len(settings) == 2
    sensor = settings[0]
    assert (sensor.controller, sensor.target) == (ThermalController.GPU_INTERNAL, ThermalTarget.GPU)
    assert (sensor.default_min_temp, sensor.default_max_temp, sensor.current_temp) == (5, 90, 36)
    assert (settings[1].controller, settings[1].target) == (ThermalController.UNKNOWN, ThermalTarget.NONE)
    with pytest.raises(IndexError):
        settings[2]
    with pytest.raises(ValueError, match="sensor_index"):
        temperature.get_thermal_settings("cpu")


def test_topology_and_p2p(fake):
    dev0, dev1 = system.Device(index=0), system.Device(index=1)
    assert [d._handle for d in dev0.get_topology_nearest_gpus(GpuTopologyLevel.SYSTEM)] == [dev1._handle]
    assert system.get_topology_common_ancestor(dev0, dev1) is GpuTopologyLevel.SYSTEM
    assert system.get_topology_common_ancestor(dev0, dev0) is GpuTopologyLevel.INTERNAL
    assert system.get_p2p_status(dev0, dev1, "read") is GpuP2PStatus.OK
    assert fake.calls[-1] == ("p2p", dev0._handle, dev1._handle, 0)
    assert system.get_p2p_status(dev0, dev1, GpuP2PCapsIndex.NVLINK) is GpuP2PStatus.NOT_SUPPORTED
    with pytest.raises(ValueError, match="index.*'peer'"):
        system.get_p2p_status(dev0, dev1, "peer")
    with pytest.raises(TypeError, match="device2"):
        system.get_p2p_status(dev0, 1, "read")
    with pytest.raises(TypeError, match="device1"):
        system.get_topology_common_ancestor("0", dev1)
    with pytest.raises(ValueError, match="level"):
        list(dev0.get_topology_nearest_gpus("rack"))


def test_to_cuda_device_matches_by_uuid(dev, monkeypatch):
    import cubind.core

    class FakeCudaDevice:
        found = []

        def __init__(self, uuid):
            self.uuid = uuid

        @classmethod
        def get_all_devices(cls):
            return tuple(cls.found)

    FakeCudaDevice.found = [FakeCudaDevice(_fake_nvml.UUIDS[1][4:]), FakeCudaDevice(_fake_nvml.UUIDS[0][4:])]
    monkeypatch.setattr(cubind.core, "Device", FakeCudaDevice)
    assert dev.to_cuda_device() is FakeCudaDevice.found[1]
    FakeCudaDevice.found.pop()
    with pytest.raises(RuntimeError, match="No corresponding CUDA device"):
        dev.to_cuda_device()


def test_cuda_device_and_system_device_meet_by_uuid(fake_driver_dir):
    # The stand-in driver's device 0 has UUID f0f1f2f3-...; the scripted NVML
    # gives that UUID to its second GPU.
    from conftest import run_with_fake_driver

    run_with_fake_driver(fake_driver_dir, textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
        import pytest
        import _fake_nvml
        from cubind.bindings import nvml
        import cubind.core
        from cubind.core import system

        uuid = cubind.core.Device(0).uuid
        assert uuid == "f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff", uuid
        _fake_nvml.UUIDS = (_fake_nvml.UUIDS[0], "GPU-" + uuid)
        _fake_nvml.install(pytest.MonkeyPatch(), "cubind.core.system", nvml)
        gpu = cubind.core.Device(0).to_system_device()
        assert gpu._handle == _fake_nvml.HANDLES[1], gpu
        assert gpu.to_cuda_device() == cubind.core.Device(0)
        try:
            system.Device(index=0).to_cuda_device()
        except RuntimeError as error:
            assert "No corresponding CUDA device" in str(error)
        else:
            raise AssertionError("an NVML device CUDA does not see found a CUDA device")
    """))


def test_exceptions_are_the_bindings_classes():
    for name in system.exceptions.__all__:
        assert getattr(system, name) is getattr(real_nvml, name)
        assert issubclass(getattr(system, name), system.NvmlError)
    assert system.MemoryError is not MemoryError and system.TimeoutError is not TimeoutError


def test_enums_take_their_strings():
    for enum in (AddressingMode, AffinityScope, ClockId, ClockType, ClocksEventReasons, CoolerControl, CoolerTarget,
                 EventType, FanControlPolicy, GpuP2PCapsIndex, GpuP2PStatus, GpuTopologyLevel, InforomObject,
                 SystemEventType, TemperatureThresholds, ThermalController, ThermalTarget):
        for member in enum:
            assert member == member.value and str(member) == member.value
    assert DeviceArch.BLACKWELL > DeviceArch.HOPPER > DeviceArch.AMPERE


def _nvml_names_used():
    """Every nvml.NAME the subpackage's code reads (annotations left out)."""
    import ast
    import glob

    used = set()
    for path in glob.glob(os.path.join(os.path.dirname(system.__file__), "*.py")):
        tree = ast.parse(open(path).read())
        annotations = set()
        for node in ast.walk(tree):
            for field in ("annotation", "returns"):
                value = getattr(node, field, None)
                if value is not None:
                    annotations.update(id(n) for n in ast.walk(value))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "nvml"
                    and id(node) not in annotations):
                used.add(node.attr)
    return sorted(used)


def test_the_bindings_have_every_nvml_name_the_subpackage_uses():
    used = _nvml_names_used()
    assert len(used) > 100
    assert [name for name in used if not hasattr(real_nvml, name)] == []


def _nvml_calls():
    """(function, positional argument count, file:line) of every nvml.f(...) call of the subpackage."""
    import ast
    import glob

    calls = []
    for path in glob.glob(os.path.join(os.path.dirname(system.__file__), "*.py")):
        for node in ast.walk(ast.parse(open(path).read())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "nvml"
                    and node.func.attr[0].islower()):
                calls.append((node.func.attr, len(node.args), f"{os.path.basename(path)}:{node.lineno}"))
    return calls


# Functions whose cubind.bindings.nvml parameters are not yet cuda.bindings
# 13.5's (each takes its versioned request struct's input fields there); the
# members that call them raise TypeError until the bindings take them so:
# ClockInfo.get_offsets, FanInfo.speed_rpm, Temperature.get_sensor,
# Device.get_field_values, clear_field_values and get_nvlink_count (and so
# get_nvlink, get_nvlinks), supported_pstates, get_driver_branch, system events.
BINDINGS_NOT_YET_MATCHED = {
    "device_get_clock_offsets", "device_get_fan_speed_rpm", "device_get_temperature_v", "device_get_field_values",
    "device_clear_field_values", "device_get_supported_performance_states", "system_get_driver_branch",
    "system_register_events", "system_event_set_wait", "system_event_set_free",
}


def test_the_bindings_take_the_arguments_the_subpackage_passes():
    import inspect

    wrong = []
    for name, count, where in _nvml_calls():
        try:
            parameters = inspect.signature(getattr(real_nvml, name)).parameters.values()
        except (TypeError, ValueError):
            continue
        required = sum(p.default is p.empty for p in parameters)
        if not required <= count <= len(parameters) and name not in BINDINGS_NOT_YET_MATCHED:
            wrong.append(f"{where}: nvml.{name} takes {[p.name for p in parameters]}, given {count}")
    assert wrong == []
