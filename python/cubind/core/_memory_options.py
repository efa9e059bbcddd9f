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


# The driver's values (cuda.h, CUDA 13.0).
_ALLOCATION_TYPES = {"pinned": 1, "managed": 2}
_LOCATION_TYPES = {"device": 1, "host": 2, "host_numa": 3, "host_numa_current": 4}
_HANDLE_TYPES = {None: 0, "posix_fd": 1, "win32_kmt": 4, "fabric": 8}
_GRANULARITIES = {"minimum": 0, "recommended": 1}
_ACCESS = {None: 0, "r": 1, "rw": 3}
HOST_LOCATION_TYPES = frozenset({"host", "host_numa", "host_numa_current"})


def _lookup(table, value, what):
    key = value.value if isinstance(value, StrEnum) else value
    try:
        return table[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unsupported {what}: {value!r}") from None


def _virtual_memory_settings(config):
    """The driver values of a VirtualMemoryResourceOptions, checked: a dict
    of allocation_type, location_type, handle_type, granularity,
    gpu_direct_rdma, addr_hint, addr_align, peers, self_access, peer_access."""
    if config.handle_type == "win32":
        raise NotImplementedError("handle_type 'win32' is not supported; use 'win32_kmt' on Windows")
    settings = {
        "allocation_type": _lookup(_ALLOCATION_TYPES, config.allocation_type, "allocation_type"),
        "location_type": _lookup(_LOCATION_TYPES, config.location_type, "location_type"),
        "handle_type": _lookup(_HANDLE_TYPES, config.handle_type, "handle_type"),
        "granularity": _lookup(_GRANULARITIES, config.granularity, "granularity"),
        "self_access": _lookup(_ACCESS, config.self_access, "access spec"),
        "peer_access": _lookup(_ACCESS, config.peer_access, "access spec"),
        "gpu_direct_rdma": bool(config.gpu_direct_rdma),
    }
    hint = 0 if config.addr_hint is None else config.addr_hint
    align = 0 if config.addr_align is None else config.addr_align
    for name, value in (("addr_hint", hint), ("addr_align", align)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"VirtualMemoryResourceOptions.{name} must be an int >= 0 or None, not {value!r}")
    if align & (align - 1):
        raise ValueError(f"VirtualMemoryResourceOptions.addr_align is {align}; it must be a power of two")
    peers = []
    for peer in config.peers:
        ordinal = getattr(peer, "device_id", peer)
        if isinstance(ordinal, bool) or not isinstance(ordinal, int) or ordinal < 0:
            raise ValueError(f"VirtualMemoryResourceOptions.peers holds {peer!r}; expected device ordinals")
        peers.append(ordinal)
    settings.update(addr_hint=hint, addr_align=align, peers=peers)
    return settings


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


_SRC_ACCESS_ORDER = {"stream": 1, "during_api_call": 2, "any": 3}
_OVERLAP_MODE = {"default": 0, "prefer_overlap_with_compute": 1}
