"""Host: the CPU side as a location for managed-memory operations."""

from __future__ import annotations

import threading

__all__ = ["Host"]


class Host:
    """Host(numa_id=None, *, is_numa_current=False)

    The host as a location for managed memory (prefetch, discard_prefetch,
    preferred_location, accessed_by), beside Device: Host() is any NUMA
    node, Host(numa_id=N) node N, Host.numa_current() the calling thread's
    node. One instance per distinct value, so Host() is Host()."""

    __slots__ = ("__weakref__", "_is_numa_current", "_numa_id")

    _made: dict = {}
    _lock = threading.Lock()

    def __new__(cls, numa_id: int | None = None, *, is_numa_current: bool = False) -> Host:
        if is_numa_current and numa_id is not None:
            raise ValueError("numa_id and is_numa_current are mutually exclusive")
        if numa_id is not None and (isinstance(numa_id, bool) or not isinstance(numa_id, int) or numa_id < 0):
            raise ValueError(f"numa_id must be a non-negative int, got {numa_id!r}")
        key = (numa_id, bool(is_numa_current))
        made = cls._made.get(key)
        if made is None:
            with cls._lock:
                made = cls._made.get(key)
                if made is None:
                    made = object.__new__(cls)
                    made._numa_id = numa_id
                    made._is_numa_current = bool(is_numa_current)
                    cls._made[key] = made
        return made

    @property
    def numa_id(self) -> int | None:
        """The NUMA node, or None when the location is not one node."""
        return self._numa_id

    @property
    def is_numa_current(self) -> bool:
        """True for the calling thread's NUMA node (Host.numa_current())."""
        return self._is_numa_current

    @classmethod
    def numa_current(cls) -> Host:
        """The NUMA node of the calling thread."""
        return cls(is_numa_current=True)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Host):
            return NotImplemented
        return self is other

    def __hash__(self) -> int:
        return hash((Host, self._numa_id, self._is_numa_current))

    def __reduce__(self):
        if self._is_numa_current:
            return (Host.numa_current, ())
        return (Host, (self._numa_id,))

    def __repr__(self) -> str:
        if self._is_numa_current:
            return "Host.numa_current()"
        return "Host()" if self._numa_id is None else f"Host(numa_id={self._numa_id})"
