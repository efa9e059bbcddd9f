"""A device's cooler (Device.cooler)."""

from __future__ import annotations

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V

from cubind.core.system._device_utils import _bits_to_members
from cubind.core.system.typing import CoolerControl, CoolerTarget


_COOLER_CONTROL_MAPPING = {
    V.COOLER_SIGNAL_TOGGLE: CoolerControl.TOGGLE,
    V.COOLER_SIGNAL_VARIABLE: CoolerControl.VARIABLE,
}

_COOLER_TARGET_MAPPING = {
    V.COOLER_TARGET_NONE: CoolerTarget.NONE,
    V.COOLER_TARGET_GPU: CoolerTarget.GPU,
    V.COOLER_TARGET_MEMORY: CoolerTarget.MEMORY,
    V.COOLER_TARGET_POWER_SUPPLY: CoolerTarget.POWER_SUPPLY,
}


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
