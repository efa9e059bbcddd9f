"""A device's Multi-Instance GPU state (Device.mig)."""

from __future__ import annotations

from typing import Iterable

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V

from cubind.core.system._device_utils import _device_from_handle, _enabled, _unsigned

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cubind.core.system._device import Device


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
        state = V.FEATURE_ENABLED if mode else V.FEATURE_DISABLED
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
