"""The option dataclasses of managed memory, virtual memory and batched
copies, with cuda.core 1.2's fields and defaults, and their checks."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from cubind.core._host import Host
from cubind.core.typing import (
    ManagedMemoryLocationType,
    _StrEnum as StrEnum,
    VirtualMemoryAccessType,
    VirtualMemoryAllocationType,
    VirtualMemoryGranularityType,
    VirtualMemoryHandleType,
    VirtualMemoryLocationType,
)

TYPE_CHECKING = False  # typing is not imported at run time: the annotations are strings
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CopyOptions",
    "ManagedMemoryResourceOptions",
    "MemcpyOverlapMode",
    "MemcpySrcAccessOrder",
    "VirtualMemoryResourceOptions",
]


@dataclass
class ManagedMemoryResourceOptions:
    """Options of a ManagedMemoryResource's own pool.

    preferred_location: with preferred_location_type None, a device ordinal,
    -1 for the host, or None for no preference. With a type: "device" takes
    an ordinal, "host" takes None, "host_numa" a NUMA node id (or None for
    the current device's host NUMA node)."""

    preferred_location: int | None = None
    preferred_location_type: ManagedMemoryLocationType | str | None = None

    def __post_init__(self):
        from cubind.core._options import _typed

        _typed(self, "preferred_location", int)


def _managed_location(options):
    """(kind, id) of a ManagedMemoryResourceOptions: kind is None (no
    preference), "device", "host" or "host_numa"; id is None where the
    current device's host NUMA node is meant."""
    location, kind = options.preferred_location, options.preferred_location_type
    if location is not None and (isinstance(location, bool) or not isinstance(location, int)):
        raise TypeError(f"preferred_location must be an int or None, not {type(location).__name__}")
    if kind is None:
        if location is None:
            return None, None
        if location == -1:
            return "host", None
        if location < 0:
            raise ValueError(f"preferred_location must be a device ordinal (>= 0), -1 for the host, or None; got {location}")
        return "device", location
    try:
        kind = ManagedMemoryLocationType(kind)
    except ValueError:
        raise ValueError(
            f"preferred_location_type must be one of {[k.value for k in ManagedMemoryLocationType]} or None; got {kind!r}"
        ) from None
    if kind == ManagedMemoryLocationType.DEVICE:
        if location is None or location < 0:
            raise ValueError(f"preferred_location_type 'device' needs preferred_location to be a device ordinal (>= 0); got {location!r}")
        return "device", location
    if kind == ManagedMemoryLocationType.HOST:
        if location is not None:
            raise ValueError(f"preferred_location_type 'host' needs preferred_location to be None; got {location!r}")
        return "host", None
    if location is not None and location < 0:
        raise ValueError(f"preferred_location_type 'host_numa' needs preferred_location to be a NUMA node id (>= 0) or None; got {location!r}")
    return "host_numa", location


@dataclass
class VirtualMemoryResourceOptions:
    """How a VirtualMemoryResource allocates: the kind of physical memory and
    where it lives, the handle it may be exported as, the granularity sizes
    round to, an address hint and alignment, and who may access it (the
    owning location with self_access, each of peers with peer_access; None
    grants nothing)."""

    allocation_type: VirtualMemoryAllocationType = VirtualMemoryAllocationType.PINNED
    location_type: VirtualMemoryLocationType = VirtualMemoryLocationType.DEVICE
    handle_type: VirtualMemoryHandleType | str | None = VirtualMemoryHandleType.POSIX_FD
    granularity: VirtualMemoryGranularityType = VirtualMemoryGranularityType.RECOMMENDED
    gpu_direct_rdma: bool = False
    addr_hint: int | None = 0
    addr_align: int | None = None
    peers: Iterable[int] = field(default_factory=tuple)
    self_access: VirtualMemoryAccessType = VirtualMemoryAccessType.READ_WRITE
    peer_access: VirtualMemoryAccessType = VirtualMemoryAccessType.READ_WRITE


class MemcpySrcAccessOrder(StrEnum):
    """When a batched copy may read its source (CUmemcpySrcAccessOrder):
    STREAM in stream order; DURING_API_CALL before copy_batch returns;
    ANY at any time until the copy completes in stream order."""

    STREAM = "stream"
    DURING_API_CALL = "during_api_call"
    ANY = "any"


class MemcpyOverlapMode(StrEnum):
    """Whether a batched copy should prefer to overlap with compute
    (CUmemcpyFlags); a hint only."""

    DEFAULT = "default"
    PREFER_OVERLAP_WITH_COMPUTE = "prefer_overlap_with_compute"


@dataclasses.dataclass(frozen=True)
class CopyOptions:
    """The attributes of one copy of a batch (CUmemcpyAttributes). The
    location hints (Device, Host or None) matter only for managed memory on
    devices with concurrent managed access and for pageable memory on
    devices that access it; they move nothing. Strings are turned into the
    enums at construction, so a misspelling fails here."""

    src_access_order: MemcpySrcAccessOrder | str = "stream"
    src_location_hint: Any = None
    dst_location_hint: Any = None
    overlap_mode: MemcpyOverlapMode | str = "default"

    def __post_init__(self):
        for name, enum_type in (("src_access_order", MemcpySrcAccessOrder), ("overlap_mode", MemcpyOverlapMode)):
            value = getattr(self, name)
            if not isinstance(value, enum_type):
                try:
                    object.__setattr__(self, name, enum_type(value))
                except (ValueError, TypeError) as error:
                    raise ValueError(f"invalid {name}: {value!r}") from error

