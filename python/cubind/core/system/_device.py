"""cubind.core.system.Device: a GPU as NVML sees it, and what it reports.

Every query is one NVML call through cubind.bindings.nvml (named in each
docstring), made when the property is read: nothing is cached, so each read
is the device's state now. A ``Device`` holds an NVML device handle, which
stays valid while NVML is initialized in the process (NVML handles are not
freed).
"""

from __future__ import annotations

import math
import os
from typing import Iterable

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V

from cubind.core.system._clock import _CLOCKS_EVENT_REASONS_MAPPING, ClockInfo
from cubind.core.system._cooler import CoolerInfo
from cubind.core.system._device_attributes import DeviceAttributes
from cubind.core.system._device_utils import (
    _bits_to_members,
    _choice,
    _device_from_handle,
    _enabled,
    _field_ids,
    _int,
    _pstate_to_int,
    _text,
    _unpack_bitmask,
    _unsigned,
)
from cubind.core.system._event import _EVENT_TYPE_MAPPING, DeviceEvents
from cubind.core.system._fan import FanInfo
from cubind.core.system._field_values import FieldValues
from cubind.core.system._inforom import InforomInfo
from cubind.core.system._memory import BAR1MemoryInfo, MemoryInfo
from cubind.core.system._mig import MigInfo
from cubind.core.system._nvlink import NvlinkInfo
from cubind.core.system._nvml_context import initialize
from cubind.core.system._pci_info import PciInfo
from cubind.core.system._performance import GpuDynamicPstatesInfo, Utilization
from cubind.core.system._process import ProcessInfo
from cubind.core.system._repair_status import RepairStatus
from cubind.core.system._temperature import Temperature
from cubind.core.system.typing import (
    AddressingMode,
    AffinityScope,
    ClocksEventReasons,
    ClockType,
    DeviceArch,
    EventType,
    GpuP2PCapsIndex,
    GpuP2PStatus,
    GpuTopologyLevel,
)

# The classes a Device returns, each in the module of its concern, are also
# names of this module, as they are of cuda.core.system._device.
from cubind.core.system._clock import ClockOffsets  # noqa: E402, F401
from cubind.core.system._event import EventData  # noqa: E402, F401
from cubind.core.system._field_values import FieldValue  # noqa: E402, F401
from cubind.core.system._performance import GpuDynamicPstatesUtilization  # noqa: E402, F401
from cubind.core.system._temperature import ThermalSensor, ThermalSettings  # noqa: E402, F401

__all__ = ["Device", "get_p2p_status", "get_topology_common_ancestor", "NvlinkInfo"]


_ADDRESSING_MODE_MAPPING = {
    V.ADDRESSING_MODE_HMM: AddressingMode.HMM,
    V.ADDRESSING_MODE_ATS: AddressingMode.ATS,
}

_AFFINITY_SCOPE_MAPPING = {
    AffinityScope.NODE: V.AFFINITY_SCOPE_NODE,
    AffinityScope.SOCKET: V.AFFINITY_SCOPE_SOCKET,
}

_BRAND_TYPE_MAPPING = V.BRANDS

_GPU_P2P_CAPS_INDEX_MAPPING = {member: V.P2P_CAPS_INDEX[member.name] for member in GpuP2PCapsIndex}

# PROP shares PCI's value: the status of either is the status of the value.
_GPU_P2P_STATUS_MAPPING = {V.P2P_STATUS[member.name]: member for member in GpuP2PStatus}

_GPU_TOPOLOGY_LEVEL_MAPPING = {member: V.TOPOLOGY[member.name] for member in GpuTopologyLevel}
_GPU_TOPOLOGY_LEVEL_INV_MAPPING = {int(value): member for member, value in _GPU_TOPOLOGY_LEVEL_MAPPING.items()}


