"""A device's temperatures, thresholds and thermal sensors (Device.temperature)."""

from __future__ import annotations

import ctypes
import warnings

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V

from cubind.core.system._device_utils import _choice, _element_address, _int
from cubind.core.system.typing import TemperatureThresholds, ThermalController, ThermalTarget


_TEMPERATURE_THRESHOLD_MAPPING = {member: getattr(V, "TEMPERATURE_THRESHOLD_" + member.name) for member in TemperatureThresholds}
# Thresholds NVML reads through field values instead on Ada and newer.
_THRESHOLDS_MOVED_TO_FIELDS = (
    TemperatureThresholds.SHUTDOWN,
    TemperatureThresholds.SLOWDOWN,
    TemperatureThresholds.MEM_MAX,
    TemperatureThresholds.GPU_MAX,
)


_THERMAL_CONTROLLER_MAPPING = {V.THERMAL_CONTROLLER[member.name]: member
                               for member in ThermalController if member is not ThermalController.UNKNOWN}

_THERMAL_TARGET_MAPPING = {V.THERMAL_TARGET[member.name]: member for member in ThermalTarget}
_THERMAL_TARGET_INV_MAPPING = {member: value for value, member in _THERMAL_TARGET_MAPPING.items()}


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
        return nvml.device_get_temperature_v(self._handle, V.TEMPERATURE_GPU)

    def get_threshold(self, threshold_type: TemperatureThresholds | str) -> int:
        """A temperature threshold in °C (nvmlDeviceGetTemperatureThreshold).

        On Ada and newer GPUs NVML reports SHUTDOWN, SLOWDOWN, MEM_MAX and GPU_MAX
        through field values (``NVML_FI_DEV_TEMPERATURE_*``) instead, and asking
        for them here warns with a DeprecationWarning.
        """
        threshold = _choice(_TEMPERATURE_THRESHOLD_MAPPING, threshold_type, "threshold_type", TemperatureThresholds)
        if TemperatureThresholds(threshold_type) in _THRESHOLDS_MOVED_TO_FIELDS:
            if int(nvml.device_get_architecture(self._handle)) >= V.DEVICE_ARCH["ADA"]:
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
