"""cubind.core.system.Device: a GPU as NVML sees it, and what it reports.

Every query is one NVML call through cubind.bindings.nvml (named in each
docstring), made when the property is read: nothing is cached, so each read
is the device's state now. A ``Device`` holds an NVML device handle, which
stays valid while NVML is initialized in the process (NVML handles are not
freed).
"""

from __future__ import annotations

import ctypes
import math
import operator
import os
import warnings
from typing import Iterable

from cubind.bindings import nvml

from cubind.core.system._nvml_context import initialize
from cubind.core.system.typing import (
    AddressingMode,
    AffinityScope,
    ClockId,
    ClocksEventReasons,
    ClockType,
    CoolerControl,
    CoolerTarget,
    DeviceArch,
    EventType,
    FanControlPolicy,
    FieldId,
    GpuP2PCapsIndex,
    GpuP2PStatus,
    GpuTopologyLevel,
    InforomObject,
    TemperatureThresholds,
    ThermalController,
    ThermalTarget,
)

__all__ = ["Device", "get_p2p_status", "get_topology_common_ancestor", "NvlinkInfo"]


# --- argument checks -------------------------------------------------------


def _choice(mapping, value, parameter, enum):
    """mapping[value], or an error that names the parameter, the value and the choices."""
    try:
        return mapping[value]
    except KeyError:
        choices = ", ".join(repr(member.value) for member in enum)
        raise ValueError(f"Invalid {parameter}: {value!r}. Must be one of the {enum.__name__} values: {choices}") from None
    except TypeError:
        raise TypeError(f"{parameter} must be a {enum.__name__} or str, got {type(value).__name__} {value!r}") from None


def _int(value, parameter):
    if isinstance(value, int):
        return value
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{parameter} must be an int, got {type(value).__name__} {value!r}") from None


def _unsigned(value, parameter):
    value = _int(value, parameter)
    if value < 0:
        raise OverflowError(f"{parameter} must be >= 0, got {value}")
    return value


def _pstate_to_int(pstate):
    if int(pstate) == int(nvml.Pstates.PSTATE_UNKNOWN):
        return None
    return int(pstate) - int(nvml.Pstates.PSTATE_0)


def _pstate_to_enum(pstate):
    pstate = _int(pstate, "pstate")
    if not 0 <= pstate <= 15:
        raise ValueError(f"Invalid pstate: {pstate}. Must be between 0 and 15 inclusive (0 is P0, the fastest)")
    return pstate + int(nvml.Pstates.PSTATE_0)


def _unpack_bitmask(arr: object) -> list[int]:
    """The indices of the bits set in a sequence of 64-bit masks (bit j of
    element i is index 64 * i + j)."""
    found = []
    for i, word in enumerate(arr):
        word = int(word)
        bit = 0
        while word:
            if word & 1:
                found.append(64 * i + bit)
            word >>= 1
            bit += 1
    return found


def _bits_to_members(mask, mapping, what):
    members = []
    for bit in _unpack_bitmask([mask]):
        try:
            members.append(mapping[1 << bit])
        except KeyError:
            raise ValueError(f"Unknown {what} bit: {1 << bit}") from None
    return members


def _enabled(state):
    return int(state) == int(nvml.EnableState.FEATURE_ENABLED)


def _address(struct):
    """The address of a bindings struct (``ptr``, or ``getPtr()`` in cuda.bindings'
    driver style)."""
    ptr = getattr(struct, "ptr", None)
    return int(ptr if ptr is not None else struct.getPtr())


def _element_address(array, index, size):
    """The address of element ``index`` of a struct array field: a list of
    struct views, or one object over the whole array."""
    if isinstance(array, (list, tuple)):
        return _address(array[index])
    return _address(array) + index * size


def _scalar(value):
    """A union member that the bindings give as a one-element array or as a number."""
    return value if isinstance(value, (int, float)) else value[0]


def _device_from_handle(handle):
    device = Device.__new__(Device)
    device._handle = int(handle)
    return device


# --- NVML's values and cubind.core.system's enums ----------------------------

_CLOCK_ID_MAPPING = {
    ClockId.CURRENT: nvml.ClockId.CURRENT,
    ClockId.CUSTOMER_BOOST_MAX: nvml.ClockId.CUSTOMER_BOOST_MAX,
}

_CLOCKS_EVENT_REASONS_MAPPING = {
    int(nvml.ClocksEventReasons.EVENT_REASON_NONE): ClocksEventReasons.NONE,
    int(nvml.ClocksEventReasons.EVENT_REASON_GPU_IDLE): ClocksEventReasons.GPU_IDLE,
    int(nvml.ClocksEventReasons.EVENT_REASON_APPLICATIONS_CLOCKS_SETTING): ClocksEventReasons.APPLICATIONS_CLOCKS_SETTING,
    int(nvml.ClocksEventReasons.EVENT_REASON_SW_POWER_CAP): ClocksEventReasons.SW_POWER_CAP,
    int(nvml.ClocksEventReasons.THROTTLE_REASON_HW_SLOWDOWN): ClocksEventReasons.HW_SLOWDOWN,
    int(nvml.ClocksEventReasons.EVENT_REASON_SYNC_BOOST): ClocksEventReasons.SYNC_BOOST,
    int(nvml.ClocksEventReasons.EVENT_REASON_SW_THERMAL_SLOWDOWN): ClocksEventReasons.SW_THERMAL_SLOWDOWN,
    int(nvml.ClocksEventReasons.THROTTLE_REASON_HW_THERMAL_SLOWDOWN): ClocksEventReasons.HW_THERMAL_SLOWDOWN,
    int(nvml.ClocksEventReasons.THROTTLE_REASON_HW_POWER_BRAKE_SLOWDOWN): ClocksEventReasons.HW_POWER_BRAKE_SLOWDOWN,
    int(nvml.ClocksEventReasons.EVENT_REASON_DISPLAY_CLOCK_SETTING): ClocksEventReasons.DISPLAY_CLOCK_SETTING,
    int(getattr(nvml.ClocksEventReasons, "EVENT_REASON_BOARD_LIMIT", 0x200)): ClocksEventReasons.BOARD_LIMIT,
    int(getattr(nvml.ClocksEventReasons, "EVENT_REASON_RELIABILITY", 0x400)): ClocksEventReasons.RELIABILITY,
}

