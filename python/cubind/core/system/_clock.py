"""A device's clock domains (Device.get_clock): speeds, boost, P-state ranges and offsets."""

from __future__ import annotations

from cubind.bindings import nvml

from cubind.core.system._device_utils import _choice, _pstate_to_enum
from cubind.core.system.typing import ClockId, ClocksEventReasons, ClockType


_CLOCK_ID_MAPPING = {
    ClockId.CURRENT: nvml.ClockId.CURRENT,
    ClockId.CUSTOMER_BOOST_MAX: nvml.ClockId.CUSTOMER_BOOST_MAX,
}


_CLOCKS_EVENT_REASONS_MAPPING = {
    int(nvml.ClocksEventReasons.EVENT_REASON_NONE): ClocksEventReasons.NONE,
    int(nvml.ClocksEventReasons.EVENT_REASON_GPU_IDLE): ClocksEventReasons.GPU_IDLE,
    int(nvml.ClocksEventReasons.EVENT_REASON_APPLICATIONS_CLOCKS_SETTING):
        ClocksEventReasons.APPLICATIONS_CLOCKS_SETTING,
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