class Device:
    """A GPU as NVIDIA's management library (NVML) sees it: identity, memory,
    temperatures, clocks, PCI and NVLink, processes and events.

    Name exactly one of ``index``, ``uuid`` or ``pci_bus_id``. NVML counts
    every GPU of the machine in its own order (CUDA_VISIBLE_DEVICES hides
    none), so its index need not be CUDA's; :meth:`to_cuda_device` and
    :meth:`cubind.core.Device.to_system_device` go between the two by UUID.
    To run CUDA work, use :class:`cubind.core.Device`.

    Parameters
    ----------
    index: int, optional
        NVML's index of the device, 0 to ``get_num_devices() - 1``
        (nvmlDeviceGetHandleByIndex_v2). The order may change across reboots.
    uuid: bytes or str, optional
        The device's UUID, as NVML writes it (``"GPU-..."``, ``"MIG-..."``) or
        as CUDA does, without the prefix (nvmlDeviceGetHandleByUUID).
    pci_bus_id: bytes or str, optional
        The device's PCI bus id, e.g. ``"0000:3b:00.0"``
        (nvmlDeviceGetHandleByPciBusId_v2).

    Raises
    ------
    ValueError
        None or more than one of ``index``, ``uuid`` and ``pci_bus_id`` given.
    """

    _handle: int

    def __init__(
        self,
        *,
        index: int | None = None,
        uuid: bytes | str | None = None,
        pci_bus_id: bytes | str | None = None,
    ) -> None:
        given = sum(arg is not None for arg in (index, uuid, pci_bus_id))
        if given > 1:
            raise ValueError(
                f"Handle requires only one of `index`, `uuid`, or `pci_bus_id`, got index={index!r}, "
                f"uuid={uuid!r}, pci_bus_id={pci_bus_id!r}"
            )
        if given == 0:
            raise ValueError("Handle requires either a device `index`, `uuid`, or `pci_bus_id`.")
        if index is not None:
            index = _unsigned(index, "index")
            initialize()
            self._handle = int(nvml.device_get_handle_by_index_v2(index))
        elif uuid is not None:
            uuid = _text(uuid, "uuid")
            initialize()
            self._handle = int(nvml.device_get_handle_by_uuid(uuid))
        else:
            pci_bus_id = _text(pci_bus_id, "pci_bus_id")
            initialize()
            self._handle = int(nvml.device_get_handle_by_pci_bus_id_v2(pci_bus_id))

    def __repr__(self):
        return f"<cubind.core.system.Device handle={self._handle:#x}>"

    # identity

    @property
    def index(self) -> int:
        """NVML's index of this device (nvmlDeviceGetIndex); need not be CUDA's."""
        return nvml.device_get_index(self._handle)

    @property
    def uuid(self) -> str:
        """The device's UUID as NVML writes it, with its ``GPU-`` or ``MIG-``
        prefix (nvmlDeviceGetUUID)."""
        return nvml.device_get_uuid(self._handle)

    @property
    def uuid_without_prefix(self) -> str:
        """The device's UUID without NVML's prefix, as CUDA writes it
        (:attr:`cubind.core.Device.uuid`)."""
        return nvml.device_get_uuid(self._handle)[4:]

    @property
    def pci_bus_id(self) -> str:
        """The device's PCI bus id, ``"domain:bus:device.function"``."""
        return self.pci_info.bus_id

    @property
    def numa_node_id(self) -> int:
        """The NUMA node the GPU is, where GPUs are NUMA nodes (nvmlDeviceGetNumaNodeId)."""
        return nvml.device_get_numa_node_id(self._handle)

    @property
    def arch(self) -> DeviceArch:
        """The device's architecture (nvmlDeviceGetArchitecture); UNKNOWN for one
        newer than this package."""
        arch = int(nvml.device_get_architecture(self._handle))
        try:
            return DeviceArch(arch)
        except ValueError:
            return DeviceArch.UNKNOWN

    @property
    def name(self) -> str:
        """The product name, e.g. ``"NVIDIA H100 80GB HBM3"`` (nvmlDeviceGetName)."""
        return nvml.device_get_name(self._handle)

    @property
    def brand(self) -> str:
        """The brand, e.g. ``"NVIDIA"`` or ``"GeForce RTX"``; ``"Unknown"`` if NVML
        does not say (nvmlDeviceGetBrand)."""
        return _BRAND_TYPE_MAPPING.get(int(nvml.device_get_brand(self._handle)), "Unknown")

    @property
    def serial(self) -> str:
        """The board's serial number (nvmlDeviceGetSerial)."""
        return nvml.device_get_serial(self._handle)

    @property
    def module_id(self) -> int:
        """The GPU module's id on its baseboard; 0 off a baseboard (nvmlDeviceGetModuleId)."""
        return nvml.device_get_module_id(self._handle)

    @property
    def minor_number(self) -> int:
        """The minor number of the device's ``/dev/nvidiaN`` node (nvmlDeviceGetMinorNumber)."""
        return nvml.device_get_minor_number(self._handle)

    @property
    def is_c2c_enabled(self) -> bool:
        """Whether chip-to-chip (C2C) mode is on (nvmlDeviceGetC2cModeInfoV)."""
        return bool(nvml.device_get_c2c_mode_info_v(self._handle).is_c2c_enabled)

    @property
    def is_persistence_mode_enabled(self) -> bool:
        """Whether persistence mode is on (nvmlDeviceGetPersistenceMode); set it to
        change it (nvmlDeviceSetPersistenceMode, needs root)."""
        return _enabled(nvml.device_get_persistence_mode(self._handle))

    @is_persistence_mode_enabled.setter
    def is_persistence_mode_enabled(self, enabled: bool) -> None:
        state = V.FEATURE_ENABLED if enabled else V.FEATURE_DISABLED
        nvml.device_set_persistence_mode(self._handle, state)

    @property
    def cuda_compute_capability(self) -> tuple[int, int]:
        """The compute capability as ``(major, minor)``, e.g. ``(9, 0)``
        (nvmlDeviceGetCudaComputeCapability)."""
        return tuple(nvml.device_get_cuda_compute_capability(self._handle))

    def to_cuda_device(self):
        """The :class:`cubind.core.Device` of this GPU, found by UUID.

        Raises
        ------
        RuntimeError
            CUDA has no device of this UUID: e.g. the GPU is hidden by
            CUDA_VISIBLE_DEVICES, or it is a MIG-enabled GPU, whose MIG devices,
            not the GPU itself, are what CUDA sees.
        """
        from cubind.core import Device as CudaDevice

        uuid = self.uuid_without_prefix
        for cuda_device in CudaDevice.get_all_devices():
            if cuda_device.uuid == uuid:
                return cuda_device
        raise RuntimeError(
            f"No corresponding CUDA device found for this NVML device (UUID {self.uuid}): "
            "CUDA does not see it (CUDA_VISIBLE_DEVICES, or a MIG-enabled GPU)"
        )

    @classmethod
    def get_device_count(cls) -> int:
        """The number of GPUs NVML sees (nvmlDeviceGetCount_v2)."""
        initialize()
        return nvml.device_get_count_v2()

    @classmethod
    def get_all_devices(cls) -> Iterable[Device]:
        """Every GPU NVML sees, in NVML's order (a generator)."""
        initialize()
        for index in range(nvml.device_get_count_v2()):
            yield cls(index=index)

    @property
    def addressing_mode(self) -> AddressingMode | None:
        """How system memory is addressable from the device; None for neither
        (nvmlDeviceGetAddressingMode)."""
        return _ADDRESSING_MODE_MAPPING.get(int(nvml.device_get_addressing_mode(self._handle).value))

    @property
    def mig(self) -> MigInfo:
        """The device's Multi-Instance GPU state."""
        return MigInfo(self)

    # affinity

    @classmethod
    def get_all_devices_with_cpu_affinity(cls, cpu_index: int) -> Iterable[Device]:
        """The GPUs with affinity to CPU ``cpu_index`` (nvmlSystemGetTopologyGpuSet)."""
        cpu_index = _unsigned(cpu_index, "cpu_index")
        initialize()
        for handle in nvml.system_get_topology_gpu_set(cpu_index):
            yield _device_from_handle(handle)

    @staticmethod
    def _mask_words():
        return max(1, math.ceil((os.cpu_count() or 1) / 64))

    def get_memory_affinity(self, scope: AffinityScope | str = AffinityScope.NODE) -> list[int]:
        """The NUMA nodes (or CPU sockets, with ``scope="socket"``) nearest the
        device's memory (nvmlDeviceGetMemoryAffinity)."""
        scope = _choice(_AFFINITY_SCOPE_MAPPING, scope, "scope", AffinityScope)
        return _unpack_bitmask(nvml.device_get_memory_affinity(self._handle, self._mask_words(), scope))

    def get_cpu_affinity(self, scope: AffinityScope | str = AffinityScope.NODE) -> list[int]:
        """The NUMA nodes (or CPU sockets, with ``scope="socket"``) whose CPUs are
        nearest the device (nvmlDeviceGetCpuAffinityWithinScope)."""
        scope = _choice(_AFFINITY_SCOPE_MAPPING, scope, "scope", AffinityScope)
        return _unpack_bitmask(nvml.device_get_cpu_affinity_within_scope(self._handle, self._mask_words(), scope))

    def set_cpu_affinity(self) -> None:
        """Bind the calling thread to the CPUs nearest the device (nvmlDeviceSetCpuAffinity)."""
        nvml.device_set_cpu_affinity(self._handle)

    def clear_cpu_affinity(self) -> None:
        """Undo :meth:`set_cpu_affinity` for the calling thread (nvmlDeviceClearCpuAffinity)."""
        nvml.device_clear_cpu_affinity(self._handle)

    # clocks

    def get_clock(self, clock_type: ClockType | str) -> ClockInfo:
        """One clock domain of the device: graphics, sm, memory or video."""
        return ClockInfo(self._handle, clock_type)

    @property
    def is_auto_boosted_clocks_enabled(self) -> tuple[bool, bool]:
        """``(current, default)`` state of auto boosted clocks
        (nvmlDeviceGetAutoBoostedClocksEnabled)."""
        current, default = nvml.device_get_auto_boosted_clocks_enabled(self._handle)
        return _enabled(current), _enabled(default)

    @property
    def current_clock_event_reasons(self) -> list[ClocksEventReasons]:
        """Why the clocks are held down now (nvmlDeviceGetCurrentClocksEventReasons)."""
        mask = int(nvml.device_get_current_clocks_event_reasons(self._handle))
        return _bits_to_members(mask, _CLOCKS_EVENT_REASONS_MAPPING, "clock event reason")

    @property
    def supported_clock_event_reasons(self) -> list[ClocksEventReasons]:
        """The reasons :attr:`current_clock_event_reasons` can report on this device
        (nvmlDeviceGetSupportedClocksEventReasons)."""
        mask = int(nvml.device_get_supported_clocks_event_reasons(self._handle))
        return _bits_to_members(mask, _CLOCKS_EVENT_REASONS_MAPPING, "clock event reason")

    @property
    def cooler(self) -> CoolerInfo:
        """The device's cooler (nvmlDeviceGetCoolerInfo)."""
        return CoolerInfo(nvml.device_get_cooler_info(self._handle))

    @property
    def attributes(self) -> DeviceAttributes:
        """Engine counts and memory size (nvmlDeviceGetAttributes_v2)."""
        return DeviceAttributes(nvml.device_get_attributes_v2(self._handle))

    @property
    def is_display_connected(self) -> bool:
        """Whether a monitor is connected (nvmlDeviceGetDisplayMode)."""
        return _enabled(nvml.device_get_display_mode(self._handle))

    @property
    def is_display_active(self) -> bool:
        """Whether a display is initialized on the device, e.g. for an X server,
        with or without a monitor (nvmlDeviceGetDisplayActive)."""
        return _enabled(nvml.device_get_display_active(self._handle))

    # events

    def register_events(self, events: EventType | str | list[EventType | str]) -> DeviceEvents:
        """Start recording ``events`` on this device (nvmlEventSetCreate,
        nvmlDeviceRegisterEvents); wait for them with :meth:`DeviceEvents.wait`.

        Raises
        ------
        cubind.core.system.NotSupportedError
            The device records none of the events asked for.
        """
        return DeviceEvents(self._handle, events)

    def get_supported_event_types(self) -> list[EventType]:
        """The events this device can record (nvmlDeviceGetSupportedEventTypes)."""
        mask = int(nvml.device_get_supported_event_types(self._handle))
        return _bits_to_members(mask, _EVENT_TYPE_MAPPING, "event type")

    # fans

    def get_fan(self, fan: int = 0) -> FanInfo:
        """Fan ``fan`` of the device, 0 to ``num_fans - 1``."""
        fan = _int(fan, "fan")
        count = self.num_fans
        if not 0 <= fan < count:
            raise ValueError(f"Fan index {fan} is out of range [0, {count})")
        return FanInfo(self._handle, fan)

    @property
    def num_fans(self) -> int:
        """The number of fans (nvmlDeviceGetNumFans)."""
        return nvml.device_get_num_fans(self._handle)

    # field values

    def get_field_values(self, field_ids: list[int | tuple[int, int]]) -> FieldValues:
        """Read several NVML fields at once (nvmlDeviceGetFieldValues).

        Each item is a :class:`FieldId` or a ``(FieldId, scope_id)`` pair. A field
        NVML could not read raises its error when its ``value`` is read; call
        :meth:`FieldValues.validate` to check them all.
        """
        field_ids = _field_ids(field_ids)
        if not field_ids:
            return FieldValues([])
        return FieldValues(nvml.device_get_field_values(self._handle, field_ids))

    def clear_field_values(self, field_ids: list[int | tuple[int, int]]) -> None:
        """Reset the fields' counters (nvmlDeviceClearFieldValues); items as
        :meth:`get_field_values` takes them."""
        field_ids = _field_ids(field_ids)
        if field_ids:
            nvml.device_clear_field_values(self._handle, field_ids)

    @property
    def inforom(self) -> InforomInfo:
        """The device's InfoROM."""
        return InforomInfo(self)

    # memory

    @property
    def bar1_memory_info(self) -> BAR1MemoryInfo:
        """The BAR1 aperture, through which the CPU and peers reach device memory
        (nvmlDeviceGetBAR1MemoryInfo)."""
        return BAR1MemoryInfo(nvml.device_get_bar1_memory_info(self._handle))

    @property
    def memory_info(self) -> MemoryInfo:
        """Device memory: total, free, used, reserved (nvmlDeviceGetMemoryInfo_v2)."""
        return MemoryInfo(nvml.device_get_memory_info_v2(self._handle))

    # NVLink

    def get_nvlink(self, link: int) -> NvlinkInfo:
        """NVLink ``link`` of the device, 0 to ``get_nvlink_count() - 1``
        (ValueError beyond)."""
        link = _int(link, "link")
        count = self.get_nvlink_count()
        if not 0 <= link < count:
            raise ValueError(f"Link index {link} is out of range [0, {count})")
        return NvlinkInfo(self, link)

    def get_nvlink_count(self) -> int:
        """The device's number of NVLinks (field NVML_FI_DEV_NVLINK_LINK_COUNT)."""
        return int(self.get_field_values([V.FI_DEV_NVLINK_LINK_COUNT])[0].value)

    def get_nvlinks(self) -> Iterable[NvlinkInfo]:
        """Every NVLink of the device."""
        for link in range(self.get_nvlink_count()):
            yield self.get_nvlink(link)

    @property
    def pci_info(self) -> PciInfo:
        """The device's PCI identity and link (nvmlDeviceGetPciInfoExt).

        Raises
        ------
        RuntimeError
            The device has no PCI attributes (e.g. a MIG device).
        """
        try:
            info = nvml.device_get_pci_info_ext(self._handle)
        except nvml.InvalidArgumentError:
            raise RuntimeError("This device does not have PCI attributes (e.g. a MIG device)") from None
        return PciInfo(info, self._handle)

    # performance

    @property
    def performance_state(self) -> int | None:
        """The performance state now, 0 (P0, fastest) to 15; None if unknown
        (nvmlDeviceGetPerformanceState)."""
        return _pstate_to_int(nvml.device_get_performance_state(self._handle))

    @property
    def dynamic_pstates_info(self) -> GpuDynamicPstatesInfo:
        """The utilization domains that drive P-state changes
        (nvmlDeviceGetDynamicPstatesInfo)."""
        return GpuDynamicPstatesInfo(nvml.device_get_dynamic_pstates_info(self._handle))

    @property
    def supported_pstates(self) -> list[int]:
        """The performance states the device supports, 0 (fastest) to 15
        (nvmlDeviceGetSupportedPerformanceStates)."""
        states = (_pstate_to_int(p) for p in nvml.device_get_supported_performance_states(self._handle))
        return [p for p in states if p is not None]

    @property
    def compute_running_processes(self) -> list[ProcessInfo]:
        """The processes with a compute context on the device
        (nvmlDeviceGetComputeRunningProcesses_v3); graphics-only processes are not
        listed."""
        processes = nvml.device_get_compute_running_processes_v3(self._handle)
        return [ProcessInfo(self, processes[i]) for i in range(len(processes))]

    @property
    def repair_status(self) -> RepairStatus:
        """Pending TPC and channel repairs (nvmlDeviceGetRepairStatus)."""
        return RepairStatus(self._handle)

    @property
    def temperature(self) -> Temperature:
        """The device's temperatures and thresholds."""
        return Temperature(self._handle)

    def get_topology_nearest_gpus(self, level: GpuTopologyLevel | str) -> Iterable[Device]:
        """The GPUs connected to this one at ``level`` (nvmlDeviceGetTopologyNearestGpus)."""
        level = _choice(_GPU_TOPOLOGY_LEVEL_MAPPING, level, "level", GpuTopologyLevel)
        for handle in nvml.device_get_topology_nearest_gpus(self._handle, level):
            yield _device_from_handle(handle)

    @property
    def utilization(self) -> Utilization:
        """GPU and memory utilization over NVML's last sample period
        (nvmlDeviceGetUtilizationRates)."""
        return Utilization(nvml.device_get_utilization_rates(self._handle))