_CLOCK_TYPE_MAPPING = {
    ClockType.GRAPHICS: nvml.ClockType.CLOCK_GRAPHICS,
    ClockType.SM: nvml.ClockType.CLOCK_SM,
    ClockType.MEMORY: nvml.ClockType.CLOCK_MEM,
    ClockType.VIDEO: nvml.ClockType.CLOCK_VIDEO,
}

_COOLER_CONTROL_MAPPING = {
    int(nvml.CoolerControl.THERMAL_COOLER_SIGNAL_TOGGLE): CoolerControl.TOGGLE,
    int(nvml.CoolerControl.THERMAL_COOLER_SIGNAL_VARIABLE): CoolerControl.VARIABLE,
}

_COOLER_TARGET_MAPPING = {
    int(nvml.CoolerTarget.THERMAL_NONE): CoolerTarget.NONE,
    int(nvml.CoolerTarget.THERMAL_GPU): CoolerTarget.GPU,
    int(nvml.CoolerTarget.THERMAL_MEMORY): CoolerTarget.MEMORY,
    int(nvml.CoolerTarget.THERMAL_POWER_SUPPLY): CoolerTarget.POWER_SUPPLY,
}

_EVENT_TYPE_MAPPING = {
    int(nvml.EventType.NONE): EventType.NONE,
    int(nvml.EventType.SINGLE_BIT_ECC_ERROR): EventType.SINGLE_BIT_ECC_ERROR,
    int(nvml.EventType.DOUBLE_BIT_ECC_ERROR): EventType.DOUBLE_BIT_ECC_ERROR,
    int(nvml.EventType.PSTATE): EventType.PSTATE,
    int(nvml.EventType.XID_CRITICAL_ERROR): EventType.XID_CRITICAL_ERROR,
    int(nvml.EventType.CLOCK): EventType.CLOCK,
    int(nvml.EventType.POWER_SOURCE_CHANGE): EventType.POWER_SOURCE_CHANGE,
    int(nvml.EventType.MIG_CONFIG_CHANGE): EventType.MIG_CONFIG_CHANGE,
    int(nvml.EventType.SINGLE_BIT_ECC_ERROR_STORM): EventType.SINGLE_BIT_ECC_ERROR_STORM,
    int(nvml.EventType.DRAM_RETIREMENT_EVENT): EventType.DRAM_RETIREMENT_EVENT,
    int(nvml.EventType.DRAM_RETIREMENT_FAILURE): EventType.DRAM_RETIREMENT_FAILURE,
    int(nvml.EventType.NON_FATAL_POISON_ERROR): EventType.NON_FATAL_POISON_ERROR,
    int(nvml.EventType.FATAL_POISON_ERROR): EventType.FATAL_POISON_ERROR,
    int(nvml.EventType.GPU_UNAVAILABLE_ERROR): EventType.GPU_UNAVAILABLE_ERROR,
    int(nvml.EventType.GPU_RECOVERY_ACTION): EventType.GPU_RECOVERY_ACTION,
}
_EVENT_TYPE_INV_MAPPING = {member: bit for bit, member in _EVENT_TYPE_MAPPING.items()}

_FAN_CONTROL_POLICY_MAPPING = {
    int(nvml.FanControlPolicy.TEMPERATURE_CONTINUOUS_SW): FanControlPolicy.TEMPERATURE_CONTROLLED,
    int(nvml.FanControlPolicy.MANUAL): FanControlPolicy.MANUAL,
}

_INFOROM_OBJECT_MAPPING = {
    InforomObject.OEM: nvml.InforomObject.INFOROM_OEM,
    InforomObject.ECC: nvml.InforomObject.INFOROM_ECC,
    InforomObject.POWER: nvml.InforomObject.INFOROM_POWER,
    InforomObject.DEN: nvml.InforomObject.INFOROM_DEN,
}

_NVLINK_VERSION_MAPPING = {
    int(nvml.NvlinkVersion.VERSION_1_0): (1, 0),
    int(nvml.NvlinkVersion.VERSION_2_0): (2, 0),
    int(nvml.NvlinkVersion.VERSION_2_2): (2, 2),
    int(nvml.NvlinkVersion.VERSION_3_0): (3, 0),
    int(nvml.NvlinkVersion.VERSION_3_1): (3, 1),
    int(nvml.NvlinkVersion.VERSION_4_0): (4, 0),
    int(nvml.NvlinkVersion.VERSION_5_0): (5, 0),
}
if hasattr(nvml.NvlinkVersion, "VERSION_6_0"):
    _NVLINK_VERSION_MAPPING[int(nvml.NvlinkVersion.VERSION_6_0)] = (6, 0)

_TEMPERATURE_THRESHOLD_MAPPING = {
    TemperatureThresholds.SHUTDOWN: nvml.TemperatureThresholds.TEMPERATURE_THRESHOLD_SHUTDOWN,
    TemperatureThresholds.SLOWDOWN: nvml.TemperatureThresholds.TEMPERATURE_THRESHOLD_SLOWDOWN,
    TemperatureThresholds.MEM_MAX: nvml.TemperatureThresholds.TEMPERATURE_THRESHOLD_MEM_MAX,
    TemperatureThresholds.GPU_MAX: nvml.TemperatureThresholds.TEMPERATURE_THRESHOLD_GPU_MAX,
    TemperatureThresholds.ACOUSTIC_MIN: nvml.TemperatureThresholds.TEMPERATURE_THRESHOLD_ACOUSTIC_MIN,
    TemperatureThresholds.ACOUSTIC_CURR: nvml.TemperatureThresholds.TEMPERATURE_THRESHOLD_ACOUSTIC_CURR,
    TemperatureThresholds.ACOUSTIC_MAX: nvml.TemperatureThresholds.TEMPERATURE_THRESHOLD_ACOUSTIC_MAX,
    TemperatureThresholds.GPS_CURR: nvml.TemperatureThresholds.TEMPERATURE_THRESHOLD_GPS_CURR,
}
# Thresholds NVML reads through field values instead on Ada and newer.
_THRESHOLDS_MOVED_TO_FIELDS = (
    TemperatureThresholds.SHUTDOWN,
    TemperatureThresholds.SLOWDOWN,
    TemperatureThresholds.MEM_MAX,
    TemperatureThresholds.GPU_MAX,
)

