"""A device's clock domains (Device.get_clock): speeds, boost, P-state ranges and offsets."""

from __future__ import annotations

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V

from cubind.core.system._device_utils import _choice, _pstate_to_enum
from cubind.core.system.typing import ClockId, ClocksEventReasons, ClockType


_CLOCK_ID_MAPPING = {
    ClockId.CURRENT: V.CLOCK_ID_CURRENT,
    ClockId.CUSTOMER_BOOST_MAX: V.CLOCK_ID_CUSTOMER_BOOST_MAX,
}

_CLOCKS_EVENT_REASONS_MAPPING = {bit: ClocksEventReasons[name] for name, bit in V.CLOCKS_EVENT_REASONS.items()}

_CLOCK_TYPE_MAPPING = {
    ClockType.GRAPHICS: V.CLOCK_GRAPHICS,
    ClockType.SM: V.CLOCK_SM,
    ClockType.MEMORY: V.CLOCK_MEM,
    ClockType.VIDEO: V.CLOCK_VIDEO,
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
