"""String enums of cubind.core, as in cuda.core.typing: each member is also
its string value, so either may be passed where one is expected."""

from __future__ import annotations

import enum

try:
    from enum import StrEnum
except ImportError:  # Python < 3.11

    class StrEnum(str, enum.Enum):  # type: ignore[no-redef]
        def __str__(self) -> str:
            return str(self.value)


__all__ = [
    "ManagedMemoryLocationType",
    "VirtualMemoryAccessType",
    "VirtualMemoryAllocationType",
    "VirtualMemoryGranularityType",
    "VirtualMemoryHandleType",
    "VirtualMemoryLocationType",
]


class ManagedMemoryLocationType(StrEnum):
    """What a managed pool's preferred location names: a device, the host,
    or a host NUMA node."""

    DEVICE = "device"
    HOST = "host"
    HOST_NUMA = "host_numa"


class VirtualMemoryHandleType(StrEnum):
    """The OS handle a virtual memory allocation may be exported as
    (CUmemAllocationHandleType)."""

    POSIX_FD = "posix_fd"
    WIN32_KMT = "win32_kmt"
    FABRIC = "fabric"


class VirtualMemoryLocationType(StrEnum):
    """Where a virtual memory allocation's physical memory lives
    (CUmemLocationType)."""

    DEVICE = "device"
    HOST = "host"
    HOST_NUMA = "host_numa"
    HOST_NUMA_CURRENT = "host_numa_current"


class VirtualMemoryGranularityType(StrEnum):
    """Which granularity sizes are rounded to
    (CUmemAllocationGranularity_flags)."""

    MINIMUM = "minimum"
    RECOMMENDED = "recommended"


class VirtualMemoryAccessType(StrEnum):
    """Access rights of a mapping (CUmemAccess_flags)."""

    READ_WRITE = "rw"
    READ = "r"


class VirtualMemoryAllocationType(StrEnum):
    """The kind of physical memory (CUmemAllocationType); managed needs CUDA 13."""

    PINNED = "pinned"
    MANAGED = "managed"