_THERMAL_CONTROLLER_MAPPING = {
    int(getattr(nvml.ThermalController, member.name)): member
    for member in ThermalController
    if member is not ThermalController.UNKNOWN
}

_THERMAL_TARGET_MAPPING = {int(getattr(nvml.ThermalTarget, member.name)): member for member in ThermalTarget}
_THERMAL_TARGET_INV_MAPPING = {member: value for value, member in _THERMAL_TARGET_MAPPING.items()}

_ADDRESSING_MODE_MAPPING = {
    int(nvml.DeviceAddressingModeType.DEVICE_ADDRESSING_MODE_HMM): AddressingMode.HMM,
    int(nvml.DeviceAddressingModeType.DEVICE_ADDRESSING_MODE_ATS): AddressingMode.ATS,
}

_AFFINITY_SCOPE_MAPPING = {
    AffinityScope.NODE: nvml.AffinityScope.NODE,
    AffinityScope.SOCKET: nvml.AffinityScope.SOCKET,
}

_BRAND_NAMES = {
    "BRAND_UNKNOWN": "Unknown",
    "BRAND_QUADRO": "Quadro",
    "BRAND_TESLA": "Tesla",
    "BRAND_NVS": "NVS",
    "BRAND_GRID": "GRID",
    "BRAND_GEFORCE": "GeForce",
    "BRAND_TITAN": "Titan",
    "BRAND_NVIDIA_VAPPS": "NVIDIA vApps",
    "BRAND_NVIDIA_VPC": "NVIDIA VPC",
    "BRAND_NVIDIA_VCS": "NVIDIA VCS",
    "BRAND_NVIDIA_VWS": "NVIDIA VWS",
    "BRAND_NVIDIA_CLOUD_GAMING": "NVIDIA Cloud Gaming",
    "BRAND_NVIDIA_VGAMING": "NVIDIA vGaming",
    "BRAND_QUADRO_RTX": "Quadro RTX",
    "BRAND_NVIDIA_RTX": "NVIDIA RTX",
    "BRAND_NVIDIA": "NVIDIA",
    "BRAND_GEFORCE_RTX": "GeForce RTX",
    "BRAND_TITAN_RTX": "Titan RTX",
}
_BRAND_TYPE_MAPPING = {int(getattr(nvml.BrandType, name)): text for name, text in _BRAND_NAMES.items()}

_GPU_P2P_CAPS_INDEX_MAPPING = {
    member: getattr(nvml.GpuP2PCapsIndex, "P2P_CAPS_INDEX_" + member.name) for member in GpuP2PCapsIndex
}

_GPU_P2P_STATUS_MAPPING = {
    int(getattr(nvml.GpuP2PStatus, "P2P_STATUS_" + member.name)): member for member in GpuP2PStatus
}

_GPU_TOPOLOGY_LEVEL_MAPPING = {
    member: getattr(nvml.GpuTopologyLevel, "TOPOLOGY_" + member.name) for member in GpuTopologyLevel
}
_GPU_TOPOLOGY_LEVEL_INV_MAPPING = {int(value): member for member, value in _GPU_TOPOLOGY_LEVEL_MAPPING.items()}


# --- what a device reports ----------------------------------------------------


class ClockOffsets:
    """A clock domain's offset at one performance state, and its range."""

    def __init__(self, clock_offset: nvml.ClockOffset_v1):
        self._clock_offset = clock_offset

    @property
    def clock_offset_mhz(self) -> int:
        """The current offset, in MHz."""
        return self._clock_offset.clock_offset_m_hz

    @property
    def max_offset_mhz(self) -> int:
        """The largest offset allowed, in MHz."""
        return self._clock_offset.max_clock_offset_m_hz

    @property
    def min_offset_mhz(self) -> int:
        """The smallest offset allowed, in MHz."""
        return self._clock_offset.min_clock_offset_m_hz


class ClockInfo:
    """One clock domain of a device (:meth:`Device.get_clock`)."""

    def __init__(self, handle: int, clock_type: ClockType | str):
        self._handle = handle
        self._clock_type = _choice(_CLOCK_TYPE_MAPPING, clock_type, "clock_type", ClockType)

    def get_current_mhz(self, clock_id: ClockId | str = ClockId.CURRENT) -> int:
        """The clock's speed in MHz: its current value, or the one ``clock_id``
        names (nvmlDeviceGetClock)."""
        clock_id = _choice(_CLOCK_ID_MAPPING, clock_id, "clock_id", ClockId)
        return nvml.device_get_clock(self._handle, self._clock_type, clock_id)

    def get_max_mhz(self) -> int:
        """The clock's maximum speed in MHz (nvmlDeviceGetMaxClockInfo)."""
        return nvml.device_get_max_clock_info(self._handle, self._clock_type)

    def get_max_customer_boost_mhz(self) -> int:
        """The board maker's maximum boost speed in MHz (nvmlDeviceGetMaxCustomerBoostClock)."""
        return nvml.device_get_max_customer_boost_clock(self._handle, self._clock_type)

    def get_min_max_clock_of_pstate_mhz(self, pstate: int) -> tuple[int, int]:
        """``(min, max)`` speed in MHz at performance state ``pstate`` (0 to 15, 0
        the fastest) (nvmlDeviceGetMinMaxClockOfPState)."""
        return tuple(nvml.device_get_min_max_clock_of_p_state(self._handle, self._clock_type, _pstate_to_enum(pstate)))

    def get_offsets(self, pstate: int) -> ClockOffsets:
        """The clock's offset and its range at performance state ``pstate`` (0 to
        15) (nvmlDeviceGetClockOffsets)."""
        return ClockOffsets(nvml.device_get_clock_offsets(self._handle, self._clock_type, _pstate_to_enum(pstate)))


