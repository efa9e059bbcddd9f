"""A device's memory and BAR1 aperture (Device.memory_info, Device.bar1_memory_info)."""

from __future__ import annotations

from cubind.bindings import nvml


class MemoryInfo:
    """A device's memory, in bytes (nvmlDeviceGetMemoryInfo_v2)."""

    def __init__(self, memory_info: nvml.Memory_v2):
        self._memory_info = memory_info

    @property
    def free(self) -> int:
        """Unallocated bytes."""
        return self._memory_info.free

    @property
    def total(self) -> int:
        """Physical bytes."""
        return self._memory_info.total

    @property
    def used(self) -> int:
        """Allocated bytes."""
        return self._memory_info.used

    @property
    def reserved(self) -> int:
        """Bytes the driver and firmware keep."""
        return self._memory_info.reserved


class BAR1MemoryInfo(MemoryInfo):
    """A device's BAR1 aperture, in bytes (nvmlDeviceGetBAR1MemoryInfo)."""

    def __init__(self, memory_info: nvml.BAR1Memory):
        self._memory_info = memory_info

    @property
    def free(self) -> int:
        """Unallocated BAR1 bytes."""
        return self._memory_info.bar1_free

    @property
    def total(self) -> int:
        """BAR1 bytes."""
        return self._memory_info.bar1_total

    @property
    def used(self) -> int:
        """Allocated BAR1 bytes."""
        return self._memory_info.bar1_used