def _check_device(device, parameter):
    if not isinstance(device, Device):
        raise TypeError(
            f"{parameter} must be a cubind.core.system.Device, got {type(device).__name__}"
            + (" (a cubind.core.Device's is device.to_system_device())" if hasattr(device, "to_system_device") else "")
        )
    return device._handle


def get_topology_common_ancestor(device1: Device, device2: Device) -> GpuTopologyLevel:
    """How close two GPUs are: the nearest level of the PCIe/NUMA topology they
    share (nvmlDeviceGetTopologyCommonAncestor)."""
    handle1 = _check_device(device1, "device1")
    handle2 = _check_device(device2, "device2")
    return _GPU_TOPOLOGY_LEVEL_INV_MAPPING[int(nvml.device_get_topology_common_ancestor(handle1, handle2))]


def get_p2p_status(device1: Device, device2: Device, index: GpuP2PCapsIndex | str) -> GpuP2PStatus:
    """Whether ``device1`` can reach ``device2`` peer to peer in the way ``index``
    names (read, write, NVLink, atomics, PCI, prop) (nvmlDeviceGetP2PStatus)."""
    caps = _choice(_GPU_P2P_CAPS_INDEX_MAPPING, index, "index", GpuP2PCapsIndex)
    handle1 = _check_device(device1, "device1")
    handle2 = _check_device(device2, "device2")
    return _GPU_P2P_STATUS_MAPPING.get(int(nvml.device_get_p2p_status(handle1, handle2, caps)), GpuP2PStatus.UNKNOWN)