class CoolerInfo:
    """A device's cooler: how it is driven and what it cools."""

    def __init__(self, cooler_info: nvml.CoolerInfo_v1):
        self._cooler_info = cooler_info

    @property
    def signal_type(self) -> CoolerControl | None:
        """How the cooler is driven (toggle or variable); None if NVML says neither."""
        return _COOLER_CONTROL_MAPPING.get(int(self._cooler_info.signal_type))

    @property
    def target(self) -> list[CoolerTarget]:
        """What the cooler cools (GPU, memory, power supply, or several)."""
        return _bits_to_members(int(self._cooler_info.target), _COOLER_TARGET_MAPPING, "cooler target")


class DeviceAttributes:
    """A device's engine counts and memory size (nvmlDeviceGetAttributes_v2)."""

    def __init__(self, attributes: nvml.DeviceAttributes):
        self._attributes = attributes

    @property
    def multiprocessor_count(self) -> int:
        """Streaming multiprocessors."""
        return self._attributes.multiprocessor_count

    @property
    def shared_copy_engine_count(self) -> int:
        """Shared copy engines."""
        return self._attributes.shared_copy_engine_count

    @property
    def shared_decoder_count(self) -> int:
        """Shared decoder engines."""
        return self._attributes.shared_decoder_count

    @property
    def shared_encoder_count(self) -> int:
        """Shared encoder engines."""
        return self._attributes.shared_encoder_count

    @property
    def shared_jpeg_count(self) -> int:
        """Shared JPEG engines."""
        return self._attributes.shared_jpeg_count

    @property
    def shared_ofa_count(self) -> int:
        """Shared optical flow accelerators."""
        return self._attributes.shared_ofa_count

    @property
    def gpu_instance_slice_count(self) -> int:
        """GPU instance slices."""
        return self._attributes.gpu_instance_slice_count

    @property
    def compute_instance_slice_count(self) -> int:
        """Compute instance slices."""
        return self._attributes.compute_instance_slice_count

    @property
    def memory_size_mb(self) -> int:
        """Device memory, in MiB."""
        return self._attributes.memory_size_mb


class EventData:
    """One event that :meth:`DeviceEvents.wait` returned."""

    def __init__(self, event_data: nvml.EventData):
        self._event_data = event_data

    def _xid_only(self, name):
        if int(self._event_data.event_type) != int(nvml.EventType.XID_CRITICAL_ERROR):
            raise ValueError(
                f"{name} is only available for Xid critical error events; this event is {self.event_type!s}"
            )

    @property
    def device(self) -> Device:
        """The device the event happened on."""
        return _device_from_handle(self._event_data.device_)

    @property
    def event_type(self) -> EventType:
        """What happened."""
        return _EVENT_TYPE_MAPPING[int(self._event_data.event_type)]

    @property
    def event_data(self) -> int:
        """The Xid of an :attr:`EventType.XID_CRITICAL_ERROR` event; ValueError for
        other events."""
        self._xid_only("event_data")
        return self._event_data.event_data

    @property
    def gpu_instance_id(self) -> int:
        """The MIG GPU instance of an Xid event; ValueError for other events."""
        self._xid_only("gpu_instance_id")
        return self._event_data.gpu_instance_id

    @property
    def compute_instance_id(self) -> int:
        """The MIG compute instance of an Xid event; ValueError for other events."""
        self._xid_only("compute_instance_id")
        return self._event_data.compute_instance_id


class DeviceEvents:
    """Events recorded on one device since :meth:`Device.register_events`
    (an NVML event set, freed with this object)."""

    _event_set = 0

    def __init__(self, device_handle: int, events: EventType | str | list[EventType | str]):
        if isinstance(events, str):
            events = [events]
        if not isinstance(events, list):
            raise TypeError(
                f"events must be an EventType, str, or list of EventType or str, got {type(events).__name__}"
            )
        mask = 0
        for event in events:
            mask |= _choice(_EVENT_TYPE_INV_MAPPING, event, "event type", EventType)
        self._device_handle = device_handle
        self._event_set = nvml.event_set_create()
        nvml.device_register_events(device_handle, mask, self._event_set)

    def __del__(self):
        event_set, self._event_set = self._event_set, 0
        if event_set:
            try:
                nvml.event_set_free(event_set)
            except Exception:  # noqa: BLE001 - NVML may be shut down at exit
                pass

    def wait(self, timeout_ms: int = 0) -> EventData:
        """The next event, waiting up to ``timeout_ms`` milliseconds for one (0:
        without limit) (nvmlEventSetWait_v2).

        Raises
        ------
        cubind.core.system.TimeoutError
            No event came in time.
        cubind.core.system.GpuIsLostError
            The GPU fell off the bus.
        """
        timeout_ms = _unsigned(timeout_ms, "timeout_ms")
        return EventData(nvml.event_set_wait_v2(self._event_set, timeout_ms))


