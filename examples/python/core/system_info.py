"""The machine's GPUs as NVIDIA's management library (NVML) sees them,
through the system module: driver and NVML versions, then for each GPU its
identity, memory, temperature, clocks, PCI link, utilization and NVLinks,
the CUDA device of the same UUID (Device.to_system_device and back), and,
with two GPUs or more, the topology and peer-to-peer status of each pair,
checked against what CUDA says of peer access. Without NVML (no driver) the
example says why and skips."""
import os
import sys
from typing import Any, Callable, TypeVar

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import skip  # noqa: E402

from cuda.core import Device, system  # noqa: E402

T = TypeVar("T")


def optional(get: Callable[[], T]) -> Any:
    """The answer, or "n/a" where this GPU or this container does not give it."""
    try:
        return get()
    except (system.NotSupportedError, system.NoPermissionError) as error:
        return f"n/a ({error.__class__.__name__})"


try:
    count = system.get_num_devices()
except Exception as error:  # no NVML library, no driver loaded
    skip(f"{error.__class__.__name__}: {' '.join(str(error).split())}")
if count == 0:
    skip("NVML sees no GPU")
if not hasattr(system, "Device"):
    # NVIDIA's package defines system.Device only over cuda-bindings >= 13.1.2 (its nvml module).
    print("skipped: this package's system module has no Device; install cuda-bindings >= 13.1.2 beside it")
    sys.exit(0)

print(f"CUDA driver {'.'.join(map(str, system.get_user_mode_driver_version()))}, "
      f"kernel driver {'.'.join(map(str, system.get_kernel_mode_driver_version()))} "
      f"({system.get_driver_branch()}), NVML {'.'.join(map(str, system.get_nvml_version()))}, "
      f"{count} GPU(s)")

for gpu in system.Device.get_all_devices():
    memory = gpu.memory_info
    print(f"[{gpu.index}] {gpu.name} ({gpu.arch.name}, compute {gpu.cuda_compute_capability}) "
          f"{gpu.uuid} at {gpu.pci_bus_id}")
    print(f"    memory {memory.used / 2**30:.1f} of {memory.total / 2**30:.1f} GiB used, "
          f"temperature {gpu.temperature.get_sensor()} C, P-state {gpu.performance_state}")
    sm = gpu.get_clock("sm")
    print(f"    SM clock {sm.get_current_mhz()} of {sm.get_max_mhz()} MHz, "
          f"memory clock {gpu.get_clock('memory').get_current_mhz()} MHz, "
          f"utilization {optional(lambda: gpu.utilization.gpu)}%")
    pci = gpu.pci_info
    print(f"    PCIe gen {pci.current_link_generation}/{pci.max_link_generation} "
          f"x{pci.current_link_width}/{pci.max_link_width}, "
          f"NVLinks active {optional(lambda: sum(link.state for link in gpu.get_nvlinks()))}, "
          f"processes {optional(lambda: len(gpu.compute_running_processes))}")

cuda_devices = Device.get_all_devices()
for cuda_device in cuda_devices:
    nvml_device = cuda_device.to_system_device()
    back = nvml_device.to_cuda_device()
    assert back.device_id == cuda_device.device_id, (back.device_id, cuda_device.device_id)
    assert nvml_device.uuid_without_prefix == cuda_device.uuid
    assert nvml_device.name == cuda_device.name
    print(f"CUDA device {cuda_device.device_id} is NVML device {nvml_device.index}")

for i, first in enumerate(cuda_devices):
    for second in cuda_devices[i + 1:]:
        a, b = first.to_system_device(), second.to_system_device()
        level = system.get_topology_common_ancestor(a, b)
        status = system.get_p2p_status(a, b, "read")
        assert (status == "ok") == first.can_access_peer(second), (status, first.can_access_peer(second))
        print(f"CUDA {first.device_id} <-> {second.device_id}: topology {level}, peer read {status}, "
              f"NVLink {system.get_p2p_status(a, b, 'nvlink')}")
print("done")
