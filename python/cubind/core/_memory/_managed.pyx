# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Managed memory: ManagedMemoryResource (a managed memory pool),
# ManagedBuffer (its buffers, with prefetch, discard and advice), the Host
# location, and the batched prefetch and discard of cubind.core.utils.

from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr, static_pointer_cast
from libcpp.utility cimport move
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp
from cubind.core._device cimport _Device as Device, _device_count, _device_ordinal
from cubind.core._errors cimport _raw_handle
from cubind.core._memory._buffer cimport _allocate, Buffer, MemoryResource
from cubind.core._stream cimport _stream_handle

import collections.abc
from collections.abc import MutableSet as _ManagedMutableSet
from cubind.core._errors import CUDAError
from cubind.core._host import Host
from cubind.core._memory._memory_pool import _PoolAttributes
from cubind.core._memory_options import _managed_location, ManagedMemoryResourceOptions
from cubind.core.typing import ManagedMemoryLocationType


# CUmemLocationType, CUmem_advise and CUmem_range_attribute values (cuda.h, CUDA 13.0).
DEF _LOC_NONE = 0


DEF _LOC_DEVICE = 1


DEF _LOC_HOST = 2


DEF _LOC_HOST_NUMA = 3


DEF _LOC_HOST_NUMA_CURRENT = 4


DEF _SET_READ_MOSTLY = 1


DEF _UNSET_READ_MOSTLY = 2


DEF _SET_PREFERRED = 3


DEF _UNSET_PREFERRED = 4


DEF _SET_ACCESSED_BY = 5


DEF _UNSET_ACCESSED_BY = 6


DEF _ATTR_READ_MOSTLY = 1


DEF _ATTR_PREFERRED_TYPE = 5


DEF _ATTR_PREFERRED_ID = 6


cdef tuple _location_arg(location, str where):
    # (CUmemLocationType, id) of a Device or Host.
    if isinstance(location, Device):
        return (_LOC_DEVICE, (<object>location)._id)
    if isinstance(location, Host):
        if location.is_numa_current:
            return (_LOC_HOST_NUMA_CURRENT, 0)
        if location.numa_id is not None:
            return (_LOC_HOST_NUMA, location.numa_id)
        return (_LOC_HOST, 0)
    if location is None:
        raise ValueError(f"{where}: location is required")
    raise TypeError(f"{where}: location must be a Device, Host, or None; got {type(location).__name__}")


cdef object _location_object(int kind, int ident):
    if kind == _LOC_DEVICE:
        return Device(ident)
    if kind == _LOC_HOST:
        return Host()
    if kind == _LOC_HOST_NUMA:
        return Host(numa_id=ident)
    if kind == _LOC_HOST_NUMA_CURRENT:
        return Host.numa_current()
    return None


cdef int _managed_open(Buffer buffer) except -1:
    if buffer.is_closed:
        raise RuntimeError("Buffer has been closed")
    return 0


cdef int _advise(Buffer buffer, int advice, location, str where) except -1:
    cdef int kind = _LOC_NONE
    cdef int ident = 0
    cdef uintptr_t ptr = buffer._ptr
    cdef size_t size = buffer._size
    _managed_open(buffer)
    if location is not None:
        kind, ident = _location_arg(location, where)
    with nogil:
        cpp.managed_advise(ptr, size, advice, kind, ident)
    return 0


cdef int _range_attribute(Buffer buffer, int attribute) except? -3:
    cdef uintptr_t ptr = buffer._ptr
    cdef size_t size = buffer._size
    cdef int value
    _managed_open(buffer)
    with nogil:
        value = cpp.managed_range_attribute(ptr, size, attribute)
    return value


cdef list _accessed_by(Buffer buffer):
    cdef uintptr_t ptr = buffer._ptr
    cdef size_t size = buffer._size
    cdef size_t slots
    cdef vector[int] found
    _managed_open(buffer)
    slots = _device_count() + 1
    with nogil:
        found = cpp.managed_accessed_by(ptr, size, slots)
    return [Host() if v == -1 else Device(v) for v in found]


