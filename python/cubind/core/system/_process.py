"""Processes with a compute context on a device (Device.compute_running_processes)."""

from __future__ import annotations

from cubind.bindings import nvml


TYPE_CHECKING = False
if TYPE_CHECKING:
    from cubind.core.system._device import Device


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