class FanInfo:
    """One fan of a device (:meth:`Device.get_fan`)."""

    def __init__(self, handle: int, fan: int):
        self._handle = handle
        self._fan = fan

    @property
    def speed(self) -> int:
        """The fan's intended speed, in percent of its maximum noise-tolerant speed
        (nvmlDeviceGetFanSpeed_v2); set it to ask for a speed
        (nvmlDeviceSetFanSpeed_v2, needs root)."""
        return nvml.device_get_fan_speed_v2(self._handle, self._fan)

    @speed.setter
    def speed(self, speed: int) -> None:
        nvml.device_set_fan_speed_v2(self._handle, self._fan, _unsigned(speed, "speed"))

    @property
    def speed_rpm(self) -> int:
        """The fan's intended speed in RPM (nvmlDeviceGetFanSpeedRPM)."""
        return nvml.device_get_fan_speed_rpm(self._handle, self._fan)

    @property
    def target_speed(self) -> int:
        """The speed the driver steers the fan to, in percent (nvmlDeviceGetTargetFanSpeed)."""
        return nvml.device_get_target_fan_speed(self._handle, self._fan)

    @property
    def min_max_speed(self) -> tuple[int, int]:
        """``(min, max)`` speed of the device's fans, in percent (nvmlDeviceGetMinMaxFanSpeed)."""
        return tuple(nvml.device_get_min_max_fan_speed(self._handle))

    @property
    def control_policy(self) -> FanControlPolicy:
        """Who sets the fan's speed (nvmlDeviceGetFanControlPolicy_v2)."""
        return _FAN_CONTROL_POLICY_MAPPING[int(nvml.device_get_fan_control_policy_v2(self._handle, self._fan))]

    def set_default_speed(self) -> None:
        """Give the fan back to the driver's default control (nvmlDeviceSetDefaultFanSpeed_v2)."""
        nvml.device_set_default_fan_speed_v2(self._handle, self._fan)


def _field_value_of(field_value):
    nvml.check_status(int(field_value.nvml_return))
    kind = int(field_value.value_type)
    value = field_value.value
    ValueType = nvml.ValueType
    if kind == ValueType.DOUBLE:
        return float(_scalar(value.d_val))
    readers = {
        ValueType.UNSIGNED_INT: "ui_val",
        ValueType.UNSIGNED_LONG: "ul_val",
        ValueType.UNSIGNED_LONG_LONG: "ull_val",
        ValueType.SIGNED_LONG_LONG: "sll_val",
        ValueType.SIGNED_INT: "si_val",
        ValueType.UNSIGNED_SHORT: "us_val",
    }
    try:
        name = readers[kind]
    except KeyError:
        raise ValueError(f"NVML returned a field value of unknown type {kind}") from None
    return int(_scalar(getattr(value, name)))


class FieldValue:
    """One field of :meth:`Device.get_field_values`."""

    def __init__(self, field_value: nvml.FieldValue):
        self._field_value = field_value

    @property
    def field_id(self) -> FieldId:
        """The field's identifier."""
        return FieldId(int(self._field_value.field_id))

    @property
    def scope_id(self) -> int:
        """The scope asked for (e.g. an NVLink number)."""
        return int(self._field_value.scope_id)

    @property
    def timestamp(self) -> int:
        """When the value was sampled, in microseconds since 1970 (CPU time)."""
        return int(self._field_value.timestamp)

    @property
    def latency_usec(self) -> int:
        """How long NVML took to update the value, in microseconds."""
        return int(self._field_value.latency_usec)

    @property
    def value(self) -> int | float:
        """The value; raises the NVML error of this field if NVML could not read it."""
        return _field_value_of(self._field_value)


class FieldValues:
    """The fields of one :meth:`Device.get_field_values` call, in the order asked."""

    def __init__(self, field_values: nvml.FieldValue):
        self._field_values = field_values

    def __getitem__(self, idx: int) -> FieldValue:
        return FieldValue(self._field_values[idx])

    def __len__(self) -> int:
        return len(self._field_values)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def validate(self) -> None:
        """Raise the NVML error of the first field NVML could not read, if any."""
        for i in range(len(self)):
            nvml.check_status(int(self._field_values[i].nvml_return))

    def get_all_values(self) -> list[int | float]:
        """Every field's value, in order; raises the first field's NVML error."""
        return [field.value for field in self]


class InforomInfo:
    """A device's InfoROM: the versions and checksum of what it stores."""

    def __init__(self, device: Device):
        self._device = device

    def get_version(self, inforom: InforomObject | str) -> str:
        """The version of one InfoROM object (nvmlDeviceGetInforomVersion)."""
        inforom = _choice(_INFOROM_OBJECT_MAPPING, inforom, "inforom", InforomObject)
        return nvml.device_get_inforom_version(self._device._handle, inforom)

    @property
    def image_version(self) -> str:
        """The InfoROM image's version (nvmlDeviceGetInforomImageVersion)."""
        return nvml.device_get_inforom_image_version(self._device._handle)

    @property
    def configuration_checksum(self) -> int:
        """The checksum of the configuration in the InfoROM
        (nvmlDeviceGetInforomConfigurationChecksum): equal on boards configured alike."""
        return nvml.device_get_inforom_configuration_checksum(self._device._handle)

    def validate(self) -> None:
        """Read the InfoROM and check its checksums (nvmlDeviceValidateInforom);
        raises :class:`CorruptedInforomError` if they do not match."""
        nvml.device_validate_inforom(self._device._handle)

    @property
    def bbx_flush_time(self) -> tuple[int, int]:
        """``(timestamp, duration_us)`` of the last flush of the blackbox object
        (nvmlDeviceGetLastBBXFlushTime)."""
        return tuple(nvml.device_get_last_bbx_flush_time(self._device._handle))

    @property
    def board_part_number(self) -> str:
        """The board's part number (nvmlDeviceGetBoardPartNumber)."""
        return nvml.device_get_board_part_number(self._device._handle)


class MemoryInfo:
    """A device's memory, in bytes (nvmlDeviceGetMemoryInfo_v2)."""

    def __init__(self, memory_info: nvml.Memory_v2):
        self._memory_info = memory_info

    @property
    def free(self) -> int:
        """Unallocated bytes."""
        return self._memory_info.free

    @property
    def total(self) -> int:
        """Physical bytes."""
        return self._memory_info.total

    @property
    def used(self) -> int:
        """Allocated bytes."""
        return self._memory_info.used

    @property
    def reserved(self) -> int:
        """Bytes the driver and firmware keep."""
        return self._memory_info.reserved


class BAR1MemoryInfo(MemoryInfo):
    """A device's BAR1 aperture, in bytes (nvmlDeviceGetBAR1MemoryInfo)."""

    def __init__(self, memory_info: nvml.BAR1Memory):
        self._memory_info = memory_info

    @property
    def free(self) -> int:
        """Unallocated BAR1 bytes."""
        return self._memory_info.bar1_free

    @property
    def total(self) -> int:
        """BAR1 bytes."""
        return self._memory_info.bar1_total

    @property
    def used(self) -> int:
        """Allocated BAR1 bytes."""
        return self._memory_info.bar1_used


