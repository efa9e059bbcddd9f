# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Managed memory: ManagedMemoryResource (a managed memory pool),
# ManagedBuffer (its buffers, with prefetch, discard and advice), the Host
# location, and the batched prefetch and discard of cubind.core.utils.

from cpython.object cimport PyTypeObject
from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr, static_pointer_cast
from libcpp.vector cimport vector

cimport cython
cimport cubind.core._cpp as cpp
from cubind.core._device cimport _Device as Device, _device_count, _device_ordinal
from cubind.core._errors cimport _raw_handle
from cubind.core._memory._buffer cimport _allocate_into, Buffer, MemoryResource
from cubind.core._stream cimport _stream_handle

import collections.abc
from collections.abc import MutableSet as _ManagedMutableSet
from cubind.core._errors import CUDAError
from cubind.core._host import Host
from cubind.core._memory._memory_pool import _PoolAttributes
from cubind.core._memory_options import _managed_location, ManagedMemoryResourceOptions
from cubind.core.typing import ManagedMemoryLocationType


cdef cpp.CUmemLocation _memory_location(location, str where, bint required) except *:
    # The one conversion of a location to the driver's CUmemLocation: a
    # Device, a Host, or None, which is refused where a location is
    # required and is a location of no type elsewhere.
    cdef cpp.CUmemLocation out
    out.type = cpp.CU_MEM_LOCATION_TYPE_INVALID
    out.id = 0
    if isinstance(location, Device):
        out.type = cpp.CU_MEM_LOCATION_TYPE_DEVICE
        out.id = (<object>location)._id
    elif isinstance(location, Host):
        if location.is_numa_current:
            out.type = cpp.CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT
        elif location.numa_id is not None:
            out.type = cpp.CU_MEM_LOCATION_TYPE_HOST_NUMA
            out.id = location.numa_id
        else:
            out.type = cpp.CU_MEM_LOCATION_TYPE_HOST
    elif location is None:
        if required:
            raise ValueError(f"{where}: location is required")
    else:
        raise TypeError(f"{where}: location must be a Device, Host, or None; got {type(location).__name__}")
    return out


cdef object _location_object(int kind, int ident):
    if kind == cpp.CU_MEM_LOCATION_TYPE_DEVICE:
        return Device(ident)
    if kind == cpp.CU_MEM_LOCATION_TYPE_HOST:
        return Host()
    if kind == cpp.CU_MEM_LOCATION_TYPE_HOST_NUMA:
        return Host(numa_id=ident)
    if kind == cpp.CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        return Host.numa_current()
    return None


cdef inline cpp.ManagedRange _range(Buffer buffer):
    cdef cpp.ManagedRange out
    out.ptr = buffer._ptr
    out.size = buffer._size
    return out


cdef int _managed_open(Buffer buffer) except -1:
    if buffer.is_closed:
        raise RuntimeError("Buffer has been closed")
    return 0


cdef int _advise(Buffer buffer, cpp.CUmem_advise advice, location, str where) except -1:
    cdef cpp.CUmemLocation target
    cdef cpp.ManagedRange range_
    _managed_open(buffer)
    target = _memory_location(location, where, False)
    range_ = _range(buffer)
    with nogil:
        cpp.advise(range_, advice, target)
    return 0


cdef int _range_attribute(Buffer buffer, cpp.CUmem_range_attribute attribute) except? -3:
    cdef cpp.ManagedRange range_
    cdef int value
    _managed_open(buffer)
    range_ = _range(buffer)
    with nogil:
        value = cpp.range_attribute(range_, attribute)
    return value


cdef list _accessed_by(Buffer buffer):
    cdef cpp.ManagedRange range_
    cdef size_t slots
    cdef vector[int] found
    _managed_open(buffer)
    range_ = _range(buffer)
    slots = _device_count() + 1
    with nogil:
        found = cpp.range_accessed_by(range_, slots)
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
        _advise(self._buf, cpp.CU_MEM_ADVISE_SET_ACCESSED_BY, location, "accessed_by.add")

    def discard(self, location):
        if not isinstance(location, (Device, Host)):
            return
        if isinstance(location, Host) and (location.numa_id is not None or location.is_numa_current):
            return  # never in the set
        _advise(self._buf, cpp.CU_MEM_ADVISE_UNSET_ACCESSED_BY, location, "accessed_by.discard")

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

    # Its own close, for the reason Buffer.close gives.
    @cython.binding(False)
    def close(self, stream=None):
        """Returns the memory to its resource, ordered on stream (or on the
        allocation or deallocation stream); the Buffer is closed after."""
        self._close(stream)

    @property
    def is_managed(self):
        return True

    @property
    def read_mostly(self):
        """Whether the read-mostly advice is set (CU_MEM_ADVISE_SET_READ_MOSTLY)."""
        return _range_attribute(self, cpp.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY) != 0

    @read_mostly.setter
    def read_mostly(self, value):
        # The driver ignores the location of this advice but refuses one of
        # no type: the current device is given.
        _advise(self, cpp.CU_MEM_ADVISE_SET_READ_MOSTLY if value else cpp.CU_MEM_ADVISE_UNSET_READ_MOSTLY, Device(), "read_mostly")

    @property
    def preferred_location(self):
        """The advised preferred location (a Device or Host), or None."""
        cdef int kind = _range_attribute(self, cpp.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE)
        cdef int ident = _range_attribute(self, cpp.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID)
        return _location_object(kind, ident)

    @preferred_location.setter
    def preferred_location(self, value):
        if value is None:
            # As for read_mostly: the location is ignored, one of no type refused.
            _advise(self, cpp.CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, Device(), "preferred_location")
        else:
            _advise(self, cpp.CU_MEM_ADVISE_SET_PREFERRED_LOCATION, value, "preferred_location")

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
            _advise(self, cpp.CU_MEM_ADVISE_UNSET_ACCESSED_BY, location, "accessed_by")
        for location in wanted - current:
            _advise(self, cpp.CU_MEM_ADVISE_SET_ACCESSED_BY, location, "accessed_by")

    def prefetch(self, location, *, stream):
        """Migrates the memory to location (a Device or Host), ordered on
        stream (cuMemPrefetchAsync)."""
        cdef cpp.CUstream handle = _stream_handle(stream)
        cdef cpp.ManagedRange range_
        cdef cpp.CUmemLocation target
        _managed_open(self)
        target = _memory_location(location, "ManagedBuffer.prefetch", True)
        range_ = _range(self)
        with nogil:
            cpp.prefetch(range_, target, cpp.StreamRef(handle))

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


