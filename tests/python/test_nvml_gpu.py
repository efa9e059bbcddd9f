"""cubind.bindings.nvml on a GPU: NVML's answers (count, name, total memory,
UUID, PCI bus id, and the P2P status of two GPUs) agree with the driver API's
(cubind.bindings.driver) and with nvidia-smi's.

NVML and the driver enumerate devices in different orders (PCI order against
CUDA_DEVICE_ORDER's fastest-first by default), so devices are matched by UUID.
"""
import shutil
import subprocess

import pytest

from cubind.bindings import driver, nvml

pytestmark = pytest.mark.gpu


def ok(result):
    err, *out = result
    assert err == driver.CUresult.CUDA_SUCCESS, err
    return out[0] if len(out) == 1 else tuple(out)


def driver_uuid(dev):
    raw = bytes(ok(driver.cuDeviceGetUuid(dev)).bytes)
    h = raw.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@pytest.fixture(scope="module")
def devices():
    """[(driver device, NVML handle)] matched by UUID; NVML initialised for the module."""
    ok(driver.cuInit(0))
    nvml.init_v2()
    try:
        pairs = []
        for ordinal in range(ok(driver.cuDeviceGetCount())):
            dev = ok(driver.cuDeviceGet(ordinal))
            pairs.append((dev, nvml.device_get_handle_by_uuid(driver_uuid(dev))))
        yield pairs
    finally:
        nvml.shutdown()


def test_count_and_handles(devices):
    # CUDA_VISIBLE_DEVICES can hide GPUs from the driver API, never from NVML.
    assert nvml.device_get_count_v2() >= len(devices)
    for dev, handle in devices:
        assert isinstance(handle, int) and handle != 0
        assert nvml.device_get_handle_by_index_v2(nvml.device_get_index(handle)) == handle