class MigInfo:
    """A device's Multi-Instance GPU state (:attr:`Device.mig`)."""

    def __init__(self, device: Device):
        self._device = device

    @property
    def is_mig_device(self) -> bool:
        """Whether this handle is a MIG device's (nvmlDeviceIsMigDeviceHandle)."""
        return bool(nvml.device_is_mig_device_handle(self._device._handle))

    @property
    def mode(self) -> bool:
        """Whether MIG mode is on (nvmlDeviceGetMigMode); set it to ask for a
        change (nvmlDeviceSetMigMode, needs root; may need a GPU reset)."""
        current, _ = nvml.device_get_mig_mode(self._device._handle)
        return _enabled(current)

    @mode.setter
    def mode(self, mode: bool) -> None:
        state = nvml.EnableState.FEATURE_ENABLED if mode else nvml.EnableState.FEATURE_DISABLED
        nvml.device_set_mig_mode(self._device._handle, state)

    @property
    def pending_mode(self) -> bool:
        """The MIG mode the next reset brings (nvmlDeviceGetMigMode)."""
        _, pending = nvml.device_get_mig_mode(self._device._handle)
        return _enabled(pending)

    @property
    def device_count(self) -> int:
        """How many MIG devices this GPU can have; 0 without MIG
        (nvmlDeviceGetMaxMigDeviceCount)."""
        return nvml.device_get_max_mig_device_count(self._device._handle)

    @property
    def parent(self) -> Device:
        """The GPU a MIG device belongs to (nvmlDeviceGetDeviceHandleFromMigDeviceHandle)."""
        return _device_from_handle(nvml.device_get_device_handle_from_mig_device_handle(self._device._handle))

    def get_device_by_index(self, index: int) -> Device:
        """The MIG device ``index`` of this GPU, 0 to ``device_count - 1``
        (nvmlDeviceGetMigDeviceHandleByIndex)."""
        index = _unsigned(index, "index")
        return _device_from_handle(nvml.device_get_mig_device_handle_by_index(self._device._handle, index))

    def get_all_devices(self) -> Iterable[Device]:
        """Every MIG device of this GPU that exists now."""
        for index in range(self.device_count):
            try:
                yield self.get_device_by_index(index)
            except nvml.NotFoundError:
                continue


class _NvlinkInfoMeta(type):
    @property
    def max_links(cls):
        """NVML_NVLINK_MAX_LINKS, the most links any device has. Deprecated (as in
        cuda.core 1.1): :meth:`Device.get_nvlink_count` says how many one device has."""
        warnings.warn(
            "NvlinkInfo.max_links is deprecated; use Device.get_nvlink_count() for a device's links",
            DeprecationWarning,
            stacklevel=2,
        )
        return nvml.NVLINK_MAX_LINKS


class _NvlinkInfo:
    """One NVLink of a device (:meth:`Device.get_nvlink`)."""

    def __init__(self, device: Device, link: int):
        self._device = device
        self._link = link

    @property
    def version(self) -> tuple[int, int]:
        """The link's NVLink version as ``(major, minor)`` (nvmlDeviceGetNvLinkVersion)."""
        version = int(nvml.device_get_nvlink_version(self._device._handle, self._link))
        try:
            return _NVLINK_VERSION_MAPPING[version]
        except KeyError:
            raise ValueError(f"NVML returned an unknown NVLink version {version}") from None

    @property
    def state(self) -> bool:
        """Whether the link is active (nvmlDeviceGetNvLinkState)."""
        return _enabled(nvml.device_get_nvlink_state(self._device._handle, self._link))


class NvlinkInfo(_NvlinkInfo, metaclass=_NvlinkInfoMeta):
    """One NVLink of a device (:meth:`Device.get_nvlink`)."""


class PciInfo:
    """A device's PCI identity and link (nvmlDeviceGetPciInfoExt, and one call per link query)."""

    def __init__(self, pci_info_ext: nvml.PciInfoExt_v1, handle: int):
        self._pci_info_ext = pci_info_ext
        self._handle = handle

    @property
    def bus(self) -> int:
        """The bus number, 0 to 255."""
        return self._pci_info_ext.bus

    @property
    def bus_id(self) -> str:
        """``"domain:bus:device.function"``, e.g. ``"00000000:3B:00.0"``."""
        return self._pci_info_ext.bus_id

    @property
    def device(self) -> int:
        """The device number on the bus, 0 to 31."""
        return self._pci_info_ext.device_

    @property
    def domain(self) -> int:
        """The PCI domain, 0 to 0xffffffff."""
        return self._pci_info_ext.domain

    @property
    def vendor_id(self) -> int:
        """The PCI vendor id (0x10de for NVIDIA)."""
        return self._pci_info_ext.pci_device_id & 0xFFFF

    @property
    def device_id(self) -> int:
        """The PCI device id."""
        return self._pci_info_ext.pci_device_id >> 16

    @property
    def subsystem_id(self) -> int:
        """The PCI subsystem id."""
        return self._pci_info_ext.pci_sub_system_id

    @property
    def base_class(self) -> int:
        """The 8-bit PCI base class code."""
        return self._pci_info_ext.base_class

    @property
    def sub_class(self) -> int:
        """The 8-bit PCI sub class code."""
        return self._pci_info_ext.sub_class

    @property
    def link_generation(self) -> int:
        """The highest PCIe generation this device and system allow together
        (nvmlDeviceGetMaxPcieLinkGeneration)."""
        return nvml.device_get_max_pcie_link_generation(self._handle)

    @property
    def max_link_generation(self) -> int:
        """The highest PCIe generation the GPU supports (nvmlDeviceGetGpuMaxPcieLinkGeneration)."""
        return nvml.device_get_gpu_max_pcie_link_generation(self._handle)

    @property
    def max_link_width(self) -> int:
        """The widest PCIe link this device and system allow together
        (nvmlDeviceGetMaxPcieLinkWidth)."""
        return nvml.device_get_max_pcie_link_width(self._handle)

    @property
    def current_link_generation(self) -> int:
        """The PCIe generation the link runs at now (nvmlDeviceGetCurrPcieLinkGeneration)."""
        return nvml.device_get_curr_pcie_link_generation(self._handle)

    @property
    def current_link_width(self) -> int:
        """The PCIe link's width now (nvmlDeviceGetCurrPcieLinkWidth)."""
        return nvml.device_get_curr_pcie_link_width(self._handle)

    @property
    def rx_throughput(self) -> int:
        """Bytes received over PCIe in the last 20 ms, in KB/s (nvmlDeviceGetPcieThroughput)."""
        return nvml.device_get_pcie_throughput(self._handle, nvml.PcieUtilCounter.PCIE_UTIL_RX_BYTES)

    @property
    def tx_throughput(self) -> int:
        """Bytes sent over PCIe in the last 20 ms, in KB/s (nvmlDeviceGetPcieThroughput)."""
        return nvml.device_get_pcie_throughput(self._handle, nvml.PcieUtilCounter.PCIE_UTIL_TX_BYTES)

    @property
    def replay_counter(self) -> int:
        """The PCIe replay counter (nvmlDeviceGetPcieReplayCounter)."""
        return nvml.device_get_pcie_replay_counter(self._handle)


