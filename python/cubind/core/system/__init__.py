"""cubind.core.system: the machine's GPUs as NVIDIA's management library (NVML)
sees them, cuda.core 1.2's ``cuda.core.system``.

The driver's versions and the device count; :class:`Device`, a GPU by NVML
index, UUID or PCI bus id, with its name, memory, temperatures, clocks, fans,
PCI and NVLink state, utilization, processes and events; the topology and
peer-to-peer status between two GPUs; NVML's error classes. It runs over
cubind.bindings.nvml and loads no CUDA library: it works where no CUDA
context can be made. :meth:`Device.to_cuda_device` and
:meth:`cubind.core.Device.to_system_device` go between a GPU's two views.

Importing it loads no library; the first query loads NVML
(``libnvidia-ml.so.1``, installed with the driver) and initializes it, and
where the driver is missing that query raises the error that says so.
``import cubind.core`` does not import this subpackage: it loads at its first
use (``cubind.core.system``, or ``from cubind.core import system``).
"""

from cubind.core.system import typing
from cubind.core.system._device import Device, NvlinkInfo, get_p2p_status, get_topology_common_ancestor
from cubind.core.system._system import (
    CUDA_BINDINGS_NVML_IS_COMPATIBLE,
    get_driver_branch,
    get_kernel_mode_driver_version,
    get_num_devices,
    get_nvml_version,
    get_process_name,
    get_user_mode_driver_version,
)
from cubind.core.system._system_events import register_events
from cubind.core.system.exceptions import *  # noqa: F403

__all__ = [
    "CUDA_BINDINGS_NVML_IS_COMPATIBLE",
    "get_driver_branch",
    "get_kernel_mode_driver_version",
    "get_num_devices",
    "get_nvml_version",
    "get_process_name",
    "get_user_mode_driver_version",
    "Device",
    "get_p2p_status",
    "get_topology_common_ancestor",
    "NvlinkInfo",
    "register_events",
    "AlreadyInitializedError",
    "ArgumentVersionMismatchError",
    "CorruptedInforomError",
    "DeprecatedError",
    "DriverNotLoadedError",
    "FreqNotSupportedError",
    "FunctionNotFoundError",
    "GpuIsLostError",
    "GpuNotFoundError",
    "InUseError",
    "InsufficientPowerError",
    "InsufficientResourcesError",
    "InsufficientSizeError",
    "InvalidArgumentError",
    "InvalidStateError",
    "IrqIssueError",
    "LibRmVersionMismatchError",
    "LibraryNotFoundError",
    "MemoryError",
    "NoDataError",
    "NoPermissionError",
    "NotFoundError",
    "NotReadyError",
    "NotSupportedError",
    "NvmlError",
    "OperatingSystemError",
    "ResetRequiredError",
    "ResetTypeNotSupportedError",
    "TimeoutError",
    "UninitializedError",
    "UnknownError",
    "VgpuEccNotSupportedError",
]