def test_name_memory_uuid_bus_id_agree_with_the_driver(devices):
    for dev, handle in devices:
        name = ok(driver.cuDeviceGetName(256, dev)).split(b"\0")[0].decode()
        assert nvml.device_get_name(handle) == name
        assert nvml.device_get_uuid(handle) == driver_uuid(dev)
        mem = nvml.device_get_memory_info_v2(handle)
        # NVML's total also counts the memory the driver reserves (about 0.4% of an
        # H200: 150754820096 bytes against CUDA's 150109880320 with driver 580).
        cuda_total = ok(driver.cuDeviceTotalMem(dev))
        assert cuda_total <= mem.total <= cuda_total * 1.02, (mem.total, cuda_total)
        assert mem.used + mem.free + mem.reserved == mem.total or mem.used + mem.free == mem.total
        bus_id = ok(driver.cuDeviceGetPCIBusId(64, dev)).split(b"\0")[0].decode()
        pci = nvml.device_get_pci_info_v3(handle)
        # The driver writes 0000:1A:00.0, NVML 00000000:1A:00.0: the same domain, bus, device, function.
        assert pci.bus_id.upper().endswith(bus_id.upper()[-12:]), (pci.bus_id, bus_id)
        assert nvml.device_get_handle_by_pci_bus_id_v2(pci.bus_id) == handle
        major, minor = nvml.device_get_cuda_compute_capability(handle)
        assert major == ok(driver.cuDeviceGetAttribute(
            driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
        assert minor == ok(driver.cuDeviceGetAttribute(
            driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))


@pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="nvidia-smi is not on the PATH")
def test_agrees_with_nvidia_smi(devices):
    out = subprocess.run(["nvidia-smi", "--query-gpu=index,name,uuid,pci.bus_id,memory.total",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=60, check=True)
    rows = [[c.strip() for c in line.split(",")] for line in out.stdout.strip().splitlines()]
    assert len(rows) == nvml.device_get_count_v2()
    for index, name, uuid, bus_id, total_mib in rows:
        handle = nvml.device_get_handle_by_index_v2(int(index))
        assert nvml.device_get_name(handle) == name
        assert nvml.device_get_uuid(handle) == uuid
        assert nvml.device_get_pci_info_v3(handle).bus_id.upper() == bus_id.upper()
        assert nvml.device_get_memory_info_v2(handle).total // (1 << 20) == int(total_mib)
    assert nvml.system_get_driver_version() in subprocess.run(
        ["nvidia-smi"], capture_output=True, text=True, timeout=60).stdout


@pytest.mark.multi_gpu
def test_p2p_status_agrees_with_the_driver(devices):
    (dev_a, a), (dev_b, b) = devices[:2]
    can = ok(driver.cuDeviceCanAccessPeer(dev_a, dev_b))
    read = nvml.device_get_p2p_status(a, b, nvml.GpuP2PCapsIndex.P2P_CAPS_INDEX_READ)
    assert isinstance(read, int)
    assert (read == nvml.GpuP2PStatus.P2P_STATUS_OK) == bool(can), (read, can)
    level = nvml.device_get_topology_common_ancestor(a, b)
    assert level in set(nvml.GpuTopologyLevel.__members__.values())


def test_calls_that_build_a_versioned_struct_agree_with_nvidia_smi(devices):
    # Each call fills an NVML struct from its arguments and sets the struct's version
    # from nvml.h; a driver that refused the version would raise ArgumentVersionMismatchError.
    out = subprocess.run(["nvidia-smi", "--query-gpu=uuid,temperature.gpu,pstate,pci.bus_id",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=60, check=True)
    smi = {row[0]: row for row in ([c.strip() for c in line.split(",")] for line in out.stdout.strip().splitlines())}
    branch = nvml.system_get_driver_branch()
    assert type(branch) is str and branch.startswith("r"), branch
    unknown = nvml.Pstates.PSTATE_UNKNOWN
    for dev, handle in devices:
        row = smi[nvml.device_get_uuid(handle)]
        assert nvml.device_get_pci_info_ext(handle).bus_id.upper() == row[3].upper()
        temperature = nvml.device_get_temperature_v(handle, nvml.TemperatureSensors.TEMPERATURE_GPU)
        assert type(temperature) is int and abs(temperature - int(row[1])) <= 5, (temperature, row[1])
        states = nvml.device_get_supported_performance_states(handle)
        assert len(states) == 16 and states[0] != unknown
        current = nvml.device_get_performance_state(handle)
        assert row[2] == f"P{int(current)}" and current in states, (row[2], states)
        # Data-center GPUs may refuse these two; a refusal is NotSupportedError, never a version mismatch.
        try:
            offsets = nvml.device_get_clock_offsets(handle, nvml.ClockType.CLOCK_GRAPHICS, states[0])
        except nvml.NotSupportedError:
            pass
        else:
            assert offsets.min_clock_offset_m_hz <= offsets.clock_offset_m_hz <= offsets.max_clock_offset_m_hz
        try:
            assert isinstance(nvml.device_get_margin_temperature(handle), int)
        except nvml.NotSupportedError:
            pass
        # NVML_FI_DEV_NVLINK_LINK_COUNT (91), and field 0, which is no field.
        link_count, bad = nvml.device_get_field_values(handle, [91, 0])
        # Where NVML reports no NVLink for the GPU, the field is NOT_SUPPORTED (an H200, driver 580).
        assert link_count.nvml_return in (nvml.Return.SUCCESS, nvml.Return.ERROR_NOT_SUPPORTED), link_count.nvml_return
        if link_count.nvml_return == nvml.Return.SUCCESS:
            assert 0 <= link_count.value.ui_val <= nvml.NVLINK_MAX_LINKS
        assert bad.nvml_return != nvml.Return.SUCCESS


def test_prm_access_answers_or_says_why(devices):
    # PRM registers are for Blackwell and newer (nvml.h): elsewhere NVML says so
    # with its error class; where it answers, the counters array comes back filled.
    handle = devices[0][1]
    counters = nvml.PRMCounter_v1(2)
    counters.counter_id = [nvml.PRMCounterId.PPCNT_PHYSICAL_LAYER_CTRS_LINK_DOWN_EVENTS,
                           nvml.PRMCounterId.PPRM_OPER_RECOVERY]
    refusals = (nvml.NotSupportedError, nvml.NoPermissionError, nvml.InvalidArgumentError)
    try:
        assert nvml.device_read_prm_counters_v1(handle, counters) is counters
    except refusals:
        pass
    else:
        assert len(counters.counter_value.status) == 2
    try:
        status, out = nvml.device_read_write_prm_v1(handle, b"\x00" * 16)
    except refusals:
        pass
    else:
        assert isinstance(status, int) and isinstance(out, bytes)
