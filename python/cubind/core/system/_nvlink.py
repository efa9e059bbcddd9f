"""A device's NVLinks (Device.get_nvlink)."""

from __future__ import annotations

import warnings

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V

from cubind.core.system._device_utils import _enabled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cubind.core.system._device import Device


_NVLINK_VERSION_MAPPING = V.NVLINK_VERSIONS


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