class _GpuDynamicPstatesUtilizationStruct(ctypes.Structure):
    # One element of nvmlGpuDynamicPstatesInfo_t's utilization array.
    _fields_ = [
        ("bIsPresent", ctypes.c_uint),
        ("percentage", ctypes.c_uint),
        ("incThreshold", ctypes.c_uint),
        ("decThreshold", ctypes.c_uint),
    ]


class GpuDynamicPstatesUtilization:
    """One utilization domain of :attr:`Device.dynamic_pstates_info`, read where
    NVML wrote it (``ptr``, inside ``owner``, which this object keeps alive)."""

    def __init__(self, ptr: int, owner: object):
        self._owner = owner
        self._data = _GpuDynamicPstatesUtilizationStruct.from_address(ptr)

    @property
    def is_present(self) -> bool:
        """Whether the GPU has this domain."""
        return bool(self._data.bIsPresent)

    @property
    def percentage(self) -> int:
        """Percent of the last second the domain was busy."""
        return self._data.percentage

    @property
    def inc_threshold(self) -> int:
        """Utilization above which the GPU moves to a faster P-state."""
        return self._data.incThreshold

    @property
    def dec_threshold(self) -> int:
        """Utilization below which the GPU moves to a slower P-state."""
        return self._data.decThreshold


class GpuDynamicPstatesInfo:
    """The utilization domains that drive P-state changes (nvmlDeviceGetDynamicPstatesInfo)."""

    def __init__(self, gpu_dynamic_pstates_info: nvml.GpuDynamicPstatesInfo):
        self._gpu_dynamic_pstates_info = gpu_dynamic_pstates_info

    def __len__(self) -> int:
        return nvml.MAX_GPU_UTILIZATIONS

    def __getitem__(self, idx: int) -> GpuDynamicPstatesUtilization:
        idx = _int(idx, "idx")
        if not 0 <= idx < nvml.MAX_GPU_UTILIZATIONS:
            raise IndexError(f"GPU dynamic P-states index {idx} out of range [0, {nvml.MAX_GPU_UTILIZATIONS})")
        address = _element_address(self._gpu_dynamic_pstates_info.utilization, idx,
                                   ctypes.sizeof(_GpuDynamicPstatesUtilizationStruct))
        return GpuDynamicPstatesUtilization(address, self._gpu_dynamic_pstates_info)


class ProcessInfo:
    """A process with a compute context on a device."""

    def __init__(self, device: Device, process_info: nvml.ProcessInfo):
        self._device = device
        self._process_info = process_info

    @property
    def pid(self) -> int:
        """The process's id."""
        return self._process_info.pid

    @property
    def used_gpu_memory(self) -> int:
        """Bytes of device memory the process uses."""
        return self._process_info.used_gpu_memory

    def _mig_only(self):
        # As NVML answers for a GPU that is no MIG device: NVML_ERROR_NOT_SUPPORTED.
        if not self._device.mig.is_mig_device:
            nvml.check_status(int(nvml.Return.ERROR_NOT_SUPPORTED))

    @property
    def gpu_instance_id(self) -> int:
        """The MIG GPU instance the process runs on; raises
        :class:`NotSupportedError` for a process of a device that is no MIG device."""
        self._mig_only()
        return self._process_info.gpu_instance_id

    @property
    def compute_instance_id(self) -> int:
        """The MIG compute instance the process runs on; raises
        :class:`NotSupportedError` for a process of a device that is no MIG device."""
        self._mig_only()
        return self._process_info.compute_instance_id


class RepairStatus:
    """Whether TPC or channel repairs are pending (nvmlDeviceGetRepairStatus)."""

    def __init__(self, handle: int):
        self._status = nvml.device_get_repair_status(handle)

    @property
    def channel_repair_pending(self) -> bool:
        """A channel repair is pending."""
        return bool(self._status.b_channel_repair_pending)

    @property
    def tpc_repair_pending(self) -> bool:
        """A TPC repair is pending."""
        return bool(self._status.b_tpc_repair_pending)


class _ThermalSensorStruct(ctypes.Structure):
    # One element of nvmlGpuThermalSettings_t's sensor array.
    _fields_ = [
        ("controller", ctypes.c_int),
        ("defaultMinTemp", ctypes.c_int),
        ("defaultMaxTemp", ctypes.c_int),
        ("currentTemp", ctypes.c_int),
        ("target", ctypes.c_int),
    ]


