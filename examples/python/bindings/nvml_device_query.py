"""What NVML says of each GPU, checked against the driver API: name, UUID,
PCI bus id and total memory through cuda.bindings.nvml (device_get_name,
device_get_uuid, device_get_pci_info_v3, device_get_memory_info_v2), the same
facts through cuDeviceGetName, cuDeviceGetUuid, cuDeviceGetPCIBusId and
cuDeviceTotalMem, and the P2P status and common ancestor of each pair of GPUs.
Also the driver's branch, each GPU's temperature and its P-states, through
calls whose NVML struct the bindings fill from the arguments
(system_get_driver_branch, device_get_temperature_v,
device_get_supported_performance_states).

NVML's functions raise on failure and return their outputs; the driver's
return (status, *outputs). Devices are matched by UUID: NVML numbers them in PCI
order, CUDA fastest first. Has no kernels to compile."""

import sys

from cuda.bindings import driver, nvml

from helpers import checkCudaErrors, findCudaDevice, skip


def uuid_text(raw: bytes) -> str:
    h = raw.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def main() -> None:
    findCudaDevice()
    try:
        nvml.init_v2()
    except (nvml.NvmlError, RuntimeError) as exc:
        skip(f"no GPU: NVML cannot start: {exc}")
    failures = 0
    try:
        print(f"driver {nvml.system_get_driver_version()}, NVML {nvml.system_get_nvml_version()}, "
              f"{nvml.device_get_count_v2()} GPU(s), branch {nvml.system_get_driver_branch()}")
        count = checkCudaErrors(driver.cuDeviceGetCount())
        handles = []
        for ordinal in range(count):
            device = checkCudaErrors(driver.cuDeviceGet(ordinal))
            uuid = uuid_text(bytes(checkCudaErrors(driver.cuDeviceGetUuid(device)).bytes))
            handle = nvml.device_get_handle_by_uuid(uuid)
            handles.append(handle)
            name = checkCudaErrors(driver.cuDeviceGetName(256, device)).split(b"\0")[0].decode()
            total = checkCudaErrors(driver.cuDeviceTotalMem(device))
            bus_id = checkCudaErrors(driver.cuDeviceGetPCIBusId(64, device)).split(b"\0")[0].decode()
            memory = nvml.device_get_memory_info_v2(handle)
            pci = nvml.device_get_pci_info_v3(handle)
            print(f"CUDA device {ordinal} = NVML device {nvml.device_get_index(handle)}: "
                  f"{nvml.device_get_name(handle)}, {uuid}, {pci.bus_id}, "
                  f"{memory.used / 2**30:.1f} of {memory.total / 2**30:.1f} GiB used")
            checks = [("name", nvml.device_get_name(handle), name),
                      ("uuid", nvml.device_get_uuid(handle), uuid),
                      # NVML's total also counts what the driver reserves for itself
                      # (about 0.4% of an H200); CUDA's is what allocations can use.
                      ("total memory", total <= memory.total <= total * 1.02, True),
                      ("PCI bus id", pci.bus_id.upper()[-12:], bus_id.upper()[-12:])]
            temperature = nvml.device_get_temperature_v(handle, nvml.TemperatureSensors.TEMPERATURE_GPU)
            unknown = int(nvml.Pstates.PSTATE_UNKNOWN)
            pstates = [int(p) for p in nvml.device_get_supported_performance_states(handle) if int(p) != unknown]
            print(f"  {temperature} C, P-states {', '.join(f'P{p}' for p in pstates)}")
            checks += [("temperature in 1..119 C", 0 < temperature < 120, True),
                       ("P-states listed, each 0..15", bool(pstates) and all(0 <= p <= 15 for p in pstates), True)]
            for what, theirs, ours in checks:
                if theirs != ours:
                    print(f"  {what}: NVML says {theirs!r}, the driver {ours!r}")
                    failures += 1
        for i in range(len(handles)):
            for j in range(len(handles)):
                if i == j:
                    continue
                read = nvml.device_get_p2p_status(handles[i], handles[j], nvml.GpuP2PCapsIndex.P2P_CAPS_INDEX_READ)
                level = nvml.device_get_topology_common_ancestor(handles[i], handles[j])
                can = checkCudaErrors(driver.cuDeviceCanAccessPeer(
                    checkCudaErrors(driver.cuDeviceGet(i)), checkCudaErrors(driver.cuDeviceGet(j))))
                print(f"GPU {i} -> GPU {j}: peer reads {nvml.GpuP2PStatus(read).name}, "
                      f"joined at {nvml.GpuTopologyLevel(level).name}, cuDeviceCanAccessPeer {can}")
                if (read == nvml.GpuP2PStatus.P2P_STATUS_OK) != bool(can):
                    print("  NVML's P2P status and cuDeviceCanAccessPeer disagree")
                    failures += 1
    finally:
        nvml.shutdown()
    if failures:
        print("Test FAILED")
        sys.exit(1)
    print("Test PASSED")


if __name__ == "__main__":
    main()