class AccessedBySetProxy(_ManagedMutableSet):
    """The locations a ManagedBuffer is advised as accessed by, read from the
    driver at every use (cuMemRangeGetAttribute); add and discard advise
    (cuMemAdvise). The driver reports the host as Host(), whatever NUMA node
    was named."""

    __slots__ = ("_buf",)

    def __init__(self, buf):
        self._buf = buf

    @classmethod
    def _from_iterable(cls, it):
        return set(it)

    def __contains__(self, location):
        if not isinstance(location, (Device, Host)):
            return False
        return location in _accessed_by(self._buf)

    def __iter__(self):
        return iter(_accessed_by(self._buf))

    def __len__(self):
        return len(_accessed_by(self._buf))

    def add(self, location):
        if not isinstance(location, (Device, Host)):
            raise TypeError(f"expected Device or Host, got {type(location).__name__}")
        _advise(self._buf, _SET_ACCESSED_BY, location, "accessed_by.add")

    def discard(self, location):
        if not isinstance(location, (Device, Host)):
            return
        if isinstance(location, Host) and (location.numa_id is not None or location.is_numa_current):
            return  # never in the set
        _advise(self._buf, _UNSET_ACCESSED_BY, location, "accessed_by.discard")

    def __repr__(self):
        return f"AccessedBySetProxy({set(_accessed_by(self._buf))!r})"


cdef class ManagedBuffer(Buffer):
    """Managed (unified) memory: what ManagedMemoryResource.allocate returns,
    or ManagedBuffer.from_handle over managed memory from elsewhere. Advice
    as properties (read_mostly, preferred_location, accessed_by, read back
    from the driver), and prefetch, discard and discard_prefetch on a stream."""

    @classmethod
    def from_handle(cls, ptr, size, mr=None, owner=None, *, stream=None):
        """A ManagedBuffer over managed memory allocated elsewhere (see Buffer.from_handle)."""
        cdef Buffer plain = Buffer.from_handle(ptr, size, mr, owner, stream=stream)
        cdef ManagedBuffer self = ManagedBuffer.__new__(ManagedBuffer)
        self._ptr, self._size, self._mr, self._owner, self._stream = plain._ptr, plain._size, plain._mr, plain._owner, plain._stream
        plain._ptr, plain._size, plain._mr = 0, 0, None
        return self

    @property
    def is_managed(self):
        return True

    @property
    def read_mostly(self):
        """Whether the read-mostly advice is set (CU_MEM_ADVISE_SET_READ_MOSTLY)."""
        return _range_attribute(self, _ATTR_READ_MOSTLY) != 0

    @read_mostly.setter
    def read_mostly(self, value):
        # The driver ignores the location of this advice but refuses one of
        # no type: the current device is given.
        _advise(self, _SET_READ_MOSTLY if value else _UNSET_READ_MOSTLY, Device(), "read_mostly")

    @property
    def preferred_location(self):
        """The advised preferred location (a Device or Host), or None."""
        cdef int kind = _range_attribute(self, _ATTR_PREFERRED_TYPE)
        cdef int ident = _range_attribute(self, _ATTR_PREFERRED_ID)
        return _location_object(kind, ident)

    @preferred_location.setter
    def preferred_location(self, value):
        if value is None:
            # As for read_mostly: the location is ignored, one of no type refused.
            _advise(self, _UNSET_PREFERRED, Device(), "preferred_location")
        else:
            _advise(self, _SET_PREFERRED, value, "preferred_location")

    @property
    def accessed_by(self):
        """The devices and host advised as accessing the memory, as a live set."""
        _managed_open(self)
        return AccessedBySetProxy(self)

    @accessed_by.setter
    def accessed_by(self, locations):
        _managed_open(self)
        wanted = set()
        for location in locations:
            if not isinstance(location, (Device, Host)):
                raise TypeError(f"accessed_by entries must be Device or Host, got {type(location).__name__}")
            wanted.add(location)
        for location in wanted:
            if isinstance(location, Host) and (location.numa_id is not None or location.is_numa_current):
                kind = "host_numa_current" if location.is_numa_current else "host_numa"
                raise ValueError(f"advise CU_MEM_ADVISE_SET_ACCESSED_BY does not support location_type='{kind}'")
        current = set(_accessed_by(self))
        for location in current - wanted:
            _advise(self, _UNSET_ACCESSED_BY, location, "accessed_by")
        for location in wanted - current:
            _advise(self, _SET_ACCESSED_BY, location, "accessed_by")

    def prefetch(self, location, *, stream):
        """Migrates the memory to location (a Device or Host), ordered on
        stream (cuMemPrefetchAsync)."""
        cdef cpp.CUstream handle = _stream_handle(stream)
        cdef uintptr_t ptr = self._ptr
        cdef size_t size = self._size
        cdef int kind, ident
        _managed_open(self)
        kind, ident = _location_arg(location, "ManagedBuffer.prefetch")
        with nogil:
            cpp.managed_prefetch(ptr, size, kind, ident, handle)

    def discard(self, *, stream):
        """Drops the contents, ordered on stream: the pages are released
        without being copied, and read back undefined (cuMemDiscardBatchAsync)."""
        _managed_batch(1, stream, [self], None, "ManagedBuffer.discard")

    def discard_prefetch(self, location, *, stream):
        """Drops the contents and places fresh pages at location, ordered on
        stream (cuMemDiscardAndPrefetchBatchAsync)."""
        if location is None:
            raise ValueError("ManagedBuffer.discard_prefetch: location is required")
        _managed_batch(2, stream, [self], location, "ManagedBuffer.discard_prefetch")


