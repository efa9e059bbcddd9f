"""cubind.core.system on a GPU: each member's answer agrees with the driver
API (cubind.bindings.driver, for the same GPU found by UUID) and with
``nvidia-smi --query-gpu=...`` (which reads NVML through its own copy of the
tool), every member of Device and of what it returns answers or raises one
of NVML's errors (NotSupportedError, NoPermissionError: what a GPU or a
container may refuse), and between two GPUs the topology and peer-to-peer
status agree with cuDeviceCanAccessPeer."""
import os
import shutil
import subprocess

import pytest

import cubind.core
from cubind.bindings import driver
from cubind.core import system
from cubind.core.system.typing import (AffinityScope, ClockId, ClockType, EventType, GpuP2PCapsIndex,
                                       GpuP2PStatus, GpuTopologyLevel, InforomObject, TemperatureThresholds,
                                       ThermalTarget)

pytestmark = pytest.mark.gpu

# What a GPU, a driver or an unprivileged container may decline.
# What NVML may answer for a query this GPU, driver or container does not
# serve (NotReadyError: the InfoROM's black box has not been flushed yet).
REFUSED = (system.NotSupportedError, system.NoPermissionError, system.NotFoundError, system.InvalidArgumentError,
           system.FunctionNotFoundError, system.NotReadyError)


def _check(status):
    assert int(status) == 0, f"driver call failed: {status!r}"


def _driver(result):
    _check(result[0])
    return result[1] if len(result) == 2 else result[1:]


@pytest.fixture(scope="module")
def pairs():
    """[(cubind.core.Device, system.Device)] of every GPU CUDA sees, matched by UUID."""
    found = []
    for cuda_device in cubind.core.Device.get_all_devices():
        nvml_device = cuda_device.to_system_device()
        found.append((cuda_device, nvml_device))
    assert found
    return found


def _smi(*fields):
    """{uuid: {field: text}} from nvidia-smi --query-gpu, or a skip without it."""
    if shutil.which("nvidia-smi") is None:
        pytest.skip("nvidia-smi is not installed here")
    out = subprocess.run(["nvidia-smi", "--query-gpu=uuid," + ",".join(fields), "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    table = {}
    for line in out.stdout.strip().splitlines():
        values = [v.strip() for v in line.split(",")]
        table[values[0]] = dict(zip(fields, values[1:]))
    return table


def test_module_functions_agree_with_the_driver_and_nvidia_smi():
    version = _driver(driver.cuDriverGetVersion())
    assert system.get_user_mode_driver_version() == (version // 1000, (version % 1000) // 10)
    kmd = system.get_kernel_mode_driver_version()
    assert len(kmd) in (2, 3) and all(isinstance(p, int) for p in kmd)
    assert isinstance(system.get_driver_branch(), str) and system.get_driver_branch()
    nvml_version = system.get_nvml_version()
    assert nvml_version[0] == version // 1000
    smi = _smi("driver_version")
    assert {".".join(str(p) for p in kmd)} == {row["driver_version"] for row in smi.values()} or \
        {tuple(int(p) for p in row["driver_version"].split(".")) for row in smi.values()} == {kmd}
    assert system.get_num_devices() == len(smi) == system.Device.get_device_count()
    assert system.get_num_devices() >= len(cubind.core.Device.get_all_devices())
    assert os.path.basename(__import__("sys").executable) in system.get_process_name(os.getpid()) or \
        "python" in system.get_process_name(os.getpid())


def test_lookups_agree(pairs):
    for cuda_device, dev in pairs:
        assert dev.uuid_without_prefix == cuda_device.uuid
        assert dev.uuid.startswith(("GPU-", "MIG-"))
        assert system.Device(uuid=dev.uuid)._handle == dev._handle
        assert system.Device(uuid=dev.uuid.encode())._handle == dev._handle
        assert system.Device(uuid=dev.uuid_without_prefix)._handle == dev._handle  # as to_system_device asks
        assert system.Device(pci_bus_id=dev.pci_bus_id)._handle == dev._handle
        assert system.Device(index=dev.index)._handle == dev._handle
        assert dev.to_cuda_device().device_id == cuda_device.device_id
    handles = [d._handle for d in system.Device.get_all_devices()]
    assert sorted(handles) == sorted(set(handles)) and len(handles) == system.get_num_devices()


def test_identity_agrees_with_the_driver_and_nvidia_smi(pairs):
    smi = _smi("name", "pci.bus_id", "memory.total", "serial", "persistence_mode", "compute_cap", "index")
    for cuda_device, dev in pairs:
        row = smi[dev.uuid]
        ordinal = cuda_device.device_id
        assert dev.name == cuda_device.name == row["name"]
        assert dev.pci_bus_id.lower().endswith(cuda_device.pci_bus_id.lower()[-12:])
        assert dev.pci_bus_id.lower() == row["pci.bus_id"].lower()
        assert dev.index == int(row["index"])
        major = _driver(driver.cuDeviceGetAttribute(
            driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ordinal))
        minor = _driver(driver.cuDeviceGetAttribute(
            driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ordinal))
        assert dev.cuda_compute_capability == (major, minor)
        assert row["compute_cap"] == f"{major}.{minor}"
        assert dev.arch >= system.typing.DeviceArch.VOLTA if major >= 7 else True
        total = _driver(driver.cuDeviceTotalMem(ordinal))
        # NVML counts what the driver reserves too: at least CUDA's total, and
        # within 2% of it (150754820096 against 150109880320 on an H200).
        assert total <= dev.memory_info.total <= total * 1.02, (dev.memory_info.total, total)
        assert abs(dev.memory_info.total / 2**20 - int(row["memory.total"])) <= 1
        memory = dev.memory_info
        assert memory.used + memory.free <= memory.total
        assert dev.is_persistence_mode_enabled == (row["persistence_mode"] == "Enabled")
        if row["serial"] not in ("[N/A]", "N/A"):
            assert dev.serial == row["serial"]
        assert isinstance(dev.brand, str) and dev.brand != "Unknown"
        assert dev.minor_number >= 0 and os.path.exists(f"/dev/nvidia{dev.minor_number}")


def test_pci_agrees_with_the_driver_and_nvidia_smi(pairs):
    smi = _smi("pcie.link.gen.max", "pcie.link.width.max", "pcie.link.gen.gpumax", "pci.device_id",
               "pci.sub_device_id", "pci.domain", "pci.bus", "pci.device")
    for cuda_device, dev in pairs:
        pci, row, ordinal = dev.pci_info, smi[dev.uuid], cuda_device.device_id
        attribute = driver.CUdevice_attribute
        assert pci.bus == _driver(driver.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, ordinal))
        assert pci.device == _driver(driver.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, ordinal))
        assert pci.domain == _driver(driver.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, ordinal))
        assert (pci.bus, pci.device, pci.domain) == (int(row["pci.bus"], 16), int(row["pci.device"], 16),
                                                      int(row["pci.domain"], 16))
        assert pci.vendor_id == 0x10DE
        assert (pci.device_id << 16 | pci.vendor_id) == int(row["pci.device_id"], 16)
        assert pci.subsystem_id == int(row["pci.sub_device_id"], 16)
        assert pci.bus_id == dev.pci_bus_id
        assert pci.link_generation == int(row["pcie.link.gen.max"])
        assert pci.max_link_width == int(row["pcie.link.width.max"])
        if row["pcie.link.gen.gpumax"] not in ("[N/A]", "N/A"):
            assert pci.max_link_generation == int(row["pcie.link.gen.gpumax"])
        assert 1 <= pci.current_link_generation <= pci.max_link_generation
        assert 1 <= pci.current_link_width <= 32
        assert pci.rx_throughput >= 0 and pci.tx_throughput >= 0 and pci.replay_counter >= 0
        assert (pci.base_class, pci.sub_class) in ((3, 0), (3, 2))