# ManagedBuffer adds no field and no __dealloc__, so Buffer's deallocator
# frees it whole. The one Cython writes for a subclass takes the object off
# the collector's list, puts it back and calls Buffer's, which takes it off
# again: once per allocate + close.
if ManagedBuffer.__basicsize__ == Buffer.__basicsize__:
    (<PyTypeObject*>ManagedBuffer).tp_dealloc = (<PyTypeObject*>Buffer).tp_dealloc


cdef int _managed_batch(int which, stream, buffers, locations, str where) except -1:
    cdef cpp.CUstream handle = _stream_handle(stream)
    cdef vector[cpp.ManagedRange] ranges
    cdef vector[cpp.CUmemLocation] targets
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
        ranges.push_back(_range(buffer))
    if which != 1:
        if isinstance(locations, (Device, Host)):
            locations = [locations]
        elif locations is None or not isinstance(locations, collections.abc.Sequence):
            raise TypeError(f"{where}: locations must be a Device, a Host or a sequence of them, not {type(locations).__name__}")
        elif len(locations) != len(buffers):
            raise ValueError(f"{where}: {len(locations)} locations for {len(buffers)} buffers; "
                             "give one location for all or one per buffer")
        for location in locations:
            targets.push_back(_memory_location(location, where, True))
    with nogil:
        if which == 0:
            cpp.prefetch_batch(ranges, targets, cpp.StreamRef(handle))
        elif which == 1:
            cpp.discard_batch(ranges, cpp.StreamRef(handle))
        else:
            cpp.discard_prefetch_batch(ranges, targets, cpp.StreamRef(handle))
    return 0


def _prefetch_batch(stream, buffers, locations):
    _managed_batch(0, stream, buffers, locations, "prefetch_batch")


def _discard_batch(stream, buffers):
    _managed_batch(1, stream, buffers, None, "discard_batch")


def _discard_prefetch_batch(stream, buffers, locations):
    _managed_batch(2, stream, buffers, locations, "discard_prefetch_batch")


cdef cpp.ManagedMemoryResourceOptions _managed_options(preferred) except *:
    # The one conversion to the core's ManagedMemoryResourceOptions, from the
    # preferred location that _managed_location checked (a Device, a Host or
    # None).
    cdef cpp.ManagedMemoryResourceOptions out
    if preferred is not None:
        out.preferred_location = _memory_location(preferred, "ManagedMemoryResource", True)
    return out


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
        cdef cpp.ManagedMemoryResourceOptions pool_options
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
                location = ordinal
                pool_options = _managed_options(Device(ordinal))
            else:
                ordinal = Device()._id
                pool_options = _managed_options(
                    None if where is None else Host() if where == "host" else Host(numa_id=location))
            with nogil:
                self._pool = shared_ptr[cpp.ManagedMemoryResource](cpp.managed_pool_new(ordinal, pool_options))
            self._preferred = None if where is None else (ManagedMemoryLocationType(where),
                                                          None if where == "host" else location)
        self._cpp = static_pointer_cast[cpp.MemoryResource, cpp.ManagedMemoryResource](self._pool)
        # Null where the pool is cuMemAllocManaged (no pool).
        self._direct_pool = self._pool.get().handle()

    cdef int _ensure(self) except -1:
        if not self._pool:
            raise RuntimeError("ManagedMemoryResource has been closed")
        return 0

    def allocate(self, size, *, stream):
        """A ManagedBuffer of size bytes, allocated in order on stream."""
        cdef ManagedBuffer buffer = ManagedBuffer.__new__(ManagedBuffer)
        _allocate_into(buffer, self, size, stream)
        return buffer

    def close(self):
        """Lets go of the pool: one of its own is destroyed once its buffers are."""
        self._pool = shared_ptr[cpp.ManagedMemoryResource]()
        self._cpp = shared_ptr[cpp.MemoryResource]()
        self._direct_pool = NULL

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