cdef int _managed_batch(int which, stream, buffers, locations, str where) except -1:
    cdef cpp.CUstream handle = _stream_handle(stream)
    cdef vector[uintptr_t] ptrs
    cdef vector[size_t] sizes
    cdef vector[int] types
    cdef vector[int] ids
    cdef Buffer buffer
    if isinstance(buffers, Buffer) or not isinstance(buffers, collections.abc.Sequence):
        raise TypeError(f"{where}: buffers must be a sequence of Buffers, not {type(buffers).__name__}")
    if len(buffers) == 0:
        raise ValueError(f"{where}: buffers is empty")
    for i, item in enumerate(buffers):
        if not isinstance(item, Buffer):
            raise TypeError(f"{where}: buffers[{i}] must be a Buffer, not {type(item).__name__}")
        buffer = <Buffer>item
        if buffer.is_closed:
            raise RuntimeError(f"{where}: buffers[{i}] has been closed")
        ptrs.push_back(buffer._ptr)
        sizes.push_back(buffer._size)
    if which != 1:
        if isinstance(locations, (Device, Host)):
            locations = [locations]
        elif locations is None or not isinstance(locations, collections.abc.Sequence):
            raise TypeError(f"{where}: locations must be a Device, a Host or a sequence of them, not {type(locations).__name__}")
        elif len(locations) != len(buffers):
            raise ValueError(f"{where}: {len(locations)} locations for {len(buffers)} buffers; "
                             "give one location for all or one per buffer")
        for location in locations:
            kind, ident = _location_arg(location, where)
            types.push_back(kind)
            ids.push_back(ident)
    with nogil:
        cpp.managed_batch(which, ptrs, sizes, types, ids, handle)
    return 0


def _prefetch_batch(stream, buffers, locations):
    _managed_batch(0, stream, buffers, locations, "prefetch_batch")


def _discard_batch(stream, buffers):
    _managed_batch(1, stream, buffers, None, "discard_batch")


def _discard_prefetch_batch(stream, buffers, locations):
    _managed_batch(2, stream, buffers, locations, "discard_prefetch_batch")