def test_clocks_temperature_utilization_agree_with_nvidia_smi(pairs):
    smi = _smi("clocks.max.sm", "clocks.max.memory", "clocks.max.graphics", "temperature.gpu", "fan.speed",
               "pstate", "clocks_event_reasons.active")
    for cuda_device, dev in pairs:
        row = smi[dev.uuid]
        assert dev.get_clock(ClockType.SM).get_max_mhz() == int(row["clocks.max.sm"])
        assert dev.get_clock("memory").get_max_mhz() == int(row["clocks.max.memory"])
        assert dev.get_clock("graphics").get_max_mhz() == int(row["clocks.max.graphics"])
        for kind in ClockType:
            clock = dev.get_clock(kind)
            current = clock.get_current_mhz()
            assert 0 <= current <= clock.get_max_mhz() + 50
            try:
                assert clock.get_current_mhz(ClockId.CUSTOMER_BOOST_MAX) > 0
                assert clock.get_max_customer_boost_mhz() > 0
                low, high = clock.get_min_max_clock_of_pstate_mhz(0)
                assert low <= high
                offsets = clock.get_offsets(0)
                assert offsets.min_offset_mhz <= offsets.clock_offset_mhz <= offsets.max_offset_mhz
            except REFUSED:
                pass
        temperature = dev.temperature.get_sensor()
        assert abs(temperature - int(row["temperature.gpu"])) <= 5
        assert 0 < temperature < 120
        pstate = dev.performance_state
        assert row["pstate"] == ("Unknown" if pstate is None else f"P{pstate}")
        assert pstate is None or pstate in dev.supported_pstates
        utilization = dev.utilization
        assert 0 <= utilization.gpu <= 100 and 0 <= utilization.memory <= 100
        assert isinstance(dev.current_clock_event_reasons, list)
        assert set(dev.current_clock_event_reasons) <= set(dev.supported_clock_event_reasons) | {
            system.typing.ClocksEventReasons.NONE}
        if row["fan.speed"] not in ("[N/A]", "N/A"):
            assert dev.num_fans > 0 and abs(dev.get_fan(0).speed - int(row["fan.speed"])) <= 5