class ThermalSensor:
    """One sensor of :meth:`Temperature.get_thermal_settings`, read where NVML
    wrote it (``ptr``, inside ``owner``, which this object keeps alive)."""

    def __init__(self, ptr: int, owner: object):
        self._owner = owner
        self._data = _ThermalSensorStruct.from_address(ptr)

    @property
    def controller(self) -> ThermalController:
        """The chip that reads the sensor."""
        return _THERMAL_CONTROLLER_MAPPING.get(self._data.controller, ThermalController.UNKNOWN)

    @property
    def default_min_temp(self) -> int:
        """The sensor's lowest default temperature, in °C."""
        return self._data.defaultMinTemp

    @property
    def default_max_temp(self) -> int:
        """The sensor's highest default temperature, in °C."""
        return self._data.defaultMaxTemp

    @property
    def current_temp(self) -> int:
        """The temperature now, in °C."""
        return self._data.currentTemp

    @property
    def target(self) -> ThermalTarget:
        """What the sensor measures."""
        return _THERMAL_TARGET_MAPPING.get(self._data.target, ThermalTarget.NONE)


# NVML_MAX_THERMAL_SENSORS_PER_GPU
_MAX_THERMAL_SENSORS = 3


class ThermalSettings:
    """The thermal sensors of :meth:`Temperature.get_thermal_settings`."""

    def __init__(self, thermal_settings: nvml.GpuThermalSettings):
        self._thermal_settings = thermal_settings

    def __len__(self) -> int:
        return min(int(self._thermal_settings.count), _MAX_THERMAL_SENSORS)

    def __getitem__(self, idx: int) -> ThermalSensor:
        idx = _int(idx, "idx")
        if not 0 <= idx < len(self):
            raise IndexError(f"Thermal sensor index {idx} out of range [0, {len(self)})")
        address = _element_address(self._thermal_settings.sensor, idx, ctypes.sizeof(_ThermalSensorStruct))
        return ThermalSensor(address, self._thermal_settings)


class Temperature:
    """A device's temperatures and thresholds (:attr:`Device.temperature`)."""

    def __init__(self, handle: int):
        self._handle = handle

    def get_sensor(self) -> int:
        """The GPU's temperature in °C (nvmlDeviceGetTemperatureV, NVML_TEMPERATURE_GPU)."""
        return nvml.device_get_temperature_v(self._handle, nvml.TemperatureSensors.TEMPERATURE_GPU)

    def get_threshold(self, threshold_type: TemperatureThresholds | str) -> int:
        """A temperature threshold in °C (nvmlDeviceGetTemperatureThreshold).

        On Ada and newer GPUs NVML reports SHUTDOWN, SLOWDOWN, MEM_MAX and GPU_MAX
        through field values (``NVML_FI_DEV_TEMPERATURE_*``) instead, and asking
        for them here warns with a DeprecationWarning.
        """
        threshold = _choice(_TEMPERATURE_THRESHOLD_MAPPING, threshold_type, "threshold_type", TemperatureThresholds)
        if TemperatureThresholds(threshold_type) in _THRESHOLDS_MOVED_TO_FIELDS:
            if int(nvml.device_get_architecture(self._handle)) >= int(nvml.DeviceArch.ADA):
                warnings.warn(
                    f"temperature threshold {threshold_type!s} is no longer recommended on Ada and newer GPUs; "
                    "read the NVML_FI_DEV_TEMPERATURE_* fields with Device.get_field_values instead",
                    DeprecationWarning,
                    stacklevel=2,
                )
        return nvml.device_get_temperature_threshold(self._handle, threshold)

    @property
    def margin(self) -> int:
        """Degrees below the nearest slowdown threshold (nvmlDeviceGetMarginTemperature)."""
        return nvml.device_get_margin_temperature(self._handle)

    def get_thermal_settings(self, sensor_index: ThermalTarget | str) -> ThermalSettings:
        """The thermal sensors for ``sensor_index`` (nvmlDeviceGetThermalSettings)."""
        index = _choice(_THERMAL_TARGET_INV_MAPPING, sensor_index, "sensor_index", ThermalTarget)
        return ThermalSettings(nvml.device_get_thermal_settings(self._handle, index))


class Utilization:
    """How busy a device was over NVML's last sample period (nvmlDeviceGetUtilizationRates)."""

    def __init__(self, utilization: nvml.Utilization):
        self._utilization = utilization

    @property
    def gpu(self) -> int:
        """Percent of the time one or more kernels ran."""
        return self._utilization.gpu

    @property
    def memory(self) -> int:
        """Percent of the time device memory was read or written."""
        return self._utilization.memory


# --- Device --------------------------------------------------------------------


def _text(value, parameter):
    if isinstance(value, bytes):
        return value.decode("ascii")
    if isinstance(value, str):
        return value
    raise TypeError(f"{parameter} must be a str or bytes, got {type(value).__name__} {value!r}")


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
        The device's UUID as NVML writes it, ``"GPU-..."`` or ``"MIG-..."``
        (nvmlDeviceGetHandleByUUID).
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
        state = nvml.EnableState.FEATURE_ENABLED if enabled else nvml.EnableState.FEATURE_DISABLED
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
            return FieldValues(nvml.FieldValue(0))
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
        return self.get_field_values([FieldId.DEV_NVLINK_LINK_COUNT])[0].value

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


def _field_ids(field_ids):
    """field_ids as a list of ints and (int, int) pairs, or a TypeError naming the bad item."""
    try:
        items = list(field_ids)
    except TypeError:
        raise TypeError(
            f"field_ids must be a list of FieldId or (FieldId, scope_id) pairs, got {type(field_ids).__name__}"
        ) from None
    checked = []
    for item in items:
        if isinstance(item, tuple):
            if len(item) != 2:
                raise ValueError(f"field_ids items must be a FieldId or a (FieldId, scope_id) pair, got {item!r}")
            checked.append((_int(item[0], "field_ids item"), _int(item[1], "field_ids scope id")))
        else:
            checked.append(_int(item, "field_ids item"))
    return checked


def _check_device(device, parameter):
    if not isinstance(device, Device):
        raise TypeError(
            f"{parameter} must be a cubind.core.system.Device, got {type(device).__name__}"
            + (" (use Device.to_system_device() for a cubind.core.Device)" if hasattr(device, "to_system_device") else "")
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
