"""Pending TPC and channel repairs (Device.repair_status)."""

from __future__ import annotations

from cubind.bindings import nvml


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