cdef class ManagedMemoryResource(MemoryResource):
    """ManagedMemoryResource(options=None)
--

Managed (unified) memory, stream-ordered, from a managed memory pool
    (CUDA 13: cuMemAllocFromPoolAsync on a pool of allocation type managed).
    Without options, the driver's current managed pool, which the resource
    does not own; with ManagedMemoryResourceOptions, a new pool of its own
    with that preferred location. allocate returns ManagedBuffers."""


    def __dealloc__(self):
        # The driver call of its destructor (an unload, a destroy) may wait
        # on queued work, such as a host callback that needs the GIL.
        with nogil:
            self._pool.reset()

    def __init__(self, options=None):
        cdef int ordinal
        cdef int kind = _LOC_NONE
        cdef int ident = 0
        if options is None:
            ordinal = Device()._id
            with nogil:
                self._pool = cpp.managed_pool_current(ordinal)
            self._preferred = None
        else:
            if isinstance(options, dict):
                options = ManagedMemoryResourceOptions(**options)
            elif not isinstance(options, ManagedMemoryResourceOptions):
                raise TypeError(
                    f"options must be a ManagedMemoryResourceOptions, a dict or None, not {type(options).__name__}"
                )
            where, location = _managed_location(options)
            if where == "host_numa" and location is None:
                location = Device().properties.host_numa_id
                if location < 0:
                    raise RuntimeError("ManagedMemoryResource: the current device reports no host NUMA node; "
                                       "give preferred_location")
            if where == "device":
                ordinal = _device_ordinal(location)
                kind, ident = _LOC_DEVICE, ordinal
            else:
                ordinal = Device()._id
                if where == "host":
                    kind = _LOC_HOST
                elif where == "host_numa":
                    kind, ident = _LOC_HOST_NUMA, location
            with nogil:
                self._pool = shared_ptr[cpp.ManagedMemoryResource](cpp.managed_pool_new(ordinal, kind, ident))
            self._preferred = None if where is None else (ManagedMemoryLocationType(where),
                                                          None if where == "host" else ident)
        self._cpp = static_pointer_cast[cpp.MemoryResource, cpp.ManagedMemoryResource](self._pool)

    cdef int _ensure(self) except -1:
        if not self._pool:
            raise RuntimeError("ManagedMemoryResource has been closed")
        return 0

    def allocate(self, size, *, stream):
        """A ManagedBuffer of size bytes, allocated in order on stream."""
        cdef Buffer plain = _allocate(self, size, stream)
        cdef ManagedBuffer buffer = ManagedBuffer.__new__(ManagedBuffer)
        buffer._cpp = move(plain._cpp)
        buffer._ptr, buffer._size, buffer._mr, buffer._stream = plain._ptr, plain._size, plain._mr, plain._stream
        plain._ptr, plain._size, plain._mr = 0, 0, None
        return buffer

    def close(self):
        """Lets go of the pool: one of its own is destroyed once its buffers are."""
        self._pool = shared_ptr[cpp.ManagedMemoryResource]()
        self._cpp = shared_ptr[cpp.MemoryResource]()

    @property
    def is_closed(self):
        return not self._pool

    @property
    def handle(self):
        """The CUmemoryPool (cubind.bindings.driver.CUmemoryPool)."""
        self._ensure()
        return _raw_handle("driver", "CUmemoryPool", <uintptr_t>self._pool.get().handle())

    @property
    def is_handle_owned(self):
        self._ensure()
        return self._pool.get().owns_pool()

    @property
    def is_ipc_enabled(self):
        return False

    @property
    def is_mapped(self):
        return False

    @property
    def attributes(self):
        return _ManagedPoolAttributes(self)

    def _pool_query(self, int which):
        # The pool's counters, read through cubind.bindings.
        from cubind.bindings import driver as _driver
        attribute = (_driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                     _driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                     _driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_USED_MEM_CURRENT)[which]
        status, value = _driver.cuMemPoolGetAttribute(self.handle, attribute)
        if status != 0:
            raise CUDAError(f"cuMemPoolGetAttribute failed: {status!r}")
        return int(value)

    @property
    def device_id(self):
        """The preferred device's ordinal, or -1 where the preferred location is no device."""
        if self._preferred is not None and self._preferred[0] == "device":
            return self._preferred[1]
        return -1

    @property
    def preferred_location(self):
        """None (no preference), or (type, id): ("device", ordinal),
        ("host", None) or ("host_numa", node)."""
        return self._preferred

    @property
    def is_device_accessible(self):
        return True

    @property
    def is_host_accessible(self):
        return True

    @property
    def is_managed(self):
        return True

    @property
    def uuid(self):
        return None


class _ManagedPoolAttributes(_PoolAttributes):
    """What a ManagedMemoryResource's pool reports (cuMemPoolGetAttribute)."""
