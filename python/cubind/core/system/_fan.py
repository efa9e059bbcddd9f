"""A device's fans (Device.get_fan)."""

from __future__ import annotations

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V

from cubind.core.system._device_utils import _unsigned
from cubind.core.system.typing import FanControlPolicy


_FAN_CONTROL_POLICY_MAPPING = {
    V.FAN_POLICY_TEMPERATURE_CONTINUOUS_SW: FanControlPolicy.TEMPERATURE_CONTROLLED,
    V.FAN_POLICY_MANUAL: FanControlPolicy.MANUAL,
}


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