def test_every_other_member_answers_or_refuses_clearly(pairs):
    dev = pairs[0][1]

    def answer(get):
        try:
            return get()
        except REFUSED as error:
            return error

    results = {
        "numa_node_id": answer(lambda: dev.numa_node_id),
        "module_id": answer(lambda: dev.module_id),
        "is_c2c_enabled": answer(lambda: dev.is_c2c_enabled),
        "addressing_mode": answer(lambda: dev.addressing_mode),
        "is_auto_boosted_clocks_enabled": answer(lambda: dev.is_auto_boosted_clocks_enabled),
        "cooler": answer(lambda: (dev.cooler.signal_type, dev.cooler.target)),
        "attributes": answer(lambda: dev.attributes.multiprocessor_count),
        "is_display_connected": answer(lambda: dev.is_display_connected),
        "is_display_active": answer(lambda: dev.is_display_active),
        "supported events": answer(dev.get_supported_event_types),
        "inforom": answer(lambda: (dev.inforom.image_version, dev.inforom.get_version(InforomObject.ECC),
                                   dev.inforom.configuration_checksum, dev.inforom.board_part_number)),
        "bbx": answer(lambda: dev.inforom.bbx_flush_time),
        "bar1": answer(lambda: dev.bar1_memory_info.total),
        "dynamic pstates": answer(lambda: [u.percentage for u in (dev.dynamic_pstates_info[i] for i in range(8))]),
        "processes": answer(lambda: dev.compute_running_processes),
        "repair": answer(lambda: dev.repair_status.tpc_repair_pending),
        "margin": answer(lambda: dev.temperature.margin),
        "threshold": answer(lambda: dev.temperature.get_threshold(TemperatureThresholds.ACOUSTIC_MAX)),
        "thermal": answer(lambda: [s.current_temp for s in (lambda t: (t[i] for i in range(len(t))))(
            dev.temperature.get_thermal_settings(ThermalTarget.ALL))]),
        "memory affinity": answer(lambda: dev.get_memory_affinity(AffinityScope.NODE)),
        "cpu affinity": answer(lambda: dev.get_cpu_affinity("socket")),
        "mig": answer(lambda: (dev.mig.is_mig_device, dev.mig.mode, dev.mig.device_count)),
        "nvlinks": answer(lambda: [(n.version, n.state) for n in dev.get_nvlinks()]),
        # NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION
        "field values": answer(lambda: dev.get_field_values([83]).validate()),
    }
    print(results)
    assert results["attributes"] is None or isinstance(results["attributes"], (int, Exception))
    if not isinstance(results["attributes"], Exception):
        sms = _driver(driver.cuDeviceGetAttribute(
            driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, pairs[0][0].device_id))
        assert results["attributes"] == sms
    if not isinstance(results["bar1"], Exception):
        assert results["bar1"] > 0
    assert not isinstance(results["processes"], Exception)
    assert not isinstance(results["mig"], Exception)


def test_this_process_is_listed_once_it_has_a_context(pairs, device):
    buffer = device.allocate(1 << 24, stream=device.create_stream())
    dev = device.to_system_device()
    try:
        pids = [p.pid for p in dev.compute_running_processes]
    except system.NoPermissionError:
        pytest.skip("NVML may not list processes in this container")
    assert os.getpid() in pids or not pids  # a container's PID namespace hides host pids
    buffer.close()


def test_events_register_and_time_out(pairs):
    dev = pairs[0][1]
    supported = dev.get_supported_event_types()
    if not supported:
        pytest.skip("the device records no events")
    try:
        events = dev.register_events([e for e in supported if e != EventType.NONE][:1])
    except REFUSED as error:
        pytest.skip(f"NVML refuses to record events here: {error!r}")
    with pytest.raises(system.TimeoutError):
        events.wait(timeout_ms=1)


@pytest.mark.multi_gpu
def test_topology_and_p2p_between_two_gpus(pairs):
    (cuda0, dev0), (cuda1, dev1) = pairs[0], pairs[1]
    level = system.get_topology_common_ancestor(dev0, dev1)
    assert level in GpuTopologyLevel
    assert system.get_topology_common_ancestor(dev1, dev0) == level
    nearest = [d._handle for d in dev0.get_topology_nearest_gpus(level)]
    assert dev1._handle in nearest
    can = _driver(driver.cuDeviceCanAccessPeer(cuda0.device_id, cuda1.device_id))
    read = system.get_p2p_status(dev0, dev1, GpuP2PCapsIndex.READ)
    assert (read == GpuP2PStatus.OK) == bool(can)
    assert cuda0.can_access_peer(cuda1) == bool(can)
    for index in GpuP2PCapsIndex:
        if index is not GpuP2PCapsIndex.UNKNOWN:
            assert system.get_p2p_status(dev0, dev1, index) in GpuP2PStatus
    if system.get_p2p_status(dev0, dev1, "nvlink") == GpuP2PStatus.OK:
        assert dev0.get_nvlink_count() > 0 and any(link.state for link in dev0.get_nvlinks())
    smi = subprocess.run(["nvidia-smi", "topo", "-p2p", "r"], capture_output=True, text=True, timeout=60) \
        if shutil.which("nvidia-smi") else None
    if smi is not None and smi.returncode == 0:
        print(smi.stdout)
