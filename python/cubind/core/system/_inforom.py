"""A device's InfoROM (Device.inforom)."""

from __future__ import annotations

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V

from cubind.core.system._device_utils import _choice
from cubind.core.system.typing import InforomObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cubind.core.system._device import Device


_INFOROM_OBJECT_MAPPING = {
    InforomObject.OEM: V.INFOROM_OEM,
    InforomObject.ECC: V.INFOROM_ECC,
    InforomObject.POWER: V.INFOROM_POWER,
    InforomObject.DEN: V.INFOROM_DEN,
}


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
